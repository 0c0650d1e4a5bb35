/*
 * Linux x86_64 system calls for the host personality (posix_hostcalls.c):
 * the numbers it treats apart and the three ways it enters Linux.
 */
#ifndef POSIX_LINUX_CALL_H
#define POSIX_LINUX_CALL_H

#define LINUX_SYS_write          1
#define LINUX_SYS_rt_sigreturn  15
#define LINUX_SYS_clone         56
#define LINUX_SYS_fork          57
#define LINUX_SYS_vfork         58
#define LINUX_SYS_exit_group   231
#define LINUX_SYS_sigreturn     (-1)    /* x86_64 has only rt_sigreturn */

static inline long linux_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* clone(flags, child_frame, ptid, ctid, tls): the child leaves at once for the trap's child frame. */
static inline long linux_clone(long a, long child_frame, long c, long d, long e)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "jmp __posix_trap_clone_child\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(LINUX_SYS_clone), "D"(a), "S"(child_frame), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory", "cc");
    return ret;
}

/* Linux reads the signal frame at rsp. */
static inline __attribute__((noreturn)) void linux_sigreturn(long n, long frame)
{
    __asm__ volatile("mov %1, %%rsp\n\t"
                     "syscall"
                     :
                     : "a"(n), "r"(frame)
                     : "memory");
    __builtin_unreachable();
}

#endif
