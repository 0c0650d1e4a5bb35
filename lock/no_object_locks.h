/*
 * Per-object locks for the variants that serialise the whole kernel (none,
 * bkl, rtm): there is nothing to lock, so struct object_lock is a
 * placeholder byte (C11 forbids empty structs) and initialising, taking or
 * releasing them compiles to nothing.  With no read side there is nothing
 * to upgrade from either.  Included by those variants' lock_config.h.
 */
#ifndef LOCK_NO_OBJECT_LOCKS_H
#define LOCK_NO_OBJECT_LOCKS_H

#include <stdbool.h>

struct object_lock {
    char unused;
};

static inline void object_lock_init(struct object_lock *lock)
{
    (void)lock;
}

static inline bool kernel_lock_upgrade(void)
{
    return false;
}

static inline void object_locks_acquire(struct object_lock *const *locks, unsigned n)
{
    (void)locks;
    (void)n;
}

static inline void object_locks_release(struct object_lock *const *locks, unsigned n)
{
    (void)locks;
    (void)n;
}

static inline void object_lock_acquire(struct object_lock *lock)
{
    (void)lock;
}

static inline void object_lock_release(struct object_lock *lock)
{
    (void)lock;
}

#endif
