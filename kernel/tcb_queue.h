/*
 * Queues of TCBs: doubly linked through a pair of link fields of the TCB,
 * with a head and a tail kept by the owner.  The ready queues (sched.c)
 * link through sched_next/sched_prev; endpoint and notification wait
 * queues through ep_next/ep_prev, so a thread can be in one of each.
 *
 * Caller holds the lock of the queue's owner ([q] for a ready queue, the
 * endpoint's or notification's lock for a wait queue, or the write side
 * under LOCK=fine; the big lock elsewhere) and the TCB's.
 */
#ifndef KERNEL_TCB_QUEUE_H
#define KERNEL_TCB_QUEUE_H

#include "tcb.h"

/* Which pair of a TCB's links a queue uses. */
enum tcb_links {
    LINKS_READY,    /* sched_next, sched_prev */
    LINKS_WAIT,     /* ep_next, ep_prev */
};

/* Where a TCB joins a queue. */
enum queue_end {
    QUEUE_BACK,
    QUEUE_FRONT,
};

/* A queue's ends, as its owner stores them. */
struct tcb_queue_ends {
    struct tcb **head;
    struct tcb **tail;
};

static inline struct tcb **tcb_link_next(struct tcb *t, enum tcb_links links)
{
    return links == LINKS_READY ? &t->sched_next : &t->ep_next;
}

static inline struct tcb **tcb_link_prev(struct tcb *t, enum tcb_links links)
{
    return links == LINKS_READY ? &t->sched_prev : &t->ep_prev;
}

/* Link t in at one end. */
static inline void tcb_queue_insert(struct tcb_queue_ends q, struct tcb *t, enum tcb_links links,
                                    enum queue_end end)
{
    struct tcb **first = end == QUEUE_FRONT ? q.head : q.tail;
    struct tcb **other = end == QUEUE_FRONT ? q.tail : q.head;
    /* Toward the middle of the queue, and away from it, as seen from `end`. */
    struct tcb **(*inward)(struct tcb *, enum tcb_links) = end == QUEUE_FRONT ? tcb_link_next : tcb_link_prev;
    struct tcb **(*outward)(struct tcb *, enum tcb_links) = end == QUEUE_FRONT ? tcb_link_prev : tcb_link_next;

    *outward(t, links) = NULL;
    *inward(t, links) = *first;
    if (*first)
        *outward(*first, links) = t;
    else
        *other = t;
    *first = t;
}

/* Unlink t, which is in the queue. */
static inline void tcb_queue_remove(struct tcb_queue_ends q, struct tcb *t, enum tcb_links links)
{
    struct tcb *next = *tcb_link_next(t, links), *prev = *tcb_link_prev(t, links);

    if (prev)
        *tcb_link_next(prev, links) = next;
    else
        *q.head = next;
    if (next)
        *tcb_link_prev(next, links) = prev;
    else
        *q.tail = prev;
    *tcb_link_next(t, links) = NULL;
    *tcb_link_prev(t, links) = NULL;
}

#endif
