/*
 * Variant `fine`: a big-reader lock as the kernel lock plus a ticket lock
 * (lock/ticket.h) in every TCB, endpoint, notification and scheduler queue
 * (lock/fine.c has the design and the lock order).  Included by
 * lock/lock.h via -Ilock/variant/fine.
 *
 * The read side of an IPC entry is inline here: one attempt of
 * brlock_read_trylock() (flag store, fence, load of the writer word) on
 * the way in and one flag store on the way out.  Everything else (the
 * write side, a reader meeting a writer, the object locks) is in fine.c.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#include "brlock.h"
#include "lockstats.h"
#include "ticket.h"
#include "no_transactions.h"

#define LOCK_VARIANT LOCK_FINE

#if defined(DEBUG) && DEBUG
#define FINE_DEBUG true
#else
#define FINE_DEBUG false
#endif

struct object_lock {
    struct ticket_lock ticket;
};

/* Object locks a core may hold at once, for the DEBUG bookkeeping. */
#define FINE_HELD_MAX (2 * OBJECT_LOCKS_MAX)

/*
 * Per-core state, written only by its core.  The inline read side needs
 * only the core's reader flag, which is lock_core_data() of the core (one
 * load finds it); this is found by the core number, on the write side and
 * by the DEBUG checks.
 */
struct fine_core {
    /* Whether the core holds the write side.  The read side needs no mark of its own: the
     * core's reader flag says it (brlock_read_held_as()), so the inline read side writes
     * nothing but the flag. */
    _Alignas(LOCK_CACHE_LINE) bool on_write_side;
    struct brlock_reader *reader;       /* fine_big.readers[core], set by kernel_lock_init() */
    unsigned nheld;                     /* DEBUG: entries used in held[] */
    uintptr_t held[FINE_HELD_MAX];      /* DEBUG: object locks held, any order */
};

_Static_assert(sizeof(struct fine_core) % LOCK_CACHE_LINE == 0, "per-core state on its own lines");

/* Defined in lock/fine.c. */
extern struct brlock fine_big;
extern struct fine_core fine_cores[LOCK_MAX_CORES];

/* lock/fine.c: the write side, and a read side that met a writer. */
void object_lock_init(struct object_lock *lock);
bool kernel_lock_upgrade(void);

void fine_acquire_slow(enum kernel_entry_kind kind, unsigned core, uint64_t t0);
void fine_release_write(unsigned core);

/* lock/fine.c: the DEBUG lock-order bookkeeping. */
void fine_debug_note_acquire(unsigned core, const struct object_lock *l);
void fine_debug_note_release(unsigned core, const struct object_lock *l);

static LOCK_INLINE bool kernel_lock_acquire(enum kernel_entry_kind kind)
{
    struct brlock_reader *r = lock_env_core_data();
    uint64_t t0 = lockstats_now();

    if (FINE_DEBUG && (fine_cores[lock_env_core_id()].on_write_side || brlock_read_held_as(r))) {
        lock_panic("kernel_lock_acquire: core already holds the kernel lock");
    }
    if (__builtin_expect(kind == ENTRY_IPC, 1) && brlock_read_trylock_as(&fine_big, r)) {
        lockstats_acquired(lock_env_core_id(), t0, false, BRLOCK_READ_ATTEMPT_BARRIERS);
        return false;
    }
    /* It may have waited for a writer. */
    fine_acquire_slow(kind, lock_env_core_id(), t0);
    return true;
}

static LOCK_INLINE void kernel_lock_release(void)
{
    struct brlock_reader *r = lock_env_core_data();

    if (FINE_DEBUG && fine_cores[lock_env_core_id()].nheld != 0) {
        lock_panic("kernel_lock_release: object locks still held");
    }
    if (__builtin_expect(brlock_read_held_as(r), 1)) {
        lockstats_released(lock_env_core_id(), BRLOCK_READ_UNLOCK_BARRIERS);
        brlock_read_unlock_as(r);
        return;
    }
    fine_release_write(lock_env_core_id());
}

/* Order *lo, *hi: compiles to a compare and two CMOVs, no branch. */
static LOCK_INLINE void fine_compare_exchange(uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t a = *lo, b = *hi;

    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
}

/* Sort key of locks[i]: its address; NULL and unused entries sort last. */
static LOCK_INLINE uintptr_t fine_key(struct object_lock *const *locks, unsigned n, unsigned i)
{
    return i < n && locks[i] != NULL ? (uintptr_t)locks[i] : UINTPTR_MAX;
}

