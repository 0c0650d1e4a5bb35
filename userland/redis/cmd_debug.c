/*
 * DEBUG, ours rather than Redis's (docs/redis.md).
 *
 * DEBUG KSTATS <tag>: mark the start or end of a measured window for the
 * host's benchmark runner (tools/sweep.py, docs/benchmarks.md).  In the
 * guest the kernel prints one `kstats` record per core, labelled with the
 * tag, and turns on its kernel/user time split (docs/abi.md); the reply is
 * +OK once the records are out, so a client that waits for it knows the
 * window's first record precedes its next command.
 *
 * The kernel call belongs to the environment: the guest links
 * redis_env_kstats() from userland/roottask/redis_kstats.c; a build without
 * a kernel (the host tests) gets the default below, and the command
 * replies with an error there.
 *
 * DEBUG CHECK: run the kernel's invariant checker (SYS_DEBUG_CHECK) and
 * reply +OK when it holds, so that a client can check the kernel at the end
 * of a long run without stopping it (the soak test).  The guest's is
 * userland/roottask/redis_check.c; the default here says it is absent.
 */
#include "number.h"
#include "reply.h"
#include "server.h"

__attribute__((weak)) bool redis_env_kstats(uint64_t tag)
{
    (void)tag;
    return false;
}

void cmd_debug_kstats(struct redis_conn *c)
{
    int64_t tag;

    if (!number_parse_i64(c->argv[2].data, c->argv[2].len, &tag) || tag < 0) {
        reply_error(&c->reply, "ERR value is not an integer or out of range");
        return;
    }
    if (!redis_env_kstats((uint64_t)tag)) {
        reply_error(&c->reply, "ERR DEBUG KSTATS needs the kernel's accounting (not in this build)");
        return;
    }
    reply_status(&c->reply, "OK");
}

__attribute__((weak)) enum redis_check redis_env_check(void)
{
    return REDIS_CHECK_ABSENT;
}

void cmd_debug_check(struct redis_conn *c)
{
    switch (redis_env_check()) {
    case REDIS_CHECK_PASSED:
        reply_status(&c->reply, "OK");
        break;
    case REDIS_CHECK_FAILED:
        reply_error(&c->reply, "ERR the kernel invariant checker failed (the console says which check)");
        break;
    case REDIS_CHECK_ABSENT:
        reply_error(&c->reply, "ERR DEBUG CHECK needs the kernel's invariant checker (not in this build)");
        break;
    }
}
