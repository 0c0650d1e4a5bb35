/*
 * Variant `bkl`: one big kernel lock, a CLH queue lock ("An Evaluation of
 * Coarse-Grained Locking for Multicore Microkernels" §3.2, "For a
 * Microkernel, a Big Lock Is Fine" §3.1), taken after kernel entry whatever
 * the entry does and released before the deferred hardware work of kernel
 * exit (docs/locking.md). Object locks are empty: the big lock already
 * serialises everything. The per-entry acquire and release are inline in
 * lock/variant/bkl/lock_config.h; this file holds the lock and the rest.
 */
#include "lock.h"
#include "clh.h"
#include "lockstats.h"

const char *const lock_variant_name = "bkl";

/* Read by the inline acquire and release in lock/variant/bkl/lock_config.h. */
struct clh_lock bkl_lock;
static struct clh_core bkl_cores[CLH_CORES_STORAGE(LOCK_MAX_CORES)];

void *lock_core_data(unsigned core)
{
    return &bkl_cores[core];
}

void kernel_lock_init(unsigned ncores)
{
    if (ncores == 0 || ncores > LOCK_MAX_CORES) {
        lock_panic("kernel_lock_init: core count outside 1..LOCK_MAX_CORES");
    }
    clh_init(&bkl_lock, bkl_cores, ncores);
}
