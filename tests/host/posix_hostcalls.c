/*
 * A personality for testing the system-call hook under Linux: on the
 * x86_64 host, and for arm-imx6 under qemu-arm (tests/test_posix_build.py,
 * docs/posix-build.md).  Every call musl makes reaches __posix_syscall(),
 * which counts it and does it with the port's real instruction
 * (posix_linux/<port>/linux_call.h).  Calls from musl's assembly arrive
 * through __posix_syscall_trap (arch/<port>/user/posix_trap.S), whose
 * return address is below __posix_trap_clone_child, the next symbol of
 * that file; they are counted apart, so the test sees both paths used.
 * At exit_group the counts are written to stderr as one line:
 *     posix-hostcalls: call N:COUNT ... trap N:COUNT ...
 *
 * Three calls cannot simply be passed on, because Linux would resume the
 * caller somewhere this C function's frame does not describe:
 * - clone with a new stack: the child starts on the child frame the trap
 *   built (its contract), exactly as the real personality starts it;
 * - rt_sigreturn (and arm's sigreturn): Linux reads the signal frame at
 *   the stack pointer, so it is set to the address the restorer passed;
 * - vfork: the child would run on the parent's stack through the trap's
 *   frame, so it becomes fork.
 */
#include <stdint.h>

#include "linux_call.h"

#define COUNTED_CALLS 512

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f);

extern const char __posix_syscall_trap[], __posix_trap_clone_child[];

static unsigned long call_count[COUNTED_CALLS];
static unsigned long trap_count[COUNTED_CALLS];

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
    linux_syscall(LINUX_SYS_write, 2, (long)line, p - line, 0, 0, 0);
}

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    uintptr_t from = (uintptr_t)__builtin_return_address(0);
    int via_trap = from >= (uintptr_t)__posix_syscall_trap && from < (uintptr_t)__posix_trap_clone_child;
    if (n >= 0 && n < COUNTED_CALLS)
        __atomic_fetch_add(via_trap ? &trap_count[n] : &call_count[n], 1, __ATOMIC_RELAXED);

    if (n == LINUX_SYS_clone && b)
        return linux_clone(a, b, c, d, e);
    if (n == LINUX_SYS_rt_sigreturn || n == LINUX_SYS_sigreturn)
        linux_sigreturn(n, a);
    if (n == LINUX_SYS_vfork)
        return linux_syscall(LINUX_SYS_fork, 0, 0, 0, 0, 0, 0);
    if (n == LINUX_SYS_exit_group)
        report_counts();
    return linux_syscall(n, a, b, c, d, e, f);
}
