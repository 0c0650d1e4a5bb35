/*
 * Big-reader lock: the kernel lock of the `fine` variant.  Algorithm notes
 * are in brlock.c.
 */
#ifndef LOCK_BRLOCK_H
#define LOCK_BRLOCK_H

#include "lockdefs.h"
#include "barrier_cost.h"
#include "ticket.h"

/* One core's reader flag, alone on its line: only that core writes it. */
struct brlock_reader {
    _Alignas(LOCK_CACHE_LINE) uint32_t active;  /* 1 while the core is, or is trying to be, a reader */
};

struct brlock {
    _Alignas(LOCK_CACHE_LINE) struct ticket_lock wlock;  /* serialises writers; readers never touch it */
    _Alignas(LOCK_CACHE_LINE) uint32_t writer;  /* 1 from a writer's announcement to its release */
    struct brlock_reader *readers;              /* read-only after brlock_init() */
    unsigned ncores;
};

_Static_assert(sizeof(struct brlock_reader) == LOCK_CACHE_LINE, "one reader flag per line");
_Static_assert(_Alignof(struct brlock) == LOCK_CACHE_LINE, "brlock words on their own lines");

/*
 * Barrier instructions, for LOCKSTATS.  A read attempt that finds a writer
 * costs BRLOCK_READ_ATTEMPT + BRLOCK_READ_BACKOFF and is retried.  The
 * write side polls each reader flag; a flag that a racing reader raises
 * again costs one more acquire load, which is not counted.
 */
#define BRLOCK_READ_ATTEMPT_BARRIERS (LOCK_ARCH_BARRIERS_FENCE_SEQ_CST + LOCK_ARCH_BARRIERS_LOAD_ACQUIRE)
#define BRLOCK_READ_BACKOFF_BARRIERS LOCK_ARCH_BARRIERS_STORE_RELEASE
#define BRLOCK_READ_UNLOCK_BARRIERS  LOCK_ARCH_BARRIERS_STORE_RELEASE
#define BRLOCK_WRITE_LOCK_BARRIERS(ncores) \
    (TICKET_ACQUIRE_BARRIERS + LOCK_ARCH_BARRIERS_FENCE_SEQ_CST + (ncores) * LOCK_ARCH_BARRIERS_LOAD_ACQUIRE)
#define BRLOCK_WRITE_UNLOCK_BARRIERS (LOCK_ARCH_BARRIERS_STORE_RELEASE + TICKET_RELEASE_BARRIERS)

/* Before any core uses the lock; readers[] has ncores entries. */
void brlock_init(struct brlock *b, struct brlock_reader *readers, unsigned ncores);

/*
 * One attempt to enter as a reader whose flag is r (b->readers[core] for
 * the reader on `core`: brlock_read_trylock): true if in.  False if a
 * writer has announced itself; the flag is then down again and the caller
 * may wait for the writer and retry (brlock_read_lock() does).  Inline, as
 * is brlock_read_unlock(): every IPC entry of `fine` runs them.  The
 * memory-ordering argument is in brlock.c.
 */
static LOCK_INLINE bool brlock_read_trylock_as(struct brlock *b, struct brlock_reader *r)
{
    uint32_t *flag = &r->active;

    /* Relaxed: ordered before the load of W by the fence below. */
    __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
    /* Seq_cst fence: the Dekker store-load barrier; pairs with the fence
     * in brlock_write_lock() (see brlock.c). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* Acquire: pairs with the release store W := 0 in
     * brlock_write_unlock(), so the last writer's section happens before
     * our read section. */
    if (__builtin_expect(__atomic_load_n(&b->writer, __ATOMIC_ACQUIRE) == 0, 1)) {
        return true;
    }
    /* Release: pairs with the writer's acquire load of our flag.  We did
     * nothing since raising it, but under C11 this store heads a new
     * release sequence, covering our earlier read section even if the
     * writer reads this value rather than the unlock's. */
    __atomic_store_n(flag, 0, __ATOMIC_RELEASE);
    return false;
}

static LOCK_INLINE bool brlock_read_trylock(struct brlock *b, unsigned core)
{
    return brlock_read_trylock_as(b, &b->readers[core]);
}

/*
 * Enter as a reader on `core`, calling hook() while a writer is in.
 * Returns the number of attempts: 1 when no writer was in the way.
 */
unsigned brlock_read_lock(struct brlock *b, unsigned core, lock_wait_fn hook);

/* Caller, whose flag is r, must hold the read side. */
static LOCK_INLINE void brlock_read_unlock_as(struct brlock_reader *r)
{
    /* Release: pairs with the writer's acquire load of this flag, so our
     * read section happens before the next write section. */
    __atomic_store_n(&r->active, 0, __ATOMIC_RELEASE);
}

/*
 * Whether the caller, whose flag is r, holds the read side: its flag is up
 * exactly from a successful brlock_read_trylock_as() or brlock_read_lock()
 * to brlock_read_unlock_as() (a failed attempt lowers it again).
 */
static LOCK_INLINE bool brlock_read_held_as(const struct brlock_reader *r)
{
    /* Relaxed: only the caller writes its own flag, so it reads its own last store. */
    return __atomic_load_n(&r->active, __ATOMIC_RELAXED) != 0;
}

/* Caller (`core`) must hold the read side. */
static LOCK_INLINE void brlock_read_unlock(struct brlock *b, unsigned core)
{
    brlock_read_unlock_as(&b->readers[core]);
}

/*
 * Enter as the only writer, excluding all readers, calling hook() while
 * waiting.  Returns whether it had to wait.  The caller must not hold the
 * read side (it would wait for itself).
 */
bool brlock_write_lock(struct brlock *b, lock_wait_fn hook);

/* Caller must hold the write side. */
void brlock_write_unlock(struct brlock *b);

#endif
