/*
 * Reply capabilities (seL4 without MCS).  Each TCB owns a master reply cap
 * in its TCB_SLOT_REPLY; a Call that is received makes a reply cap, child
 * of the caller's master, in the receiver's TCB_SLOT_CALLER.  The master
 * and its single child form a small list of their own outside the global
 * CDT list, so linking one touches only the two TCBs the IPC has locked.
 */
#ifndef KERNEL_REPLY_H
#define KERNEL_REPLY_H

#include "tcb.h"

/* The receiver now holds a reply cap to caller (replacing any previous one).
 * Caller holds both TCBs' locks. */
void reply_setup(struct tcb *caller, struct tcb *receiver, bool grant);

/* SYS_REPLY: answer the caller named by t's caller slot, if any.
 * Caller holds the kernel lock and no object lock; takes the TCB locks. */
void reply_from(struct tcb *t);

/* Send on a reply cap saved in a CSpace slot (SaveCaller): the same as a Reply through it.
 * Caller holds the write side (the slot is in a CNode) and no object lock. */
struct cte;
void reply_via(struct tcb *t, struct cte *slot);

/* A reply cap was used or replaced: empty its slot, unlinking it from its master.
 * Caller holds the locks of the slot's TCB and of the master's, or the write side. */
void reply_clear(struct cte *slot);

/* The caller stops waiting (cancelled): the reply cap to it disappears.
 * Caller holds the write side. */
void reply_cancel(struct tcb *caller);

#endif
