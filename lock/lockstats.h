/*
 * Per-core lock statistics for the kernel glue (LOCKSTATS=1).
 *
 * With LOCKSTATS off, LOCK_STATS_ENABLED is false and every helper below
 * returns before doing anything, so the glue compiles to the same code as
 * without the calls (no cycle counter reads, no stores).  Each core writes
 * only its own slot, which is cache-line aligned, so statistics add no
 * cross-core traffic; readers of another core's slot (lock_stats_read())
 * get a possibly torn snapshot, which is fine for statistics.
 */
#ifndef LOCK_LOCKSTATS_H
#define LOCK_LOCKSTATS_H

#include "lockdefs.h"
#include "lockenv.h"

#if defined(LOCKSTATS) && LOCKSTATS
#define LOCK_STATS_ENABLED true
#else
#define LOCK_STATS_ENABLED false
#endif

#define LOCK_HOLD_BUCKETS ((unsigned)(sizeof(((struct lock_stats *)0)->hold_histogram) / sizeof(uint64_t)))

struct lockstats_core {
    _Alignas(LOCK_CACHE_LINE) struct lock_stats s;
    uint64_t acquired_at;   /* lock_env_cycles() when the current hold began */
};

_Static_assert(sizeof(struct lockstats_core) % LOCK_CACHE_LINE == 0, "stats slots on their own lines");

/* Written by each core in its own slot; defined in lock/lockstats.c. */
extern struct lockstats_core lockstats_cores[LOCK_MAX_CORES];

/* Core `core`'s counters, for algorithms that count into them (rtm.h). */
static inline struct lock_stats *lockstats_of(unsigned core)
{
    return LOCK_STATS_ENABLED ? &lockstats_cores[core].s : NULL;
}

/* Start of a wait: the cycle counter, or 0 without LOCKSTATS. */
static inline uint64_t lockstats_now(void)
{
    return LOCK_STATS_ENABLED ? lock_env_cycles() : 0;
}

/* Count `n` barrier instructions executed by the lock layer on `core`. */
static inline void lockstats_barriers(unsigned core, unsigned n)
{
    if (!LOCK_STATS_ENABLED) {
        return;
    }
    lockstats_cores[core].s.barriers += n;
}

/* The kernel lock was acquired on `core`; the wait began at `wait_start`. */
static inline void lockstats_acquired(unsigned core, uint64_t wait_start, bool waited, unsigned barriers)
{
    if (!LOCK_STATS_ENABLED) {
        return;
    }
    struct lockstats_core *c = &lockstats_cores[core];
    uint64_t now = lock_env_cycles();

    c->s.acquisitions++;
    c->s.contended += waited;
    c->s.cycles_waited += now - wait_start;
    c->s.barriers += barriers;
    c->acquired_at = now;
}

/* Histogram bucket i counts holds shorter than 2^(i+6) cycles; the last takes the rest. */
static inline unsigned lockstats_bucket(uint64_t held)
{
    unsigned b = 0;

    while (b + 1 < LOCK_HOLD_BUCKETS && held >= ((uint64_t)1 << (b + 6))) {
        b++;
    }
    return b;
}

/* The kernel lock is about to be released on `core`. */
static inline void lockstats_released(unsigned core, unsigned barriers)
{
    if (!LOCK_STATS_ENABLED) {
        return;
    }
    struct lockstats_core *c = &lockstats_cores[core];
    uint64_t held = lock_env_cycles() - c->acquired_at;

    c->s.cycles_held += held;
    c->s.hold_histogram[lockstats_bucket(held)]++;
    c->s.barriers += barriers;
}

#endif
