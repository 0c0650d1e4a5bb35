/*
 * Notifications (see notification.h).  A signal to a notification with a
 * waiter completes that waiter; otherwise it accumulates.  A bound TCB
 * blocked receiving on an endpoint is woken by a signal too: it leaves the
 * endpoint queue and returns the badge as from a Wait.
 */
#include "notification.h"
#include "core.h"
#include "endpoint.h"
#include "ipc_locks.h"
#include "printf.h"
#include "sched.h"
#include "tcb_queue.h"
#include <arch.h>

static struct tcb_queue_ends ntfn_queue(struct notification *n)
{
    return (struct tcb_queue_ends){ &n->head, &n->tail };
}

static void ntfn_remove(struct notification *n, struct tcb *t)
{
    tcb_queue_remove(ntfn_queue(n), t, LINKS_WAIT);
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

/* Complete t's Wait with the pending bits of the active notification n, which becomes idle. */
static void deliver_pending(struct tcb *t, struct notification *n)
{
    deliver(t, n->pending);
    n->pending = 0;
    n->state = NTFN_IDLE;
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
    struct ipc_locks locks;

    /* The thread a signal completes, and the endpoint it leaves if it is a bound receiver. */
    for (;;) {
        t = signal_target(n, &ep);
        locks = ipc_locks_of(&n->lock, ep ? &ep->lock : NULL, t);
        ipc_locks_acquire(&locks);
        if (signal_target(n, &ep2) == t && ep2 == ep)
            break;
        ipc_locks_release(&locks);
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
    ipc_locks_release(&locks);
}

void notification_wait(struct tcb *t, struct notification *n, bool blocking)
{
    struct ipc_locks locks = ipc_locks_of(&n->lock, NULL, t);

    ipc_locks_acquire(&locks);
    if (n->state == NTFN_ACTIVE) {
        deliver_pending(t, n);
    } else if (blocking) {
        t->state = TS_BLOCKED_NOTIFICATION;
        t->blocked_on = n;
        sched_dequeue(t);
        tcb_queue_insert(ntfn_queue(n), t, LINKS_WAIT, QUEUE_BACK);
        n->state = NTFN_WAITING;
    } else {
        deliver(t, 0);
        arch_set_reg(&t->context, ABI_STATUS, E_WOULD_BLOCK);
    }
    ipc_locks_release(&locks);
}

bool notification_poll_bound(struct tcb *t)
{
    struct notification *n = t->bound_notification;
    struct ipc_locks locks;
    bool got = false;

    if (!n)
        return false;
    locks = ipc_locks_of(&n->lock, NULL, t);
    ipc_locks_acquire(&locks);
    if (n->state == NTFN_ACTIVE) {
        deliver_pending(t, n);
        got = true;
    }
    ipc_locks_release(&locks);
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
