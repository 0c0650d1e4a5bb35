/*
 * Per-object locks for the variants that serialise the whole kernel (none,
 * bkl, rtm): there is nothing to lock, so struct object_lock is a
 * placeholder byte (C11 forbids empty structs) and taking or releasing a
 * set of them compiles to nothing.  Included by those variants'
 * lock_config.h.
 */
#ifndef LOCK_NO_OBJECT_LOCKS_H
#define LOCK_NO_OBJECT_LOCKS_H

struct object_lock {
    char unused;
};

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

#endif
