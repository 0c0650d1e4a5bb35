/*
 * __posix_syscall_trap: a Linux system call made by musl's assembly, as a
 * call into the personality (docs/posix-build.md).
 *
 * musl's C code calls __posix_syscall() directly (its syscall_arch.h is
 * patched to).  Its assembly (clone, vfork, syscall_cp, __set_thread_area,
 * the signal restorer) has the number and arguments in registers, so the
 * patch replaces each `syscall` with `call __posix_syscall_trap`, and this
 * trampoline turns the Linux convention into the C call
 *     long __posix_syscall(long n, long a, long b, long c, long d, long e, long f).
 *
 * In:  rax = n, rdi = a, rsi = b, rdx = c, r10 = d, r8 = e, r9 = f.
 * Out: rax = the result or -errno.  rcx and r11 may change, as under the
 *      `syscall` instruction; every other general register, xmm0-15 and
 *      rflags are as they were.  The x87 stack is not saved: the System V
 *      ABI has it empty at a call, and no caller in musl holds x87 values.
 *
 * The stack: the callers are assembly functions that keep nothing below
 * rsp, so the return address the `call` pushes and this frame overwrite
 * nothing live (which is why the process need not be built with
 * -mno-red-zone).  The frame is 16-byte aligned whatever rsp was.
 *
 * clone (SYS_clone, 56) with a new stack S (rsi != 0): the child must
 * resume after the `call` in musl's __clone with rsp = S, rax = 0 and the
 * caller's other registers (__clone's child path reads r9 = fn and pops
 * the argument it stored at S).  The parent's copies are in this frame on
 * the parent's stack, which the child must not touch, so the trap first
 * writes a child frame just below S:
 *     S-8: the return address;  S-104..S-16: r15 r14 r13 r12 rbx rbp
 *                                            r9 r8 r10 rdx rsi rdi
 * and passes b = S - 104 (CLONE_CHILD_FRAME below) to __posix_syscall.
 * The personality's clone then starts the child thread with
 *     rsp = b as received, pc = __posix_trap_clone_child,
 * plus the thread pointer (CLONE_SETTLS) and tid words as the flags ask;
 * no other register of the child matters.  __posix_trap_clone_child pops
 * the frame, sets rax = 0 and returns, which leaves rsp = S.  The parent
 * returns from the trap as from any call, with the child's tid in rax.
 * xmm registers and rflags are not carried into the child (__clone's
 * child path uses neither).  A clone without a new stack (fork-like) is
 * passed on unchanged.
 *
 * Other calls that Linux returns from twice or never:
 * - rt_sigreturn (15): the restorer passes a = the rsp at which Linux
 *   would find the signal frame; the personality resumes the saved
 *   context itself and never returns here.
 * - vfork (58): the child would return through this frame on the parent's
 *   stack and overwrite it; serve it as fork, or refuse it.
 * - exit (60) never returns.
 */
#define SYS_clone 56
#define CLONE_CHILD_FRAME (13 * 8)

    .text
    .global __posix_syscall_trap
    .type __posix_syscall_trap, @function
__posix_syscall_trap:
    pushfq
    push %rbp
    mov %rsp, %rbp
    push %rdi
    push %rsi
    push %rdx
    push %r10
    push %r8
    push %r9
    cmp $SYS_clone, %rax
    jne 1f
    test %rsi, %rsi
    jz 1f
    /* the child frame below the new stack (header comment); rcx, r11 are free */
    mov 16(%rbp), %rcx
    mov %rcx, -8(%rsi)
    mov %rdi, -16(%rsi)
    mov %rsi, -24(%rsi)
    mov %rdx, -32(%rsi)
    mov %r10, -40(%rsi)
    mov %r8, -48(%rsi)
    mov %r9, -56(%rsi)
    mov 0(%rbp), %rcx
    mov %rcx, -64(%rsi)
    mov %rbx, -72(%rsi)
    mov %r12, -80(%rsi)
    mov %r13, -88(%rsi)
    mov %r14, -96(%rsi)
    mov %r15, -104(%rsi)
    sub $CLONE_CHILD_FRAME, %rsi
1:
    and $-16, %rsp
    sub $256, %rsp
    movaps %xmm0, 0(%rsp)
    movaps %xmm1, 16(%rsp)
    movaps %xmm2, 32(%rsp)
    movaps %xmm3, 48(%rsp)
    movaps %xmm4, 64(%rsp)
    movaps %xmm5, 80(%rsp)
    movaps %xmm6, 96(%rsp)
    movaps %xmm7, 112(%rsp)
    movaps %xmm8, 128(%rsp)
    movaps %xmm9, 144(%rsp)
    movaps %xmm10, 160(%rsp)
    movaps %xmm11, 176(%rsp)
    movaps %xmm12, 192(%rsp)
    movaps %xmm13, 208(%rsp)
    movaps %xmm14, 224(%rsp)
    movaps %xmm15, 240(%rsp)
    /* f goes on the stack; the pad keeps rsp 16-byte aligned at the call */
    sub $8, %rsp
    push %r9
    mov %r8, %r9
    mov %r10, %r8
    mov %rdx, %rcx
    mov %rsi, %rdx
    mov %rdi, %rsi
    mov %rax, %rdi
    cld                             /* the C ABI's direction flag; popfq restores the caller's */
    call __posix_syscall
    add $16, %rsp
    movaps 0(%rsp), %xmm0
    movaps 16(%rsp), %xmm1
    movaps 32(%rsp), %xmm2
    movaps 48(%rsp), %xmm3
    movaps 64(%rsp), %xmm4
    movaps 80(%rsp), %xmm5
    movaps 96(%rsp), %xmm6
    movaps 112(%rsp), %xmm7
    movaps 128(%rsp), %xmm8
    movaps 144(%rsp), %xmm9
    movaps 160(%rsp), %xmm10
    movaps 176(%rsp), %xmm11
    movaps 192(%rsp), %xmm12
    movaps 208(%rsp), %xmm13
    movaps 224(%rsp), %xmm14
    movaps 240(%rsp), %xmm15
    lea -48(%rbp), %rsp
    pop %r9
    pop %r8
    pop %r10
    pop %rdx
    pop %rsi
    pop %rdi
    pop %rbp
    popfq
    ret
    .size __posix_syscall_trap, . - __posix_syscall_trap

/* Where the personality starts a clone child: rsp = the child frame. */
    .global __posix_trap_clone_child
    .type __posix_trap_clone_child, @function
__posix_trap_clone_child:
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    pop %r9
    pop %r8
    pop %r10
    pop %rdx
    pop %rsi
    pop %rdi
    xor %eax, %eax
    ret
    .size __posix_trap_clone_child, . - __posix_trap_clone_child

    .section .note.GNU-stack, "", @progbits
