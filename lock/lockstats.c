/*
 * Storage and readers of the per-core lock statistics (lock/lockstats.h).
 * Linked into every variant, so lock_stats_read() exists everywhere and
 * returns zeros when LOCKSTATS is off or the variant counts nothing.
 */
#include "lock.h"
#include "lockstats.h"

struct lockstats_core lockstats_cores[LOCK_MAX_CORES];

void lock_stats_read(unsigned core, struct lock_stats *out)
{
    if (core >= LOCK_MAX_CORES) {
        *out = (struct lock_stats){0};
        return;
    }
    *out = lockstats_cores[core].s;
}

void lock_stats_reset(void)
{
    for (unsigned i = 0; i < LOCK_MAX_CORES; i++) {
        lockstats_cores[i].s = (struct lock_stats){0};
    }
}
