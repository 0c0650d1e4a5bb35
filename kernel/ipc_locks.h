/*
 * The object locks of one step on an endpoint or a notification
 * (LOCK=fine; empty operations elsewhere).  Every such step locks the same
 * shape of set: the object, a second lock (the calling TCB, or the
 * endpoint a signalled thread is leaving), and the TCB whose state the
 * step changes together with its core's ready queue ([q]), because waking
 * that thread queues it there.  The callers identify every object first
 * (the read side keeps them alive), take the whole set in one
 * object_locks_acquire() call, which orders it by address, and check that
 * what they identified still holds; otherwise they release and retry.
 */
#ifndef KERNEL_IPC_LOCKS_H
#define KERNEL_IPC_LOCKS_H

#include "core.h"
#include "tcb.h"
#include <lock.h>

struct ipc_locks {
    struct object_lock *lock[OBJECT_LOCKS_MAX];
};

/* The set for `object` and `second` (either may be NULL) and the thread `woken` (may be NULL). */
static inline struct ipc_locks ipc_locks_of(struct object_lock *object, struct object_lock *second,
                                            struct tcb *woken)
{
    return (struct ipc_locks){ {
        object,
        second,
        woken ? &woken->lock : NULL,
        woken ? &cores[woken->affinity].sched_lock : NULL,
    } };
}

static inline void ipc_locks_acquire(const struct ipc_locks *s)
{
    object_locks_acquire(s->lock, OBJECT_LOCKS_MAX);
}

static inline void ipc_locks_release(const struct ipc_locks *s)
{
    object_locks_release(s->lock, OBJECT_LOCKS_MAX);
}

#endif
