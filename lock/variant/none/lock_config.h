/*
 * Variant `none`: no lock at all, so every per-entry operation is an empty
 * inline function and compiles to nothing (the paper's baseline, "For a
 * Microkernel, a Big Lock Is Fine" §5: "lock compiled out").  struct
 * object_lock holds only a placeholder byte (C11 forbids empty structs).
 * Included by lock/lock.h via -Ilock/variant/none.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#define LOCK_VARIANT LOCK_NONE

#include "no_object_locks.h"
#include "no_transactions.h"

static inline bool kernel_lock_acquire(enum kernel_entry_kind kind)
{
    (void)kind;
    return false;
}

static inline void kernel_lock_release(void)
{
}

#endif
