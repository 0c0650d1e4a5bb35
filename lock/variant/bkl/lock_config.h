/*
 * Variant `bkl`: one CLH lock around every kernel entry (lock/bkl.c).  The
 * acquire and release run on every entry, so they are inline here: the
 * uncontended pair is then the XCHG, the loads and stores of clh.h and one
 * load of this core's CLH entry (lock_env_core_data()), with no call layer (a call layer cost as much as the lock
 * itself; docs/locking.md, "Cost per entry").  Per-object locks do nothing:
 * struct object_lock holds only a placeholder byte (C11 forbids empty
 * structs).  Included by lock/lock.h via -Ilock/variant/bkl.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#include "clh.h"
#include "lockstats.h"

#define LOCK_VARIANT LOCK_BKL

#include "no_object_locks.h"
#include "no_transactions.h"

/* The big kernel lock; defined in lock/bkl.c. */
extern struct clh_lock bkl_lock;

static LOCK_INLINE bool kernel_lock_acquire(enum kernel_entry_kind kind)
{
    uint64_t t0 = lockstats_now();

    (void)kind;
    bool waited = clh_acquire_as(&bkl_lock, lock_env_core_data(), kernel_lock_wait_hook);
    lockstats_acquired(lock_env_core_id(), t0, waited, CLH_ACQUIRE_BARRIERS);
    return waited;
}

static LOCK_INLINE void kernel_lock_release(void)
{
    lockstats_released(lock_env_core_id(), CLH_RELEASE_BARRIERS);
    clh_release_as(lock_env_core_data());
}

#endif
