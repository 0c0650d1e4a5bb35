/*
 * Endpoints: synchronous rendezvous IPC with badges and capability transfer.
 * A queue holds either senders or receivers, never both, in FIFO order.
 *
 * Under LOCK=fine every field is protected by the endpoint's object lock
 * [e], taken together with the locks of the TCBs involved.
 */
#ifndef KERNEL_ENDPOINT_H
#define KERNEL_ENDPOINT_H

#include "types.h"
#include "tcb.h"
#include "tcb_queue.h"

#define ENDPOINT_BITS 6

enum endpoint_state {
    EP_IDLE = 0,
    EP_SEND,    /* the queue holds blocked senders */
    EP_RECV,    /* the queue holds blocked receivers */
};

struct endpoint {
    struct object_lock lock;
    word_t state;               /* [e] enum endpoint_state */
    struct tcb *head;           /* [e] */
    struct tcb *tail;           /* [e] */
};

_Static_assert(sizeof(struct endpoint) <= (1u << ENDPOINT_BITS), "an endpoint fits its object size");

struct invocation;

/*
 * System calls on an endpoint cap (kernel/endpoint.c).  Caller holds the
 * kernel lock (the read side suffices under LOCK=fine) and no object lock;
 * they take the endpoint's, both threads' and the partner's [q] locks
 * themselves (kernel/ipc_locks.h).
 */
void endpoint_send(struct tcb *sender, struct endpoint *ep, const struct cap *cap,
                   bool blocking, bool is_call);
/*
 * Receive on ep.  Returns false, having changed nothing, when a queued
 * sender's message carries caps and !general_held: the caller must take the
 * lock for general work (kernel_lock_upgrade()) and call again.  Locks as
 * endpoint_send().
 */
bool endpoint_receive(struct tcb *receiver, struct endpoint *ep, const struct cap *cap, bool blocking,
                      bool general_held);

/* Deliver a fault of `t` to the endpoint (as a blocking Call).  Locks as endpoint_send(). */
void endpoint_send_fault(struct tcb *t, struct endpoint *ep, word_t badge);

/* Take a thread out of whatever IPC it is blocked in; it restarts its system call.
 * Caller holds the write side (LOCK=fine) or the big lock. */
void ipc_cancel(struct tcb *t);

/* The endpoint is being destroyed: every waiter restarts (and sees the cap gone).  Caller holds the write side. */
void endpoint_cancel_all(struct endpoint *ep);

/* Threads blocked sending with `badge` restart (badged caps revoked).  Caller holds the write side. */
void endpoint_cancel_badged(struct endpoint *ep, word_t badge);

/*
 * The queue operations are inline: the fastpath does one per kernel entry,
 * and out of line each cost a call, a return and the pushes around them.
 */
static inline struct tcb_queue_ends endpoint_queue(struct endpoint *ep)
{
    return (struct tcb_queue_ends){ &ep->head, &ep->tail };
}

/* Remove t from ep's queue (caller holds [e] and [t]). */
static inline void endpoint_dequeue(struct endpoint *ep, struct tcb *t)
{
    tcb_queue_remove(endpoint_queue(ep), t, LINKS_WAIT);
    t->blocked_on = NULL;
    if (!ep->head)
        ep->state = EP_IDLE;
}

/* endpoint_dequeue(ep, t) for t at the head of the queue (caller holds [e] and [t]). */
static inline void endpoint_dequeue_head(struct endpoint *ep, struct tcb *t)
{
    if (!tcb_queue_remove_head(endpoint_queue(ep), t, LINKS_WAIT))
        ep->state = EP_IDLE;
    t->blocked_on = NULL;
}

/* Append t to ep's queue; the caller sets ep->state (caller holds [e] and [t]). */
static inline void endpoint_append(struct endpoint *ep, struct tcb *t)
{
    tcb_queue_insert(endpoint_queue(ep), t, LINKS_WAIT, QUEUE_BACK);
}

/*
 * The thread at the head of ep's queue if the queue holds `state` waiters.
 * LOCK=fine: may be called without [e] to identify the partner before
 * locking; the answer is then only a guess, which the caller checks again
 * once it holds [e] (the read side keeps the TCB alive meanwhile).
 */
static inline struct tcb *endpoint_peek(struct endpoint *ep, enum endpoint_state state)
{
    /* Relaxed: a guess, re-checked under [e], whose acquire orders the rest. */
    struct tcb *h = __atomic_load_n(&ep->head, __ATOMIC_RELAXED);
    return __atomic_load_n(&ep->state, __ATOMIC_RELAXED) == state ? h : NULL;
}

/*
 * The same, exact: caller holds [e] (or a kernel lock that excludes every
 * other core).  An endpoint whose state is not EP_IDLE has waiters, so the
 * compiler may take the head it returns as non-NULL.
 */
static inline struct tcb *endpoint_waiter(struct endpoint *ep, enum endpoint_state state)
{
    if (ep->state != state)
        return NULL;
    if (state != EP_IDLE && !ep->head)
        __builtin_unreachable();
    return ep->head;
}

/*
 * Message transfer between two threads (kernel/endpoint.c): registers,
 * buffer, caps, badge.  Caller holds both threads' locks; the write side
 * too when the message carries caps (they go into the CDT).
 */
void ipc_transfer(struct tcb *sender, struct tcb *receiver, word_t badge, bool grant);

#endif
