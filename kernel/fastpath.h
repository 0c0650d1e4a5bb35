/*
 * The IPC fastpath (kernel/fastpath.c): Call and ReplyRecv in their common
 * case, with a direct switch to the partner.
 */
#ifndef KERNEL_FASTPATH_H
#define KERNEL_FASTPATH_H

#include "core.h"

/*
 * Try the fastpath for the system call of `t`, this core's entry thread,
 * with the kernel lock held (ENTRY_IPC).  When it applies, the call is done
 * and c->current is the partner, with no ready queue touched; the fastpath
 * then ends the entry itself (lock release, deferred work, return to user)
 * and does not return.  When it returns, nothing was changed, and the slow
 * path handles the call.
 */
void fastpath_call(struct core *c, struct tcb *t);
void fastpath_reply_recv(struct core *c, struct tcb *t);

#endif
