/*
 * The smallest personality: every system call fails with ENOSYS.  It lets
 * tests/test_posix_build.py check that libposix.a and redis-server link for
 * a port before userland/posix has a personality of its own.
 */
#include <errno.h>

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f);

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    (void)n, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
    return -ENOSYS;
}
