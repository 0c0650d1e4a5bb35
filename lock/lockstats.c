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

void lock_stats_add(struct lock_stats *sum, const struct lock_stats *s)
{
    sum->acquisitions += s->acquisitions;
    sum->contended += s->contended;
    sum->cycles_held += s->cycles_held;
    sum->cycles_waited += s->cycles_waited;
    sum->rtm_commits += s->rtm_commits;
    sum->rtm_aborts_conflict += s->rtm_aborts_conflict;
    sum->rtm_aborts_capacity += s->rtm_aborts_capacity;
    sum->rtm_aborts_explicit += s->rtm_aborts_explicit;
    sum->rtm_aborts_lock_held += s->rtm_aborts_lock_held;
    sum->rtm_aborts_other += s->rtm_aborts_other;
    sum->rtm_fallbacks += s->rtm_fallbacks;
    sum->barriers += s->barriers;
    for (unsigned i = 0; i < LOCK_HOLD_BUCKETS; i++) {
        sum->hold_histogram[i] += s->hold_histogram[i];
    }
}

void lock_stats_reset(void)
{
    for (unsigned i = 0; i < LOCK_MAX_CORES; i++) {
        lockstats_cores[i].s = (struct lock_stats){0};
    }
}
