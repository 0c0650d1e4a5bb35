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

/* No object locks: the kernel lock alone serialises, so what the holder
 * reads stays true until it releases that lock. */
#define OBJECT_LOCKS_IN_USE false

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

static inline void object_locks_acquire_three(struct object_lock *a, struct object_lock *b,
                                              struct object_lock *c)
{
    (void)a;
    (void)b;
    (void)c;
}

static inline void object_locks_release_three(struct object_lock *a, struct object_lock *b,
                                              struct object_lock *c)
{
    (void)a;
    (void)b;
    (void)c;
}

#endif
