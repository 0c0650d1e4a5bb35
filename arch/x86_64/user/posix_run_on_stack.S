/*
 * arch_posix_run_on_stack(top, fn, arg): the POSIX personality's way to
 * leave a stack for good (userland/posix/thread.c, a thread's end).
 *
 * Sets rsp = top (16-byte aligned, the stack's first byte above it) and
 * calls fn(arg) there, as the System V ABI calls a function: the return
 * address the call pushes leaves rsp at 8 mod 16 at fn's entry.  fn never
 * returns; if it did, ud2 faults rather than run on.  Nothing of the old
 * stack is read after rsp moves, so its memory may be freed and reused
 * while fn runs.
 *
 * In:  rdi = top, rsi = fn, rdx = arg.  Does not return.
 */
    .text
    .global arch_posix_run_on_stack
    .type arch_posix_run_on_stack, @function
arch_posix_run_on_stack:
    mov %rdi, %rsp
    xor %ebp, %ebp          /* no frame above fn: a backtrace ends here */
    mov %rdx, %rdi
    call *%rsi
    ud2
    .size arch_posix_run_on_stack, . - arch_posix_run_on_stack

    .section .note.GNU-stack, "", @progbits
