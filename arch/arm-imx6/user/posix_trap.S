/*
 * __posix_syscall_trap: a Linux system call made by musl's assembly, as a
 * call into the personality (docs/posix-build.md).
 *
 * musl's C code calls __posix_syscall() directly (its syscall_arch.h is
 * patched to).  Its assembly (clone, vfork, syscall_cp, the signal
 * restorers) has the number and arguments in registers, so the patch
 * replaces each `svc 0` with `bl __posix_syscall_trap`, and this
 * trampoline turns the Linux EABI convention into the C call
 *     long __posix_syscall(long n, long a, long b, long c, long d, long e, long f).
 *
 * In:  r7 = n, r0-r5 = a-f, lr = the return address (`bl` wrote it: each
 *      patched call site keeps its own lr elsewhere first when it is live).
 * Out: r0 = the result or -errno.  r1-r12, sp, lr and the condition flags
 *      are as they were.  The process is soft-float: there is no VFP state
 *      to keep.
 *
 * The stack: 24 bytes of saved registers below the caller's sp, then the
 * frame is realigned to 8 bytes for the AAPCS, whatever the caller's sp.
 *
 * clone (SYS_clone, 120) with a new stack S (r1 != 0): the child must
 * resume after the `bl` in musl's __clone with sp = S, r0 = 0 and the
 * caller's other registers (__clone's child path calls r5 = fn with r6 =
 * arg).  The parent's copies are in this frame on the parent's stack,
 * which the child must not touch, so the trap first writes a child frame
 * just below S:
 *     S-52..S-4: r1 r2 ... r12 lr    (lr = the return address)
 * and passes b = S - 52 (CLONE_CHILD_FRAME below) to __posix_syscall.
 * The personality's clone then starts the child thread with
 *     sp = b as received, pc = __posix_trap_clone_child (ARM state),
 * plus the thread pointer (CLONE_SETTLS: TPIDRURO, which musl reads with
 * mrc) and tid words as the flags ask; no other register of the child
 * matters.  __posix_trap_clone_child sets r0 = 0, pops the frame and
 * returns, which leaves sp = S.  The parent returns from the trap as from
 * any call, with the child's tid in r0.  A clone without a new stack
 * (fork-like) is passed on unchanged.
 *
 * Other calls that Linux returns from twice or never:
 * - sigreturn (119) and rt_sigreturn (173): the restorers pass a = the sp
 *   at which Linux would find the signal frame; the personality resumes
 *   the saved context itself and never returns here.
 * - vfork (190): the child would return through this frame on the
 *   parent's stack and overwrite it; serve it as fork, or refuse it.
 * - exit (1) never returns.
 * - set_tls (0xf0005, ARM-private) sets the thread pointer.
 */
#define SYS_clone 120
#define CLONE_CHILD_FRAME (13 * 4)

    .syntax unified
    .arm
    .text
    .global __posix_syscall_trap
    .type __posix_syscall_trap, %function
__posix_syscall_trap:
    push {r1-r3, r6, r12, lr}
    mrs r12, APSR
    mov r6, sp                      @ callee-saved: survives the C call
    cmp r7, #SYS_clone
    bne 1f
    cmp r1, #0
    beq 1f
    @ the child frame below the new stack (header comment); r6 and r12 hold
    @ scratch values here, so their slots are filled from the saved copies
    stmdb r1, {r1-r12, lr}
    ldr lr, [sp, #12]
    str lr, [r1, #-(CLONE_CHILD_FRAME - 5 * 4)]
    ldr lr, [sp, #16]
    str lr, [r1, #-(CLONE_CHILD_FRAME - 11 * 4)]
    sub r1, r1, #CLONE_CHILD_FRAME
1:
    bic lr, r6, #7
    mov sp, lr
    @ d, e, f are the C call's stack arguments; the flags sit above them
    sub sp, sp, #16
    str r3, [sp]
    str r4, [sp, #4]
    str r5, [sp, #8]
    str r12, [sp, #12]
    mov r3, r2
    mov r2, r1
    mov r1, r0
    mov r0, r7
    bl __posix_syscall
    ldr r12, [sp, #12]
    msr APSR_nzcvq, r12
    mov sp, r6
    pop {r1-r3, r6, r12, lr}
    bx lr
    .size __posix_syscall_trap, . - __posix_syscall_trap

@ Where the personality starts a clone child: sp = the child frame.
    .global __posix_trap_clone_child
    .type __posix_trap_clone_child, %function
__posix_trap_clone_child:
    mov r0, #0
    pop {r1-r12, lr}
    bx lr
    .size __posix_trap_clone_child, . - __posix_trap_clone_child

    .section .note.GNU-stack, "", %progbits
