/*
 * The scheduler: per-core ready queues, 256 priorities, round robin within
 * a priority.  The running thread is not in its queue.  A thread runs only
 * on core `affinity`; only TCB SetAffinity changes it.
 */
#ifndef KERNEL_SCHED_H
#define KERNEL_SCHED_H

#include "core.h"
#include "tcb.h"
#include "tcb_queue.h"

/*
 * Put a runnable thread at one end of its core's queue for its priority
 * (QUEUE_FRONT: it runs next at that priority); IPI that core if remote.
 * Caller holds [q] of t's core (cores[t->affinity].sched_lock) and t's lock.
 */
void sched_enqueue(struct tcb *t, enum queue_end end);
/* Take t off its ready queue, if it is in one.  Caller holds [q] of t's core and t's lock. */
void sched_dequeue(struct tcb *t);

/* A thread became runnable (IPC, resume, signal).  Caller holds t's lock and [q] of t's core. */
void sched_wake(struct tcb *t);

/*
 * Pick the next thread on this core and make it current; defers its vspace
 * load.  Caller holds the kernel lock and no object lock; takes this core's [q].
 */
void schedule(void);

/*
 * The current thread gave up the core (Yield, timeslice over): requeue it
 * at the tail.  Caller holds the kernel lock and no object lock; takes [q].
 */
void sched_yield_current(void);

/* Timer tick on this core: rearm the timer, account the timeslice.  Locks as sched_yield_current(). */
void sched_tick(void);

/*
 * Make sure t runs on no core but its own queue (for deletion, migration):
 * IPI and wait.  Caller holds the write side (LOCK=fine) or the big lock.
 */
void sched_evict(struct tcb *t);

/*
 * The highest ready priority of `core`, or -1.  Exact under the core's
 * [q] (or the write side).  The IPC fastpath calls it for its own core
 * without [q]: another core may be queueing a thread here at that moment
 * (LOCK=fine), and then the answer may miss it.  That is harmless: such a
 * core sends this one a reschedule IPI after its lock release
 * (sched_enqueue), so this core reschedules right after it returns to
 * user, exactly as if that thread had been queued just after this entry.
 */
static ALWAYS_INLINE int sched_highest(unsigned core)
{
    struct core *c = &cores[core];
    /* Relaxed: see above; under [q] the lock orders these loads. */
    word_t l1 = __atomic_load_n(&c->ready_l1, __ATOMIC_RELAXED);

    if (l1 == 0)
        return -1;
    unsigned i = (unsigned)(WORD_BITS - 1 - (unsigned)__builtin_clzl(l1));
    word_t l2 = __atomic_load_n(&c->ready_l2[i], __ATOMIC_RELAXED);
    /* Without [q], only a racing enqueue (on the read side remote cores only
     * add to this core's queues) can show l1's bit before l2's: treat that
     * thread as not queued yet, as above. */
    if (l2 == 0)
        return -1;
    return (int)(i * WORD_BITS + (WORD_BITS - 1 - (unsigned)__builtin_clzl(l2)));
}

#endif
