/*
 * The one architecture-specific system call primitive (x86_64).  Generic
 * userland (userland/lib/) builds every system call and invocation on
 * arch_syscall(); docs/userland.md states its contract so another port can
 * provide the same in arch/<port>/user/syscall_arch.h.
 *
 * Register convention (docs/abi.md): SYSCALL with the number in rax (status
 * out), the capability address in rdi (badge out), the message info in rsi
 * and MR0..MR3 in r10, r8, r9, r15.  The CPU clobbers rcx and r11.  Every
 * register of the convention is an input and an output, because the kernel
 * may switch to another thread and back, and the registers then carry what
 * the call returned.
 */
#ifndef SYSCALL_ARCH_H
#define SYSCALL_ARCH_H

#include <abi/types.h>

/* Message registers carried in machine registers; the rest live in the IPC buffer. */
#define ARCH_MSG_REGS 4

/*
 * Issue system call `sysno`.  In: *cptr, *info, mr[0..3].  Out: *cptr =
 * badge, *info = message info, mr[0..3] = MR0..MR3.  Returns the status.
 * The "memory" clobber orders the call against IPC buffer accesses.
 */
static inline word_t arch_syscall(word_t sysno, word_t *cptr, word_t *info, word_t *mr)
{
    register word_t rax __asm__("rax") = sysno;
    register word_t rdi __asm__("rdi") = *cptr;
    register word_t rsi __asm__("rsi") = *info;
    register word_t r10 __asm__("r10") = mr[0];
    register word_t r8 __asm__("r8") = mr[1];
    register word_t r9 __asm__("r9") = mr[2];
    register word_t r15 __asm__("r15") = mr[3];

    __asm__ volatile("syscall"
                     : "+r"(rax), "+r"(rdi), "+r"(rsi), "+r"(r10), "+r"(r8), "+r"(r9), "+r"(r15)
                     :
                     : "rcx", "r11", "memory");
    *cptr = rdi;
    *info = rsi;
    mr[0] = r10;
    mr[1] = r8;
    mr[2] = r9;
    mr[3] = r15;
    return rax;
}

#endif
