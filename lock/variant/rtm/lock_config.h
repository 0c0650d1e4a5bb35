/*
 * Variant `rtm`: the big lock elided with RTM (lock/rtm.c).  Where RTM
 * works, acquire and release call the elision in rtm.c (a transaction costs
 * far more than a call).  Where it does not (no TSX: every AMD host, QEMU
 * TCG), every entry takes the CLH fallback, so that path is inline here,
 * the same code as `bkl` behind one test of a flag written once at boot.
 * Per-object locks do nothing: struct object_lock holds only a placeholder
 * byte (C11 forbids empty structs) and the object-lock operations are empty
 * inline functions.  Included by lock/lock.h via -Ilock/variant/rtm.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#define LOCK_VARIANT LOCK_RTM

#include "clh.h"
#include "lockstats.h"
#include "no_object_locks.h"
#include "rtm.h"

/* lock/rtm.c: the fallback lock, and whether RTM works (written once at boot, before other cores run). */
extern struct clh_lock rtm_fallback_lock;
extern bool rtm_on;

/* lock/rtm.c: the elided acquire, when rtm_on. */
void rtm_kernel_lock_acquire(unsigned core, uint64_t t0);

/*
 * Both operations find the core's fallback entry before testing rtm_on, so
 * that the release reuses the value the acquire found (lock_env_core_data()
 * may be computed once for both) whichever way the test went.
 */
static LOCK_INLINE bool kernel_lock_acquire(enum kernel_entry_kind kind)
{
    uint64_t t0 = lockstats_now();
    struct clh_core *fallback_entry = lock_env_core_data();

    (void)kind;
    if (rtm_on) {
        /* It may have waited for the fallback lock. */
        rtm_kernel_lock_acquire(lock_env_core_id(), t0);
        return true;
    }
    bool waited = clh_acquire_as(&rtm_fallback_lock, fallback_entry, kernel_lock_wait_hook);
    lockstats_acquired(lock_env_core_id(), t0, waited, CLH_ACQUIRE_BARRIERS);
    return waited;
}

/*
 * Inline whether RTM works or not, and with no call: a call here would make
 * every caller keep its values in memory around it, the IPC fastpath too,
 * which releases the lock in the middle of its work.  The hold time is
 * measured before XEND, so that a committed section's counts commit with it.
 */
static LOCK_INLINE void kernel_lock_release(void)
{
    struct clh_core *fallback_entry = lock_env_core_data();

    if (rtm_on) {
        unsigned core = lock_env_core_id();
        struct lock_stats *st = lockstats_of(core);

        lockstats_released(core, rtm_test() ? RTM_COMMIT_BARRIERS : CLH_RELEASE_BARRIERS);
        if (rtm_elide_release(fallback_entry) && st != NULL) {
            st->rtm_commits++;
        }
        return;
    }
    lockstats_released(lock_env_core_id(), CLH_RELEASE_BARRIERS);
    clh_release_as(fallback_entry);
}

void kernel_lock_require_exclusive(void);
bool lock_rtm_active(void);

#endif
