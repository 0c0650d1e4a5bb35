/*
 * Variant `none`: no lock at all, so every per-entry operation is an empty
 * inline function and compiles to nothing (the paper's baseline, 002 §5:
 * "lock compiled out").  struct object_lock holds only a placeholder byte
 * (C11 forbids empty structs).  Included by lock/lock.h via
 * -Ilock/variant/none.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#define LOCK_VARIANT_NONE 1

struct object_lock {
    char unused;
};

static inline void kernel_lock_acquire(enum kernel_entry_kind kind)
{
    (void)kind;
}

static inline void kernel_lock_release(void)
{
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

#endif
