/*
 * The guest's DEBUG KSTATS (userland/redis/cmd_debug.c): the kernel prints
 * a `kstats` record per core with the tag and keeps timing on, so the
 * window between two marks has kernel and user time as well as idle time;
 * then a `lockstats` record per core, reset, so that the records after a
 * window's end mark cover that window alone (zero without LOCKSTATS=1).
 */
#include <redis.h>
#include <sys.h>

bool redis_env_kstats(uint64_t tag)
{
    word_t values[KSTATS_VALUES];

    if (sys_debug_kstats(0, KSTATS_PRINT | KSTATS_TIME_ON, (word_t)tag, values) != E_OK)
        return false;
    return sys_debug_lockstats(1) == E_OK;
}
