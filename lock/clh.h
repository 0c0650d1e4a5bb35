/*
 * CLH queue lock: the big kernel lock of the `bkl` variant and the fallback
 * lock of the `rtm` variant.  Algorithm notes are in clh.c.
 *
 * Storage: the caller provides ncores + 1 struct clh_core.  Entry i
 * (i < ncores) holds core i's private pointers; every entry also holds one
 * queue node.  Nodes wander between cores (a core leaves its node to its
 * successor and adopts its predecessor's), so entry i's node is not "core
 * i's node" after the first release; entry ncores starts as the dummy node
 * the empty queue points at.
 */
#ifndef LOCK_CLH_H
#define LOCK_CLH_H

#include "lockdefs.h"
#include "barrier_cost.h"
#include "cpu_relax.h"

/* A queue node: one word, alone on its cache line, spun on by one core. */
struct clh_node {
    _Alignas(LOCK_CACHE_LINE) uint32_t locked;  /* nonzero: owner holds or waits for the lock; 0: released */
};

struct clh_core {
    struct clh_node node;                       /* storage for one wandering node */
    _Alignas(LOCK_CACHE_LINE) struct clh_node *mine;  /* core-private: node to enqueue next */
    struct clh_node *held;                      /* core-private: node the last acquire enqueued */
#if defined(__arm__)
    struct clh_node **tail;                     /* core-private: &lock->tail, one load where its
                                                   address costs a MOVW/MOVT pair (clh_armv7.h) */
#endif
};

struct clh_lock {
    _Alignas(LOCK_CACHE_LINE) struct clh_node *tail;  /* the one word every acquirer writes */
    _Alignas(LOCK_CACHE_LINE) struct clh_core *cores; /* read-only after clh_init() */
};

_Static_assert(sizeof(struct clh_node) == LOCK_CACHE_LINE, "a CLH node is one cache line");
_Static_assert(sizeof(struct clh_core) == 2 * LOCK_CACHE_LINE,
               "node line and core-private line must not share a line");
_Static_assert(_Alignof(struct clh_lock) == LOCK_CACHE_LINE, "CLH tail on its own line");

/* Entries of struct clh_core the caller must provide for ncores cores. */
#define CLH_CORES_STORAGE(ncores) ((ncores) + 1)

/* Before any core uses the lock; cores[] has CLH_CORES_STORAGE(ncores) entries. */
void clh_init(struct clh_lock *lock, struct clh_core *cores, unsigned ncores);

/*
 * Take the lock on behalf of the core whose entry of the lock's storage is
 * c (clh_acquire_as), or of `core` (0 .. ncores-1; clh_acquire), calling
 * hook() on every iteration of the wait.  Passing the entry saves finding
 * it: a caller that keeps a pointer to it at hand pays one load, not the
 * load of the table and the index arithmetic.  Returns whether it had to
 * wait.  A core must not acquire a lock it already holds or waits for.
 *
 * Inline, as is clh_release(): this pair runs on every kernel entry of the
 * `bkl` variant, and a call layer costs as many instructions as the
 * uncontended lock itself.  The memory-ordering argument is in clh.c.
 */
/*
 * The wait for the predecessor, out of line: the call to hook() in the
 * loop would otherwise make the compiler save every live register of the
 * caller before the loop, on the uncontended path too.
 */
static __attribute__((noinline, cold, unused)) void clh_wait(const struct clh_node *pred, lock_wait_fn hook)
{
    /* Relaxed polling of the predecessor's own line. */
    while (__atomic_load_n(&pred->locked, __ATOMIC_RELAXED) != 0) {
        cpu_relax();
        hook();
    }
    /* Acquire: pairs with the release store in the predecessor's
     * clh_release(); it reads the same 0 (see clh.c). */
    (void)__atomic_load_n(&pred->locked, __ATOMIC_ACQUIRE);
}

#if defined(__arm__)
/* ARMv7: clh_acquire_as() and clh_release_as() by hand, with one DMB each
 * where C11's mapping needs three and one. */
#include "clh_armv7.h"
#else
/* Barrier instructions per operation, for LOCKSTATS (same contended or not). */
#define CLH_ACQUIRE_BARRIERS (LOCK_ARCH_BARRIERS_RMW_ACQ_REL + LOCK_ARCH_BARRIERS_LOAD_ACQUIRE)
#define CLH_RELEASE_BARRIERS LOCK_ARCH_BARRIERS_STORE_RELEASE

static LOCK_INLINE bool clh_acquire_as(struct clh_lock *lock, struct clh_core *c, lock_wait_fn hook)
{
    struct clh_node *n = c->mine;
    bool waited = false;

    /* Relaxed: published by the release half of the swap just below. */
    __atomic_store_n(&n->locked, 1, __ATOMIC_RELAXED);
    /* Acq_rel: release pairs with the next acquirer's swap (it will read
     * our 1); acquire pairs with the predecessor's swap (we read its 1). */
    struct clh_node *pred = __atomic_exchange_n(&lock->tail, n, __ATOMIC_ACQ_REL);

    /* Acquire: when it reads 0 it pairs with the release store in the
     * predecessor's clh_release() (see clh.c); otherwise clh_wait() polls
     * and ends with the acquire load that does. */
    if (__builtin_expect(__atomic_load_n(&pred->locked, __ATOMIC_ACQUIRE) != 0, 0)) {
        waited = true;
        clh_wait(pred, hook);
    }
    /* The predecessor's node is ours from here: its owner released it and
     * adopted its own predecessor's, and we were its only spinner.  It is
     * the node of our next acquire; the release needs only the one held. */
    c->held = n;
    c->mine = pred;
    return waited;
}

/* Caller, whose entry of the lock's storage is c, must hold the lock. */
static LOCK_INLINE void clh_release_as(struct clh_core *c)
{
    /* Release: pairs with the successor's acquire load in clh_acquire().
     * From here the node belongs to the successor. */
    __atomic_store_n(&c->held->locked, 0, __ATOMIC_RELEASE);
}
#endif

/* The same, for the caller `core`: its entry is lock->cores[core]. */
static LOCK_INLINE bool clh_acquire(struct clh_lock *lock, unsigned core, lock_wait_fn hook)
{
    return clh_acquire_as(lock, &lock->cores[core], hook);
}

static LOCK_INLINE void clh_release(struct clh_lock *lock, unsigned core)
{
    clh_release_as(&lock->cores[core]);
}

/*
 * Whether some core holds or waits for the lock.  Inside an RTM transaction
 * this puts the tail word and the tail node in the read set, so any later
 * acquire aborts the transaction.  Elsewhere a snapshot.
 */
static inline bool clh_is_locked(const struct clh_lock *lock)
{
    /* Acquire: pairs with the release half of the exchange in clh_acquire(),
     * so the node's `locked = 1` written before enqueueing is visible. */
    const struct clh_node *t = __atomic_load_n(&lock->tail, __ATOMIC_ACQUIRE);
    /* Relaxed: a snapshot; ordering of the caller's later accesses is the
     * caller's business (a transaction, or a subsequent real acquire). */
    return __atomic_load_n(&t->locked, __ATOMIC_RELAXED) != 0;
}

#endif
