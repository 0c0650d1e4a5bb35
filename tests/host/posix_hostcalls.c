/*
 * A personality for testing the system-call hook on a Linux x86_64 host
 * (tests/test_posix_build.py, docs/posix-build.md): every call musl makes
 * reaches __posix_syscall(), which counts it and does it with the real
 * `syscall` instruction.  Calls from musl's assembly arrive through
 * __posix_syscall_trap (arch/x86_64/user/posix_trap.S) and are counted
 * apart, so the test sees both paths used.  At exit_group the counts are
 * written to stderr as one line:
 *     posix-hostcalls: call N:COUNT ... trap N:COUNT ...
 *
 * Three calls cannot simply be passed on, because Linux would resume the
 * caller somewhere this C function's frame does not describe:
 * - clone with a new stack: the child starts on the child frame the trap
 *   built (its contract), exactly as the real personality starts it;
 * - rt_sigreturn: Linux reads the signal frame at rsp, so rsp is set to
 *   the frame address the restorer passed;
 * - vfork: the child would run on the parent's stack through the trap's
 *   frame, so it becomes fork.
 */
#include <stdint.h>

#define SYS_rt_sigreturn  15
#define SYS_clone         56
#define SYS_fork          57
#define SYS_vfork         58
#define SYS_write          1
#define SYS_exit_group   231
#define COUNTED_CALLS    512

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f);

extern const char __posix_syscall_trap[], __posix_trap_clone_child[];

static unsigned long call_count[COUNTED_CALLS];
static unsigned long trap_count[COUNTED_CALLS];

static long linux_syscall(long n, long a, long b, long c, long d, long e, long f)
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
static long linux_clone(long flags, long child_frame, long ptid, long ctid, long tls)
{
    register long r10 __asm__("r10") = ctid;
    register long r8 __asm__("r8") = tls;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "jmp __posix_trap_clone_child\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(SYS_clone), "D"(flags), "S"(child_frame), "d"(ptid), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}

static __attribute__((noreturn)) void linux_sigreturn(long frame)
{
    __asm__ volatile("mov %0, %%rsp\n\t"
                     "syscall"
                     :
                     : "r"(frame), "a"(SYS_rt_sigreturn)
                     : "memory");
    __builtin_unreachable();
}

static char *put_number(char *p, unsigned long v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = digits[--n];
    return p;
}

static char *put_counts(char *p, const char *label, const unsigned long *count)
{
    for (const char *s = label; *s; s++)
        *p++ = *s;
    for (int n = 0; n < COUNTED_CALLS; n++) {
        unsigned long v = __atomic_load_n(&count[n], __ATOMIC_RELAXED);
        if (!v)
            continue;
        *p++ = ' ';
        p = put_number(p, (unsigned long)n);
        *p++ = ':';
        p = put_number(p, v);
    }
    return p;
}

static void report_counts(void)
{
    static char line[COUNTED_CALLS * 2 * 24 + 64];
    char *p = put_counts(line, "posix-hostcalls: call", call_count);
    p = put_counts(p, " trap", trap_count);
    *p++ = '\n';
    linux_syscall(SYS_write, 2, (long)line, p - line, 0, 0, 0);
}

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    uintptr_t from = (uintptr_t)__builtin_return_address(0);
    int via_trap = from >= (uintptr_t)__posix_syscall_trap && from < (uintptr_t)__posix_trap_clone_child;
    if (n >= 0 && n < COUNTED_CALLS)
        __atomic_fetch_add(via_trap ? &trap_count[n] : &call_count[n], 1, __ATOMIC_RELAXED);

    switch (n) {
    case SYS_clone:
        if (b)
            return linux_clone(a, b, c, d, e);
        break;
    case SYS_rt_sigreturn:
        linux_sigreturn(a);
    case SYS_vfork:
        return linux_syscall(SYS_fork, 0, 0, 0, 0, 0, 0);
    case SYS_exit_group:
        report_counts();
        break;
    }
    return linux_syscall(n, a, b, c, d, e, f);
}