/* Take the lock at `key`, in order after those this core holds. */
static LOCK_INLINE void fine_take_one(unsigned core, uintptr_t key)
{
    struct object_lock *l = (struct object_lock *)key;

    if (FINE_DEBUG) {
        fine_debug_note_acquire(core, l);
    }
    (void)ticket_acquire(&l->ticket, kernel_lock_wait_hook);
}

/* Take the lock at `key` unless it is absent or the one just taken; returns 1 if taken. */
static LOCK_INLINE unsigned fine_take(unsigned core, uintptr_t key, uintptr_t prev)
{
    if (key == UINTPTR_MAX || key == prev) {
        return 0;
    }
    fine_take_one(core, key);
    return 1;
}

/*
 * Take the non-NULL locks of locks[0..n) once each, in ascending address
 * order.  Inline and unrolled, so that with the caller's constant n the
 * keys stay in registers: NULL becomes the highest address and sorts last,
 * the five comparators of the optimal sorting network for four keys
 * (Knuth, TAOCP vol. 3, 5.3.4) order them without data-dependent branches
 * (those that compare with an unused entry fold away), and a lock passed
 * twice is equal to its neighbour and taken once.
 */
static LOCK_INLINE void object_locks_acquire(struct object_lock *const *locks, unsigned n)
{
    _Static_assert(OBJECT_LOCKS_MAX == 4, "the sorting network below is for four keys");
    if (n > OBJECT_LOCKS_MAX) {
        lock_panic("object locks: more than OBJECT_LOCKS_MAX in one call");
    }
    uintptr_t a0 = fine_key(locks, n, 0), a1 = fine_key(locks, n, 1);
    uintptr_t a2 = fine_key(locks, n, 2), a3 = fine_key(locks, n, 3);

    fine_compare_exchange(&a0, &a1);
    fine_compare_exchange(&a2, &a3);
    fine_compare_exchange(&a0, &a2);
    fine_compare_exchange(&a1, &a3);
    fine_compare_exchange(&a1, &a2);

    unsigned core = lock_env_core_id();
    unsigned taken = fine_take(core, a0, 0) + fine_take(core, a1, a0) +
                     fine_take(core, a2, a1) + fine_take(core, a3, a2);
    lockstats_barriers(core, taken * TICKET_ACQUIRE_BARRIERS);
}

/* Release l, which this core holds. */
static LOCK_INLINE void fine_give_one(unsigned core, struct object_lock *l)
{
    if (FINE_DEBUG) {
        fine_debug_note_release(core, l);
    }
    ticket_release(&l->ticket);
}

/* Release locks[i] unless it is NULL or repeats an earlier entry; returns 1 if released. */
static LOCK_INLINE unsigned fine_give(unsigned core, struct object_lock *const *locks, unsigned n, unsigned i)
{
    struct object_lock *l = i < n ? locks[i] : NULL;

    if (l == NULL || (i > 0 && locks[0] == l) || (i > 1 && locks[1] == l) ||
        (i > 2 && locks[2] == l)) {
        return 0;
    }
    fine_give_one(core, l);
    return 1;
}

/* Release order does not matter, so no sort: only NULLs and repeats are skipped. */
static LOCK_INLINE void object_locks_release(struct object_lock *const *locks, unsigned n)
{
    if (n > OBJECT_LOCKS_MAX) {
        lock_panic("object locks: more than OBJECT_LOCKS_MAX in one call");
    }
    unsigned core = lock_env_core_id();
    unsigned released = fine_give(core, locks, n, 0) + fine_give(core, locks, n, 1) +
                        fine_give(core, locks, n, 2) + fine_give(core, locks, n, 3);
    lockstats_barriers(core, released * TICKET_RELEASE_BARRIERS);
}

/*
 * One lock the caller knows to be non-NULL, in order after those this core
 * holds: object_locks_acquire(&lock, 1) without the NULL test.  The IPC
 * fastpath's only object lock, its endpoint's.
 */
static LOCK_INLINE void object_lock_acquire(struct object_lock *lock)
{
    unsigned core = lock_env_core_id();

    if (FINE_DEBUG && lock == NULL) {
        lock_panic("object locks: NULL passed to object_lock_acquire");
    }
    fine_take_one(core, (uintptr_t)lock);
    lockstats_barriers(core, TICKET_ACQUIRE_BARRIERS);
}

/* Release what object_lock_acquire() took. */
static LOCK_INLINE void object_lock_release(struct object_lock *lock)
{
    unsigned core = lock_env_core_id();

    fine_give_one(core, lock);
    lockstats_barriers(core, TICKET_RELEASE_BARRIERS);
}

#endif
