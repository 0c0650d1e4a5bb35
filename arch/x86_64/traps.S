/*
 * Exception and interrupt entry.  One 16-byte stub per vector pushes an
 * error code (0 when the CPU pushes none) and the vector, then trap_common
 * saves the general registers as a struct trap_frame (x86.h) and calls
 * x86_trap(frame).  x86_trap() returns only for events the kernel resumes
 * from in place (a fixed-up kernel exception, a spurious or boot-round
 * interrupt); everything else leaves through arch_return_to_user().
 *
 * SWAPGS: GS base must be the kernel's per-core pointer inside the kernel, so
 * an entry from user mode (CS RPL 3) swaps it in, and the return swaps back.
 */
#include <arch/machine.h>

/* Vectors for which the CPU pushes an error code. */
#define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

    .text
    .balign 16
    .global trap_stubs
trap_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if !HAS_ERROR(vec)
    pushq $0
    .endif
    pushq $vec
    jmp trap_common
    .set vec, vec + 1
    .endr

trap_common:
    testb $3, 24(%rsp)              /* CS of the interrupted code, above vector and error */
    jz 1f
    swapgs
1:  pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    cld                             /* the C ABI requires DF clear */
    movq %rsp, %rdi
    call x86_trap
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    testb $3, 24(%rsp)
    jz 2f
    swapgs
2:  addq $16, %rsp                  /* vector and error code */
    iretq

    .section .note.GNU-stack, "", @progbits
