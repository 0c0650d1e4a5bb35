/*
 * The kernel's one interface to synchronisation.
 *
 * The kernel is built with exactly one variant, chosen by the Makefile
 * picking lock/$(LOCK).c:
 *
 *   none  no lock at all (one core, or UNSAFE=1 for the paper's baseline)
 *   bkl   one big kernel lock, a CLH queue lock (lock/clh.h)
 *   rtm   the big lock elided with Intel TSX, CLH lock as fallback
 *   fine  big-reader lock (lock/brlock.h) plus ticket locks (lock/ticket.h)
 *         on TCBs, endpoints, notifications and scheduler queues
 *
 * IPC, scheduler and TCB code call only what is declared here, so the same
 * kernel logic serves every variant.  See docs/locking.md.
 */
#ifndef LOCK_LOCK_H
#define LOCK_LOCK_H

#include <stdbool.h>
#include <stdint.h>

/* struct object_lock for the chosen variant: lock/variant/$(LOCK)/lock_config.h */
#include "lock_config.h"

/*
 * What a kernel entry is about to do.  Under `fine`, ENTRY_IPC takes the
 * read side of the big-reader lock (IPC, notification, fault and interrupt
 * paths) and ENTRY_GENERAL the write side (everything else, including all
 * object creation and deletion).  The other variants ignore it.
 */
enum kernel_entry_kind {
    ENTRY_IPC,
    ENTRY_GENERAL,
};

/* Boot: called once on the boot core before any other core runs. */
void kernel_lock_init(unsigned ncores);

/*
 * Called after kernel entry, with interrupts off, before any shared kernel
 * state is touched.  While it waits, it calls kernel_lock_wait_hook()
 * (defined by the kernel) so that cross-core requests are still served.
 */
void kernel_lock_acquire(enum kernel_entry_kind kind);

/*
 * Under `fine`, an ENTRY_IPC entry that finds it must do general work
 * (for example a fault that destroys objects) upgrades by dropping the read
 * side and taking the write side; the caller must then re-decode, because
 * state may have changed in between.  Other variants: no-op, returns false.
 * Returns true when the caller must restart its decode.
 */
bool kernel_lock_upgrade(void);

/* Called before kernel exit, after which only deferred hardware work runs. */
void kernel_lock_release(void);

/*
 * Code that cannot run inside a hardware transaction (console output, the
 * debug invariant checker) calls this first.  Under `rtm` inside a
 * transaction it aborts with the explicit code LOCK_ABORT_NEEDS_LOCK, so the
 * entry is retried holding the real lock.  No-op elsewhere.
 */
void kernel_lock_require_exclusive(void);

/*
 * Provided by the environment: the kernel (kernel/lock_env.c) or the
 * host-side test harness (tests/host/).
 *   kernel_lock_wait_hook  serve pending cross-core requests while spinning
 *   lock_env_core_id       index of the calling core, 0 .. ncores-1
 *   lock_env_cycles        a cycle counter (TSC, ARM global timer)
 */
void kernel_lock_wait_hook(void);
unsigned lock_env_core_id(void);
uint64_t lock_env_cycles(void);

/*
 * Also provided by the environment:
 *   lock_panic     stop the kernel with msg; does not return.  Called on
 *                  broken lock invariants (DEBUG lock-order violations, a
 *                  core count above LOCK_MAX_CORES, too many object locks).
 *   lock_rtm_probe whether XBEGIN/XEND really work on this CPU.  The arch
 *                  layer runs XBEGIN/XABORT under a #GP/#UD fixup (CPUID
 *                  alone lies inside KVM guests).  Called once, by
 *                  kernel_lock_init() of the `rtm` variant only.
 */
_Noreturn void lock_panic(const char *msg);
bool lock_rtm_probe(void);

/*
 * Per-object locks.  Embedded in TCBs, endpoints, notifications and
 * scheduler queues.  Under `fine` a ticket lock; elsewhere a one-byte
 * placeholder (C11 has no empty structs) that no code touches.
 */
struct object_lock;

void object_lock_init(struct object_lock *lock);

/*
 * Take up to OBJECT_LOCKS_MAX object locks in ascending address order
 * (duplicates and NULLs ignored).  Callers identify every object first,
 * then lock them all in one call, so no cycle of waiters can form.  DEBUG
 * builds panic if a core takes an object lock while already holding one at a
 * higher or equal address.  Release every object lock before
 * kernel_lock_release() or kernel_lock_upgrade().
 */
#define OBJECT_LOCKS_MAX 4
void object_locks_acquire(struct object_lock *const *locks, unsigned n);
void object_locks_release(struct object_lock *const *locks, unsigned n);

/* The variant's name ("none", "bkl", "rtm", "fine"), for the boot record. */
extern const char *const lock_variant_name;

/* Whether `rtm` found working RTM at boot; false for every other variant. */
bool lock_rtm_active(void);

/*
 * Statistics (LOCKSTATS=1); all zero otherwise.  Filled per core, each core
 * writing only its own cache-line-aligned slot; lock_stats_read() of another
 * core's slot is a snapshot.  acquisitions/contended/cycles_* describe the
 * kernel lock (the BKL, the elided lock, or the big-reader lock side);
 * barriers counts every barrier instruction of the lock layer, object
 * locks included.  docs/locking.md explains each field.
 */
struct lock_stats {
    uint64_t acquisitions;
    uint64_t contended;
    uint64_t cycles_held;
    uint64_t cycles_waited;
    uint64_t rtm_commits;
    uint64_t rtm_aborts_conflict;
    uint64_t rtm_aborts_capacity;
    uint64_t rtm_aborts_explicit;
    uint64_t rtm_aborts_lock_held;
    uint64_t rtm_aborts_other;
    uint64_t rtm_fallbacks;
    uint64_t barriers;
    uint64_t hold_histogram[16];    /* bucket i: held < 2^(i+6) cycles */
};

void lock_stats_read(unsigned core, struct lock_stats *out);
void lock_stats_reset(void);

#endif
