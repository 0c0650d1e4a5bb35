/*
 * Variant `rtm`: the big lock elided with RTM (lock/rtm.c).  Acquire and
 * release stay functions there: they choose between a transaction and the
 * CLH fallback.  Per-object locks do nothing: struct object_lock holds only
 * a placeholder byte (C11 forbids empty structs) and the object-lock
 * operations are empty inline functions.  Included by lock/lock.h via
 * -Ilock/variant/rtm.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#define LOCK_VARIANT LOCK_RTM

#include "no_object_locks.h"

void kernel_lock_acquire(enum kernel_entry_kind kind);
void kernel_lock_release(void);
void kernel_lock_require_exclusive(void);
bool lock_rtm_active(void);

#endif
