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

/*
 * A link field of t, by its offset in struct tcb.  Offsets rather than
 * function pointers: sched_enqueue() passes `end` at run time, and this way
 * choosing the fields is two selects, not indirect calls.
 */
static inline struct tcb **tcb_link(struct tcb *t, size_t offset)
{
    return (struct tcb **)((char *)t + offset);
}

static inline size_t tcb_next_offset(enum tcb_links links)
{
    return links == LINKS_READY ? offsetof(struct tcb, sched_next) : offsetof(struct tcb, ep_next);
}

static inline size_t tcb_prev_offset(enum tcb_links links)
{
    return links == LINKS_READY ? offsetof(struct tcb, sched_prev) : offsetof(struct tcb, ep_prev);
}

static inline struct tcb **tcb_link_next(struct tcb *t, enum tcb_links links)
{
    return tcb_link(t, tcb_next_offset(links));
}

static inline struct tcb **tcb_link_prev(struct tcb *t, enum tcb_links links)
{
    return tcb_link(t, tcb_prev_offset(links));
}

/* Link t in at one end. */
static inline void tcb_queue_insert(struct tcb_queue_ends q, struct tcb *t, enum tcb_links links,
                                    enum queue_end end)
{
    bool front = end == QUEUE_FRONT;
    struct tcb **first = front ? q.head : q.tail;
    struct tcb **other = front ? q.tail : q.head;
    /* The link toward the rest of the queue, and the one away from it, as seen from `end`. */
    size_t inward = front ? tcb_next_offset(links) : tcb_prev_offset(links);
    size_t outward = front ? tcb_prev_offset(links) : tcb_next_offset(links);

    *tcb_link(t, outward) = NULL;
    *tcb_link(t, inward) = *first;
    if (*first)
        *tcb_link(*first, outward) = t;
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

/* tcb_queue_remove() for t at the head, whose prev link is already NULL; returns the new head. */
static inline struct tcb *tcb_queue_remove_head(struct tcb_queue_ends q, struct tcb *t, enum tcb_links links)
{
    struct tcb *next = *tcb_link_next(t, links);

    *q.head = next;
    if (next)
        *tcb_link_prev(next, links) = NULL;
    else
        *q.tail = NULL;
    *tcb_link_next(t, links) = NULL;
    return next;
}

#endif
