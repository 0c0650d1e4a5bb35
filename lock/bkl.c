/*
 * Variant `bkl`: one big kernel lock, a CLH queue lock (000 §3.2, 002
 * §3.1), taken after kernel entry whatever the entry does and released
 * before the deferred hardware work of kernel exit (docs/locking.md).
 * Object locks are empty: the big lock already serialises everything.
 */
#include "lock.h"
#include "clh.h"
#include "lockstats.h"

const char *const lock_variant_name = "bkl";

static struct clh_lock bkl;
static struct clh_core bkl_cores[CLH_CORES_STORAGE(LOCK_MAX_CORES)];

void kernel_lock_init(unsigned ncores)
{
    if (ncores == 0 || ncores > LOCK_MAX_CORES) {
        lock_panic("kernel_lock_init: core count outside 1..LOCK_MAX_CORES");
    }
    clh_init(&bkl, bkl_cores, ncores);
}

void kernel_lock_acquire(enum kernel_entry_kind kind)
{
    unsigned core = lock_env_core_id();
    uint64_t t0 = lockstats_now();

    (void)kind;
    bool waited = clh_acquire(&bkl, core, kernel_lock_wait_hook);
    lockstats_acquired(core, t0, waited, CLH_ACQUIRE_BARRIERS);
}

bool kernel_lock_upgrade(void)
{
    return false;
}

void kernel_lock_release(void)
{
    unsigned core = lock_env_core_id();

    lockstats_released(core, CLH_RELEASE_BARRIERS);
    clh_release(&bkl, core);
}

void kernel_lock_require_exclusive(void)
{
}

void object_lock_init(struct object_lock *lock)
{
    (void)lock;
}

void object_locks_acquire(struct object_lock *const *locks, unsigned n)
{
    (void)locks;
    (void)n;
}

void object_locks_release(struct object_lock *const *locks, unsigned n)
{
    (void)locks;
    (void)n;
}

bool lock_rtm_active(void)
{
    return false;
}
