/*
 * The x87/SSE registers for the FPU tests (thread_state.h).  Assembly, so
 * that no compiler-chosen use of a register comes between the fill and the
 * check.
 */
#define SKIPPED 0x5a5a
#define NONE 0x0f0f

    .text

/* arch_fpu_fill(seed): xmm_i = (seed + i, seed + i); x87 st(7 - i) = seed + 16 + i. */
    .global arch_fpu_fill
arch_fpu_fill:
    .irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    lea \i(%rdi), %rax
    movq %rax, %xmm\i
    punpcklqdq %xmm\i, %xmm\i
    .endr
    fninit
    sub $8, %rsp
    .irp i, 0,1,2,3,4,5,6,7
    lea (16 + \i)(%rdi), %rax
    mov %rax, (%rsp)
    fildq (%rsp)
    .endr
    add $8, %rsp
    ret

/* arch_fpu_check(seed): 0, or 1 + the first register that differs. */
    .global arch_fpu_check
arch_fpu_check:
    .irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    mov $(1 + \i), %ecx
    lea \i(%rdi), %rdx
    movq %xmm\i, %rax
    cmp %rdx, %rax
    jne 1f
    punpckhqdq %xmm\i, %xmm\i
    movq %xmm\i, %rax
    cmp %rdx, %rax
    jne 1f
    .endr
    /* The x87 stack pops in reverse order of the pushes: st(0) was pushed last. */
    sub $64, %rsp
    .irp i, 7,6,5,4,3,2,1,0
    fistpq (8 * \i)(%rsp)
    .endr
    .irp i, 0,1,2,3,4,5,6,7
    mov $(17 + \i), %ecx
    lea (16 + \i)(%rdi), %rdx
    cmp (8 * \i)(%rsp), %rdx
    jne 2f
    .endr
    add $64, %rsp
    xor %eax, %eax
    ret
    /* A register differed (its number is in ecx); the x87 stack is emptied either way. */
1:  fninit
    mov %ecx, %eax
    ret
2:  add $64, %rsp
    mov %ecx, %eax
    ret

    .global arch_fpu_control
arch_fpu_control:
    sub $8, %rsp
    fnstcw (%rsp)
    movzwl (%rsp), %eax
    shl $32, %rax
    stmxcsr (%rsp)
    movl (%rsp), %edx
    or %rdx, %rax
    add $8, %rsp
    ret

    .global arch_fpu_set_control
arch_fpu_set_control:
    sub $8, %rsp
    mov %rdi, (%rsp)
    ldmxcsr (%rsp)
    shr $32, %rdi
    mov %di, (%rsp)
    fldcw (%rsp)
    add $8, %rsp
    ret

/*
 * x87 division of 1 by 0 with the divide-by-zero exception unmasked (FCW
 * bit 2 clear): the exception is pending after FDIV, and the next waiting
 * instruction, FWAIT at arch_fault_fpu_at, raises #MF (CR0.NE).  The resume
 * path clears it (FNINIT waits for nothing).
 */
    .global arch_fault_fpu, arch_fault_fpu_at, arch_fault_fpu_resume
arch_fault_fpu:
    sub $8, %rsp
    fninit
    movw $0x037b, (%rsp)
    fldcw (%rsp)
    movq $0, (%rsp)
    fld1
    fdivl (%rsp)
arch_fault_fpu_at:
    fwait
    fninit
    add $8, %rsp
    xor %eax, %eax
    ret
arch_fault_fpu_resume:
    fninit
    add $8, %rsp
    mov $SKIPPED, %eax
    ret

/*
 * SSE division of 1 by 0 with the divide-by-zero exception unmasked
 * (MXCSR bit 9 clear): #XM at arch_fault_simd_at, on a CPU that raises it.
 * Returns ARCH_FAULT_NONE where the division completes instead.  The resume
 * path masks the exception again.
 */
    .global arch_fault_simd, arch_fault_simd_at, arch_fault_simd_resume
arch_fault_simd:
    sub $8, %rsp
    movl $0x1d80, (%rsp)
    ldmxcsr (%rsp)
    mov $1, %eax
    cvtsi2sd %eax, %xmm0
    xorpd %xmm1, %xmm1
arch_fault_simd_at:
    divsd %xmm1, %xmm0
    movl $0x1f80, (%rsp)
    ldmxcsr (%rsp)
    add $8, %rsp
    mov $NONE, %eax
    ret
arch_fault_simd_resume:
    movl $0x1f80, (%rsp)
    ldmxcsr (%rsp)
    add $8, %rsp
    mov $SKIPPED, %eax
    ret

    .section .note.GNU-stack, "", @progbits
