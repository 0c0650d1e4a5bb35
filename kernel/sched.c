/*
 * Per-core priority scheduling: 256 FIFO queues per core and a two-level
 * bitmap, so the highest ready priority is found with two bit scans.
 *
 * Locking: every function touching core X's queues expects X's
 * `sched_lock` held (LOCK=fine; the write side of the big-reader lock also
 * suffices); the BKL and RTM variants hold the big lock throughout.
 */
#include "sched.h"
#include "accounting.h"
#include "core.h"
#include "printf.h"
#include "vspace.h"

/*
 * The bitmap words are written under [q] but stored with relaxed atomics:
 * the IPC fastpath reads them without [q] (sched_highest(), sched.h).  A
 * plain read-modify-write under the lock plus an atomic store costs the
 * same instructions as before.
 */
static void bitmap_set(struct core *c, unsigned prio)
{
    unsigned l1 = prio / WORD_BITS;
    __atomic_store_n(&c->ready_l2[l1], c->ready_l2[l1] | BIT(prio % WORD_BITS), __ATOMIC_RELAXED);
    __atomic_store_n(&c->ready_l1, c->ready_l1 | BIT(l1), __ATOMIC_RELAXED);
}

static void bitmap_clear(struct core *c, unsigned prio)
{
    unsigned l1 = prio / WORD_BITS;
    word_t l2 = c->ready_l2[l1] & ~BIT(prio % WORD_BITS);

    __atomic_store_n(&c->ready_l2[l1], l2, __ATOMIC_RELAXED);
    if (l2 == 0)
        __atomic_store_n(&c->ready_l1, c->ready_l1 & ~BIT(l1), __ATOMIC_RELAXED);
}

static void notify_core(unsigned core)
{
    if (core != arch_core_id())
        core_defer_ipi(core);
}

static struct tcb_queue_ends ready_queue(struct tcb *t)
{
    struct ready_queue *q = &cores[t->affinity].ready[t->priority];
    return (struct tcb_queue_ends){ &q->head, &q->tail };
}

void sched_enqueue(struct tcb *t, enum queue_end end)
{
    struct core *c = &cores[t->affinity];

    assert(tcb_runnable(t));
    if (t->in_ready_queue)
        return;
    tcb_queue_insert(ready_queue(t), t, LINKS_READY, end);
    t->in_ready_queue = 1;
    bitmap_set(c, t->priority);
    notify_core(t->affinity);
}

void sched_dequeue(struct tcb *t)
{
    struct core *c = &cores[t->affinity];
    struct ready_queue *q = &c->ready[t->priority];

    if (!t->in_ready_queue)
        return;
    tcb_queue_remove(ready_queue(t), t, LINKS_READY);
    t->in_ready_queue = 0;
    if (q->head == NULL)
        bitmap_clear(c, t->priority);
}

/*
 * A thread became runnable.  On this core, a woken thread at least as
 * important as the current one goes to the front of its queue, so that a
 * server woken by a Call runs next (the caller has just blocked); elsewhere
 * it queues at the tail and its core is told by IPI to reschedule.
 */
void sched_wake(struct tcb *t)
{
    struct tcb *cur = current_thread();

    if (t->state != TS_RESTART)
        t->state = TS_RUNNING;
    if (t == cur && t->affinity == arch_core_id())
        return;
    if (t->affinity == arch_core_id() && (!tcb_runnable(cur) || t->priority >= cur->priority))
        sched_enqueue(t, QUEUE_FRONT);
    else
        sched_enqueue(t, QUEUE_BACK);
}

void sched_yield_current(void)
{
    struct core *c = my_core();
    struct tcb *cur = c->current;

    struct object_lock *qlock = &c->sched_lock;

    if (cur == c->idle || !tcb_runnable(cur) || cur->affinity != arch_core_id())
        return;
    object_locks_acquire(&qlock, 1);
    cur->timeslice = TIMESLICE_TICKS;
    sched_enqueue(cur, QUEUE_BACK);
    object_locks_release(&qlock, 1);
}

/*
 * An idle core takes no tick.  A tick only counts down the current
 * thread's timeslice, and the idle thread has none; under a big lock an
 * idle core's tick would still wait for the lock, taking time from the
 * cores that work (under QEMU, host time from the lock holder's virtual
 * CPU).  Nothing is lost while it is stopped: a thread becomes runnable
 * here either on this core, which then is not idle, or from another core,
 * which sends this one a reschedule IPI (sched_enqueue()).  Every way to
 * the idle thread and back passes schedule(): the IPC fastpath switches
 * only between two threads.
 */
static void tick_follow_idle(struct core *c)
{
    bool idle = c->current == c->idle;

    if (idle == c->tick_stopped)
        return;
    if (idle)
        arch_timer_stop();
    else
        arch_timer_rearm();
    c->tick_stopped = idle;
}

void sched_tick(void)
{
    struct core *c = my_core();
    struct tcb *cur = c->current;

    /* Raised just before the timer was stopped: it stays stopped. */
    if (c->tick_stopped)
        return;
    accounting_count_tick(c);
    if (cur == c->idle || !tcb_runnable(cur))
        return;
    if (cur->timeslice > 1) {
        cur->timeslice--;
        return;
    }
    sched_yield_current();
}

/*
 * Choose what this core runs next.  The current thread keeps the core if
 * it is still runnable here and nothing of higher priority is ready; if
 * something is, it goes back to the front of its queue (it keeps its place).
 */
void schedule(void)
{
    struct core *c = my_core();
    unsigned me = arch_core_id();
    struct tcb *cur = c->current;
    bool cur_ok = cur != c->idle && tcb_runnable(cur) && cur->affinity == me &&
                  !cur->in_ready_queue;
    int h;
    struct tcb *next;
    struct object_lock *qlock = &c->sched_lock;

    /* Other cores' IPC may be adding to our queues (LOCK=fine, read side). */
    object_locks_acquire(&qlock, 1);
    h = sched_highest(me);
    if (cur_ok && (h < 0 || cur->priority >= (unsigned)h)) {
        next = cur;
    } else {
        if (cur_ok)
            sched_enqueue(cur, QUEUE_FRONT);
        h = sched_highest(me);
        if (h < 0) {
            next = c->idle;
        } else {
            next = c->ready[h].head;
            sched_dequeue(next);
        }
    }
    if (next != c->idle && next->timeslice == 0)
        next->timeslice = TIMESLICE_TICKS;
    c->current = next;
    object_locks_release(&qlock, 1);
    if (next != c->idle)
        vspace_switch_deferred(c, next);
    tick_follow_idle(c);
}

/*
 * Make sure no core runs t any more (it is about to be freed or moved).
 * Its own queue entry is dropped; a core running it switches to its idle
 * thread, acknowledging before we continue (the caller holds the lock
 * exclusively, so the other core's reply never needs it).
 */
void sched_evict(struct tcb *t)
{
    unsigned core = t->affinity;
    struct core *c = &cores[core];

    sched_dequeue(t);
    if (core == arch_core_id()) {
        if (c->current == t)
            c->current = c->idle;
        return;
    }
    /* c->current changes only under the lock we hold, or by serving our own request. */
    if (c->current == t)
        core_request(core, REQ_LEAVE_TCB, t, 0, 0, false);
}
