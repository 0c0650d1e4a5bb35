/*
 * Linux ARM EABI system calls for the host personality (posix_hostcalls.c),
 * run under qemu-arm: the numbers it treats apart and the three ways it
 * enters Linux.
 */
#ifndef POSIX_LINUX_CALL_H
#define POSIX_LINUX_CALL_H

#define LINUX_SYS_fork           2
#define LINUX_SYS_write          4
#define LINUX_SYS_sigreturn    119
#define LINUX_SYS_clone        120
#define LINUX_SYS_rt_sigreturn 173
#define LINUX_SYS_vfork        190
#define LINUX_SYS_exit_group   248

static inline long linux_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    register long r7 __asm__("r7") = n;
    __asm__ volatile("svc 0"
                     : "+r"(r0)
                     : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r7)
                     : "memory");
    return r0;
}

/* clone(flags, child_frame, ptid, tls, ctid): the child leaves at once for the trap's child frame. */
static inline long linux_clone(long a, long child_frame, long c, long d, long e)
{
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = child_frame;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r7 __asm__("r7") = LINUX_SYS_clone;
    __asm__ volatile("svc 0\n\t"
                     "cmp r0, #0\n\t"
                     "bne 1f\n\t"
                     "b __posix_trap_clone_child\n"
                     "1:"
                     : "+r"(r0)
                     : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r7)
                     : "memory", "cc");
    return r0;
}

/* Linux reads the signal frame at sp. */
static inline __attribute__((noreturn)) void linux_sigreturn(long n, long frame)
{
    register long r7 __asm__("r7") = n;
    __asm__ volatile("mov sp, %0\n\t"
                     "svc 0"
                     :
                     : "r"(frame), "r"(r7)
                     : "memory");
    __builtin_unreachable();
}

#endif
