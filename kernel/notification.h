/*
 * Notifications: an array of binary semaphores in one word.  Signals OR
 * their badge into the pending word; Wait returns and clears it, or blocks.
 * A notification may be bound to one TCB, which then also receives signals
 * while it waits on an endpoint.
 *
 * Under LOCK=fine every field is protected by its object lock [n].
 */
#ifndef KERNEL_NOTIFICATION_H
#define KERNEL_NOTIFICATION_H

#include "types.h"
#include "tcb.h"

#define NOTIFICATION_BITS 6

enum notification_state {
    NTFN_IDLE = 0,
    NTFN_WAITING,   /* the queue holds waiters, pending is 0 */
    NTFN_ACTIVE,    /* signalled, nobody waits; pending may be 0 after an unbadged signal */
};

struct notification {
    struct object_lock lock;
    word_t state;               /* [n] enum notification_state */
    word_t pending;             /* [n] OR of the badges signalled since the last Wait */
    struct tcb *head;           /* [n] waiters, FIFO */
    struct tcb *tail;           /* [n] */
    struct tcb *bound_tcb;      /* [w] */
};

_Static_assert(sizeof(struct notification) <= (1u << NOTIFICATION_BITS), "a notification fits its object size");

/*
 * Signal, Wait and the bound-notification poll.  Caller holds the kernel
 * lock (the read side suffices under LOCK=fine) and no object lock; each
 * takes the notification's, the thread's and its [q] locks, and for a
 * bound receiver its endpoint's, itself (kernel/ipc_locks.h).
 */
void notification_signal(struct notification *n, word_t badge);
void notification_wait(struct tcb *t, struct notification *n, bool blocking);
/* A bound thread about to Recv on an endpoint takes a pending signal first. */
bool notification_poll_bound(struct tcb *t);

/* The rest change [w] fields, or any waiter: caller holds the write side (or the big lock). */
void notification_cancel_wait(struct notification *n, struct tcb *t);
void notification_cancel_all(struct notification *n);
void notification_bind(struct notification *n, struct tcb *t);
void notification_unbind(struct notification *n);

#endif
