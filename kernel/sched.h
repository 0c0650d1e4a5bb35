/*
 * The scheduler: per-core ready queues, 256 priorities, round robin within
 * a priority.  The running thread is not in its queue.  A thread runs only
 * on core `affinity`; only TCB SetAffinity changes it.
 */
#ifndef KERNEL_SCHED_H
#define KERNEL_SCHED_H

#include "tcb.h"

/* Put a runnable thread at the tail (or head) of its core's queue; IPI that core if remote. */
void sched_enqueue(struct tcb *t);
void sched_enqueue_front(struct tcb *t);
void sched_dequeue(struct tcb *t);

/* A thread became runnable (IPC, resume, signal). */
void sched_wake(struct tcb *t);

/* Pick the next thread on this core and make it current; defers its vspace load. */
void schedule(void);

/* The current thread gave up the core (Yield, timeslice over): requeue it at the tail. */
void sched_yield_current(void);

/* The current thread stopped being runnable: schedule() will pick another. */
void sched_current_blocked(void);

/* Set the thread's state; takes it off its ready queue if it stops being runnable. */
void thread_set_state(struct tcb *t, enum thread_state s);

/* Timer tick on this core: account the timeslice. */
void sched_tick(void);

/* Make sure t runs on no core but its own queue (for deletion, migration): IPI and wait. */
void sched_evict(struct tcb *t);

/* Per-core highest ready priority, or -1. */
int sched_highest(unsigned core);

#endif
