/*
 * One kernel entry as lockbench replays it: take the kernel lock the way
 * the IPC fastpath does (kernel_lock_acquire(ENTRY_IPC), then the
 * endpoint's object lock, which only `fine` has), run a critical section of
 * the kernel's length and shared-cache-line footprint, release both.
 */
#ifndef BENCH_LOCKBENCH_ENTRY_H
#define BENCH_LOCKBENCH_ENTRY_H

#include "lock.h"
#include "lockdefs.h"

#include <stdint.h>

/* Most cache lines a critical section may write besides the object's own. */
#define ENTRY_MAX_LINES 16

struct footprint_line {
    _Alignas(LOCK_CACHE_LINE) uint64_t word;
};

/*
 * What the kernel objects of one entry stand for (an endpoint and the
 * threads it connects).  The first line holds the object lock and the
 * count of entries that ran the section: a plain read at the start and a
 * plain write at the end of every section, so that two sections that
 * overlap lose an update.
 */
struct entry_object {
    _Alignas(LOCK_CACHE_LINE) struct object_lock lock;
    uint64_t sections;
    struct footprint_line lines[ENTRY_MAX_LINES];
};

_Static_assert(sizeof(struct entry_object) == (ENTRY_MAX_LINES + 1) * LOCK_CACHE_LINE,
               "an object is its lock line and its footprint lines, nothing shared with others");

/* The critical section's shape, the same for every entry of a run. */
struct entry_shape {
    unsigned lines;          /* footprint lines read and written, 0 .. ENTRY_MAX_LINES */
    uint64_t instructions;   /* instructions the section runs, footprint included */
};

/* Instructions the section needs at least for its footprint and its count. */
uint64_t entry_fixed_instructions(unsigned lines);

/* The section alone, without any lock (used to time it uncontended). */
void entry_section(struct entry_object *o, const struct entry_shape *shape);

/*
 * One kernel entry on object o.  With force_abort the section first calls
 * kernel_lock_require_exclusive(), which aborts an RTM transaction so that
 * the entry runs again holding the lock.  Returns the cycles from before the
 * acquire to after the release.
 */
uint64_t entry_run(struct entry_object *o, const struct entry_shape *shape, bool force_abort);

/* Spin outside the lock for `cycles` TSC cycles. */
void entry_think(uint64_t cycles);

#endif
