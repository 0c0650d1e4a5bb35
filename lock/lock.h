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
 * IPC, scheduler and TCB code call only what is declared here (and, for the
 * per-entry operations, in the variant's lock_config.h, see below), so the
 * same kernel logic serves every variant.  See docs/locking.md.
 */
#ifndef LOCK_LOCK_H
#define LOCK_LOCK_H

#include <stdbool.h>
#include <stdint.h>

/* The entry kinds, the environment functions, struct lock_stats. */
#include "lockenv.h"

/*
 * The variants, numbered as the boot information reports them
 * (kernel/uapi/abi/bootinfo.h).  The variant's lock_config.h defines
 * LOCK_VARIANT as the one this kernel is built with, so kernel code that
 * must know (boot: may several cores run?) tests a compile-time constant.
 */
enum lock_variant {
    LOCK_NONE = 0,
    LOCK_BKL = 1,
    LOCK_FINE = 2,
    LOCK_RTM = 3,
};

/*
 * Per-object locks.  Embedded in TCBs, endpoints, notifications and
 * scheduler queues.  Under `fine` a ticket lock; elsewhere a one-byte
 * placeholder (C11 has no empty structs) that no code touches.
 *
 * object_locks_acquire() takes up to OBJECT_LOCKS_MAX object locks in
 * ascending address order (duplicates and NULLs ignored).  Callers identify
 * every object first, then lock them all in one call, so no cycle of
 * waiters can form.  DEBUG builds panic if a core takes an object lock while
 * already holding one at a higher or equal address.  Release every object
 * lock before kernel_lock_release() or kernel_lock_upgrade().
 */
#define OBJECT_LOCKS_MAX 4

/*
 * The variant's lock_config.h (lock/variant/$(LOCK)/, on the include path)
 * defines struct object_lock and provides the operations below, either as
 * static inline functions (a variant with little or nothing to do, so that
 * the IPC path pays no call layers for it; no_object_locks.h and
 * no_transactions.h hold the empty ones the variants share) or as
 * declarations of functions in lock/$(LOCK).c.  Their contracts:
 *
 *   bool kernel_lock_acquire(enum kernel_entry_kind kind);
 *       Called after kernel entry, with interrupts off, before any shared
 *       kernel state is touched.  While it waits, it calls
 *       kernel_lock_wait_hook() so that cross-core requests are still served.
 *       Returns whether it may have called the hook (it had to wait), so
 *       that the caller knows when what the hook may change is as it left it.
 *   void kernel_lock_release(void);
 *       Called before kernel exit, after which only deferred hardware work
 *       runs.
 *   void object_locks_acquire(struct object_lock *const *locks, unsigned n);
 *   void object_locks_release(struct object_lock *const *locks, unsigned n);
 *       As described above; release accepts the same array as acquire.
 *   void object_lock_acquire(struct object_lock *lock);
 *   void object_lock_release(struct object_lock *lock);
 *       object_locks_acquire(&lock, 1) for one lock the caller knows to be
 *       non-NULL, without the NULL test (the IPC fastpath's endpoint lock),
 *       and its release.
 *   void object_lock_init(struct object_lock *lock);
 *       Boot and object creation: an unlocked object lock.
 *   bool kernel_lock_upgrade(void);
 *       Under `fine`, an ENTRY_IPC entry that finds it must do general work
 *       (for example a fault that destroys objects) upgrades by dropping the
 *       read side and taking the write side; the caller must then re-decode,
 *       because state may have changed in between.  Returns true when the
 *       caller must restart its decode; other variants return false.
 *   void kernel_lock_require_exclusive(void);
 *       Code that cannot run inside a hardware transaction (console output,
 *       the debug invariant checker) calls this first.  Under `rtm` inside a
 *       transaction it aborts with the explicit code LOCK_ABORT_NEEDS_LOCK,
 *       so the entry is retried holding the real lock.  No-op elsewhere.
 *   bool lock_rtm_active(void);
 *       Whether `rtm` found working RTM at boot; false for every other variant.
 */
#include "lock_config.h"

/* Boot: called once on the boot core before any other core runs. */
void kernel_lock_init(unsigned ncores);

/* The variant's name ("none", "bkl", "rtm", "fine"), for the boot record. */
extern const char *const lock_variant_name;

void lock_stats_read(unsigned core, struct lock_stats *out);
void lock_stats_reset(void);
/* Add every counter of `s` to `sum` (host tools sum the cores' statistics). */
void lock_stats_add(struct lock_stats *sum, const struct lock_stats *s);

#endif
