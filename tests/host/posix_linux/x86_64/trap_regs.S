/*
 * trap_regs_call (posix_trap_regs.c): every register from trap_regs_before,
 * a call to __posix_syscall_trap with rsp 16-byte aligned or not
 * (trap_regs_misalign), every register into trap_regs_after.  Offsets are
 * those of struct trap_regs (trap_regs.h).
 */
    .text
    .global trap_regs_call
trap_regs_call:
    push %rbx
    push %rbp
    push %r12
    push %r13
    push %r14
    push %r15
    mov trap_regs_misalign(%rip), %rax
    shl $3, %rax
    sub %rax, %rsp
    movdqu trap_regs_before+128(%rip), %xmm0
    movdqu trap_regs_before+144(%rip), %xmm1
    movdqu trap_regs_before+160(%rip), %xmm2
    movdqu trap_regs_before+176(%rip), %xmm3
    movdqu trap_regs_before+192(%rip), %xmm4
    movdqu trap_regs_before+208(%rip), %xmm5
    movdqu trap_regs_before+224(%rip), %xmm6
    movdqu trap_regs_before+240(%rip), %xmm7
    movdqu trap_regs_before+256(%rip), %xmm8
    movdqu trap_regs_before+272(%rip), %xmm9
    movdqu trap_regs_before+288(%rip), %xmm10
    movdqu trap_regs_before+304(%rip), %xmm11
    movdqu trap_regs_before+320(%rip), %xmm12
    movdqu trap_regs_before+336(%rip), %xmm13
    movdqu trap_regs_before+352(%rip), %xmm14
    movdqu trap_regs_before+368(%rip), %xmm15
    mov %rsp, trap_regs_before+56(%rip)
    pushq trap_regs_before+384(%rip)
    popfq
    mov trap_regs_before+0(%rip), %rax
    mov trap_regs_before+8(%rip), %rbx
    mov trap_regs_before+16(%rip), %rcx
    mov trap_regs_before+24(%rip), %rdx
    mov trap_regs_before+32(%rip), %rsi
    mov trap_regs_before+40(%rip), %rdi
    mov trap_regs_before+48(%rip), %rbp
    mov trap_regs_before+64(%rip), %r8
    mov trap_regs_before+72(%rip), %r9
    mov trap_regs_before+80(%rip), %r10
    mov trap_regs_before+88(%rip), %r11
    mov trap_regs_before+96(%rip), %r12
    mov trap_regs_before+104(%rip), %r13
    mov trap_regs_before+112(%rip), %r14
    mov trap_regs_before+120(%rip), %r15
    call __posix_syscall_trap
    pushfq
    popq trap_regs_after+384(%rip)
    mov %rax, trap_regs_after+0(%rip)
    mov %rbx, trap_regs_after+8(%rip)
    mov %rcx, trap_regs_after+16(%rip)
    mov %rdx, trap_regs_after+24(%rip)
    mov %rsi, trap_regs_after+32(%rip)
    mov %rdi, trap_regs_after+40(%rip)
    mov %rbp, trap_regs_after+48(%rip)
    mov %rsp, trap_regs_after+56(%rip)
    mov %r8, trap_regs_after+64(%rip)
    mov %r9, trap_regs_after+72(%rip)
    mov %r10, trap_regs_after+80(%rip)
    mov %r11, trap_regs_after+88(%rip)
    mov %r12, trap_regs_after+96(%rip)
    mov %r13, trap_regs_after+104(%rip)
    mov %r14, trap_regs_after+112(%rip)
    mov %r15, trap_regs_after+120(%rip)
    movdqu %xmm0, trap_regs_after+128(%rip)
    movdqu %xmm1, trap_regs_after+144(%rip)
    movdqu %xmm2, trap_regs_after+160(%rip)
    movdqu %xmm3, trap_regs_after+176(%rip)
    movdqu %xmm4, trap_regs_after+192(%rip)
    movdqu %xmm5, trap_regs_after+208(%rip)
    movdqu %xmm6, trap_regs_after+224(%rip)
    movdqu %xmm7, trap_regs_after+240(%rip)
    movdqu %xmm8, trap_regs_after+256(%rip)
    movdqu %xmm9, trap_regs_after+272(%rip)
    movdqu %xmm10, trap_regs_after+288(%rip)
    movdqu %xmm11, trap_regs_after+304(%rip)
    movdqu %xmm12, trap_regs_after+320(%rip)
    movdqu %xmm13, trap_regs_after+336(%rip)
    movdqu %xmm14, trap_regs_after+352(%rip)
    movdqu %xmm15, trap_regs_after+368(%rip)
    cld                             /* the C ABI's direction flag, set by the test's rflags */
    mov trap_regs_misalign(%rip), %rax
    shl $3, %rax
    add %rax, %rsp
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbp
    pop %rbx
    ret

    .section .note.GNU-stack, "", @progbits
