/*
 * The IPC fastpath (kernel/fastpath.c): Call and ReplyRecv in their common
 * case, with a direct switch to the partner.
 */
#ifndef KERNEL_FASTPATH_H
#define KERNEL_FASTPATH_H

#include "core.h"

/*
 * Try the fastpath for the system call of `t`, this core's entry thread,
 * with the kernel lock held (ENTRY_IPC).  True: the call is done and c->current
 * is the partner, with no ready queue touched; the caller only releases the
 * lock, runs the deferred work and returns to c->current.  False: nothing
 * was changed, and the slow path handles the call.
 */
bool fastpath_call(struct core *c, struct tcb *t);
bool fastpath_reply_recv(struct core *c, struct tcb *t);

#endif
