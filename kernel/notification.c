/*
 * Notifications (see notification.h).  A signal to a notification with a
 * waiter completes that waiter; otherwise it accumulates.  A bound TCB
 * blocked receiving on an endpoint is woken by a signal too: it leaves the
 * endpoint queue and returns the badge as from a Wait.
 */
#include "notification.h"
#include "core.h"
#include "endpoint.h"
#include "printf.h"
#include "sched.h"
#include <arch.h>

static void ntfn_append(struct notification *n, struct tcb *t)
{
    t->ep_next = NULL;
    t->ep_prev = n->tail;
    if (n->tail)
        n->tail->ep_next = t;
    else
        n->head = t;
    n->tail = t;
}

static void ntfn_remove(struct notification *n, struct tcb *t)
{
    if (t->ep_prev)
        t->ep_prev->ep_next = t->ep_next;
    else
        n->head = t->ep_next;
    if (t->ep_next)
        t->ep_next->ep_prev = t->ep_prev;
    else
        n->tail = t->ep_prev;
    t->ep_next = t->ep_prev = NULL;
    t->blocked_on = NULL;
    if (!n->head)
        n->state = n->pending ? NTFN_ACTIVE : NTFN_IDLE;
}

/* Complete a Wait (or a bound thread's Recv) with badge. */
static void deliver(struct tcb *t, word_t badge)
{
    arch_set_reg(&t->context, ABI_BADGE, badge);
    arch_set_reg(&t->context, ABI_MSGINFO, 0);
    arch_set_reg(&t->context, ABI_STATUS, E_OK);
}

/* Lock the notification, the thread, its ready queue and (if given) the endpoint it waits on. */
static void lock_set(struct notification *n, struct tcb *t, struct endpoint *ep, bool acquire)
{
    struct object_lock *locks[4] = {
        &n->lock, t ? &t->lock : NULL, t ? &cores[t->affinity].sched_lock : NULL,
        ep ? &ep->lock : NULL,
    };
    if (acquire)
        object_locks_acquire(locks, 4);
    else
        object_locks_release(locks, 4);
}

static void lock_pair(struct notification *n, struct tcb *t, bool acquire)
{
    lock_set(n, t, NULL, acquire);
}

/*
 * Who a signal would complete right now: the first waiter, or a bound
 * thread blocked receiving on an endpoint (*ep).  Read without locks (the
 * read side keeps objects alive) and read again once they are held.
 */
static struct tcb *signal_target(struct notification *n, struct endpoint **ep)
{
    struct tcb *w = __atomic_load_n(&n->head, __ATOMIC_RELAXED);
    struct tcb *b = __atomic_load_n(&n->bound_tcb, __ATOMIC_RELAXED);

    *ep = NULL;
    if (__atomic_load_n(&n->state, __ATOMIC_RELAXED) == NTFN_WAITING)
        return w;
    if (b && __atomic_load_n(&b->state, __ATOMIC_RELAXED) == TS_BLOCKED_RECV) {
        *ep = __atomic_load_n((struct endpoint **)&b->blocked_on, __ATOMIC_RELAXED);
        return b;
    }
    return NULL;
}

void notification_signal(struct notification *n, word_t badge)
{
    struct tcb *t;
    struct endpoint *ep, *ep2;

    for (;;) {
        t = signal_target(n, &ep);
        lock_set(n, t, ep, true);
        if (signal_target(n, &ep2) == t && ep2 == ep)
            break;
        lock_set(n, t, ep, false);
    }
    if (t && n->state == NTFN_WAITING) {
        ntfn_remove(n, t);
        deliver(t, badge);
        t->state = TS_RUNNING;
        sched_wake(t);
    } else if (t) {
        /* A bound thread receiving on an endpoint (whose lock we hold too). */
        endpoint_dequeue(ep, t);
        deliver(t, badge);
        t->state = TS_RUNNING;
        sched_wake(t);
    } else {
        n->pending |= badge;
        n->state = NTFN_ACTIVE;
    }
    lock_set(n, t, ep, false);
}

void notification_wait(struct tcb *t, struct notification *n, bool blocking)
{
    lock_pair(n, t, true);
    if (n->state == NTFN_ACTIVE) {
        deliver(t, n->pending);
        n->pending = 0;
        n->state = NTFN_IDLE;
    } else if (blocking) {
        t->state = TS_BLOCKED_NOTIFICATION;
        t->blocked_on = n;
        sched_dequeue(t);
        ntfn_append(n, t);
        n->state = NTFN_WAITING;
    } else {
        deliver(t, 0);
        arch_set_reg(&t->context, ABI_STATUS, E_WOULD_BLOCK);
    }
    lock_pair(n, t, false);
}

bool notification_poll_bound(struct tcb *t)
{
    struct notification *n = t->bound_notification;
    bool got = false;

    if (!n)
        return false;
    lock_pair(n, t, true);
    if (n->state == NTFN_ACTIVE) {
        deliver(t, n->pending);
        n->pending = 0;
        n->state = NTFN_IDLE;
        got = true;
    }
    lock_pair(n, t, false);
    return got;
}

void notification_cancel_wait(struct notification *n, struct tcb *t)
{
    ntfn_remove(n, t);
}

void notification_cancel_all(struct notification *n)
{
    while (n->head) {
        struct tcb *t = n->head;
        ipc_cancel(t);
        sched_wake(t);
    }
    n->state = n->pending ? NTFN_ACTIVE : NTFN_IDLE;
}

void notification_bind(struct notification *n, struct tcb *t)
{
    n->bound_tcb = t;
    t->bound_notification = n;
}

void notification_unbind(struct notification *n)
{
    if (n->bound_tcb) {
        n->bound_tcb->bound_notification = NULL;
        n->bound_tcb = NULL;
    }
}
