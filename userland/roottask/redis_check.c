/*
 * The guest's DEBUG CHECK (userland/redis/cmd_debug.c): the kernel's
 * invariant checker, run from the server's thread while the server keeps
 * serving, so a long run can end by checking the kernel it ran on.  A
 * failed check has already printed what broke on the console.
 */
#include <redis.h>
#include <sys.h>

enum redis_check redis_env_check(void)
{
    return sys_debug_check() == E_OK ? REDIS_CHECK_PASSED : REDIS_CHECK_FAILED;
}
