/*
 * Variant `none`: no locking at all.  For one core, or for the paper's
 * unsafe multicore baseline ("For a Microkernel, a Big Lock Is Fine" §5,
 * "lock compiled out"), which measures what the other variants cost.  Every
 * operation is empty; no barrier is executed, so LOCKSTATS counts nothing.
 */
#include "lock.h"
#include <stddef.h>

const char *const lock_variant_name = "none";

void *lock_core_data(unsigned core)
{
    (void)core;
    return NULL;
}

void kernel_lock_init(unsigned ncores)
{
    (void)ncores;
}
