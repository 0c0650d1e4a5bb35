/*
 * Variant `none`: no locking at all.  For one core, or for the paper's
 * unsafe multicore baseline (002 §5, "lock compiled out"), which measures
 * what the other variants cost.  Every operation is empty; no barrier is
 * executed, so LOCKSTATS counts nothing.
 */
#include "lock.h"

const char *const lock_variant_name = "none";

void kernel_lock_init(unsigned ncores)
{
    (void)ncores;
}

bool kernel_lock_upgrade(void)
{
    return false;
}

void kernel_lock_require_exclusive(void)
{
}

void object_lock_init(struct object_lock *lock)
{
    (void)lock;
}

bool lock_rtm_active(void)
{
    return false;
}
