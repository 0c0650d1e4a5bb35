/*
 * arch_posix_run_on_stack(top, fn, arg): the POSIX personality's way to
 * leave a stack for good (userland/posix/thread.c, a thread's end).
 *
 * Sets sp = top (8-byte aligned, the stack's first byte above it, as the
 * AAPCS wants at a public interface) and calls fn(arg) there.  fn never
 * returns; if it did, the undefined instruction faults rather than run on.
 * Nothing of the old stack is read after sp moves, so its memory may be
 * freed and reused while fn runs.
 *
 * In:  r0 = top, r1 = fn, r2 = arg.  Does not return.
 */
    .syntax unified
    .arm
    .text
    .global arch_posix_run_on_stack
    .type arch_posix_run_on_stack, %function
arch_posix_run_on_stack:
    mov sp, r0
    mov fp, #0              @ no frame above fn: a backtrace ends here
    mov r0, r2
    blx r1
    udf #0
    .size arch_posix_run_on_stack, . - arch_posix_run_on_stack

    .section .note.GNU-stack, "", %progbits
