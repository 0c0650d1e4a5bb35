/*
 * The one architecture-specific system call primitive (arm-imx6), with the
 * contract of docs/userland.md.
 *
 * Register convention (docs/arm-imx6.md): SVC #0 in ARM state with the
 * number in r7 (status out), the capability address in r0 (badge out), the
 * message info in r1 and MR0..MR3 in r2..r5.  Every register of the
 * convention is an input and an output, because the kernel may switch to
 * another thread and back, and the registers then carry what the call
 * returned.  The kernel restores every other register as it was.
 */
#ifndef SYSCALL_ARCH_H
#define SYSCALL_ARCH_H

#include <abi/types.h>

/* Message registers carried in machine registers; the rest live in the IPC buffer. */
#define ARCH_MSG_REGS 4

static inline word_t arch_syscall(word_t sysno, word_t *cptr, word_t *info, word_t *mr)
{
    register word_t r7 __asm__("r7") = sysno;
    register word_t r0 __asm__("r0") = *cptr;
    register word_t r1 __asm__("r1") = *info;
    register word_t r2 __asm__("r2") = mr[0];
    register word_t r3 __asm__("r3") = mr[1];
    register word_t r4 __asm__("r4") = mr[2];
    register word_t r5 __asm__("r5") = mr[3];

    __asm__ volatile("svc #0"
                     : "+r"(r7), "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5)
                     :
                     : "memory");
    *cptr = r0;
    *info = r1;
    mr[0] = r2;
    mr[1] = r3;
    mr[2] = r4;
    mr[3] = r5;
    return r7;
}

#endif
