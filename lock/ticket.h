/*
 * Ticket lock.
 *
 * Algorithm: Mellor-Crummey and Scott, "Algorithms for scalable
 * synchronization on shared-memory multiprocessors", ACM TOCS 9(1), 1991,
 * after Reed and Kanodia's sequencers and eventcounts (CACM 22(2), 1979).
 * An acquirer takes the next ticket with one atomic increment and waits
 * until the "now serving" counter reaches it; release advances the counter.
 * Used for the per-object locks of the `fine` variant (TCBs, endpoints,
 * notifications, scheduler queues) and for the writer side of the
 * big-reader lock.
 *
 * Lock word, (next, owner), each 32 bits:
 *   (n, n)      free
 *   (n+k, n)    held by ticket n, k-1 cores waiting (k >= 1)
 *   acquire:  (n+k, o) -> (n+k+1, o)  fetch_add on next, then wait for o == my ticket
 *   release:  (x, o)   -> (x, o+1)    only the holder writes owner
 *
 * Fairness and progress: FIFO in ticket order, so starvation-free; a waiter
 * waits for at most the cores ahead of it.  Not scalable: every waiter spins
 * on the same line, so each release invalidates all of them.  That is
 * acceptable for object locks, which are almost never contended (Boyd-
 * Wickizer et al. 2012 describe the collapse when they are).
 *
 * Memory ordering:
 *   - Taking a ticket is relaxed: it publishes nothing and needs to observe
 *     nothing; it only has to be atomic.
 *   - The holder's critical section is published by the release store to
 *     owner in ticket_release(); the next holder's acquire load of owner in
 *     ticket_acquire() pairs with it.
 *   - The first look at owner is that acquire load: uncontended, the lock
 *     is taken with no second load.  Otherwise the wait loop
 *     (ticket_wait(), out of line) polls owner with relaxed loads and then
 *     performs one acquire load of the same word.  Once owner equals our ticket only we
 *     can change it, so that load returns the same value; it exists for its
 *     ordering.  This keeps the DMB out of the polling loop on ARM and keeps
 *     the pairing visible to ThreadSanitizer (which does not model fences).
 *
 * Hardware assumptions: naturally aligned 32-bit atomic fetch_add, load and
 * store (LOCK XADD on x86; LDREX/STREX on ARMv7).  Fewer than 2^31 cores,
 * so ticket wrap-around cannot alias a waiter.
 */
#ifndef LOCK_TICKET_H
#define LOCK_TICKET_H

#include "lockdefs.h"
#include "barrier_cost.h"
#include "cpu_relax.h"

struct ticket_lock {
    uint32_t next;      /* next ticket to hand out */
    uint32_t owner;     /* ticket now being served; written only by the holder */
};

_Static_assert(sizeof(struct ticket_lock) == 8,
               "ticket lock is embedded in kernel objects; keep it two words");
_Static_assert(LOCK_MAX_CORES < (1u << 31),
               "ticket counters must not wrap onto a waiting core's ticket");

/* Barrier instructions on the uncontended path, for LOCKSTATS. */
#define TICKET_ACQUIRE_BARRIERS (LOCK_ARCH_BARRIERS_RMW_RELAXED + LOCK_ARCH_BARRIERS_LOAD_ACQUIRE)
#define TICKET_RELEASE_BARRIERS LOCK_ARCH_BARRIERS_STORE_RELEASE

/* Before the lock is shared: no other core may touch it yet. */
static inline void ticket_init(struct ticket_lock *t)
{
    /* Relaxed: whoever publishes the object containing the lock orders these. */
    __atomic_store_n(&t->next, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->owner, 0, __ATOMIC_RELAXED);
}

/*
 * The wait for ticket `me`, out of line: the call to hook() in the loop
 * would otherwise make the compiler save every live register of the caller
 * before the loop, on the uncontended path too.
 */
static __attribute__((noinline, cold, unused)) void ticket_wait(struct ticket_lock *t, uint32_t me,
                                                                 lock_wait_fn hook)
{
    /* Relaxed polling; the acquire load after it supplies the ordering. */
    while (__atomic_load_n(&t->owner, __ATOMIC_RELAXED) != me) {
        cpu_relax();
        hook();
    }
    /* Acquire: pairs with the release store in the previous holder's
     * ticket_release(), so its critical section happens before ours. */
    (void)__atomic_load_n(&t->owner, __ATOMIC_ACQUIRE);
}

/* Take the lock, calling hook() while waiting.  Returns whether it waited. */
static LOCK_INLINE bool ticket_acquire(struct ticket_lock *t, lock_wait_fn hook)
{
    /* Relaxed: the ticket only needs to be unique; see the header comment. */
    uint32_t me = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED);
    bool waited = false;

    /* Acquire: when it reads our ticket it pairs with the release store in
     * the previous holder's ticket_release(), so its critical section
     * happens before ours; otherwise ticket_wait() ends with one that does. */
    if (__builtin_expect(__atomic_load_n(&t->owner, __ATOMIC_ACQUIRE) != me, 0)) {
        waited = true;
        ticket_wait(t, me, hook);
    }
    return waited;
}

/* Caller must hold t. */
static LOCK_INLINE void ticket_release(struct ticket_lock *t)
{
    /* Relaxed: only the holder writes owner, so it reads its own last store. */
    uint32_t o = __atomic_load_n(&t->owner, __ATOMIC_RELAXED);
    /* Release: pairs with the acquire load in the next ticket_acquire(). */
    __atomic_store_n(&t->owner, o + 1, __ATOMIC_RELEASE);
}

/* A snapshot, for assertions and for RTM read sets; may be stale at once. */
static inline bool ticket_is_locked(const struct ticket_lock *t)
{
    /* Relaxed: a snapshot orders nothing. */
    uint32_t o = __atomic_load_n(&t->owner, __ATOMIC_RELAXED);
    uint32_t n = __atomic_load_n(&t->next, __ATOMIC_RELAXED);
    return n != o;
}

#endif
