/*
 * The IPC fastpath (kernel/fastpath.c): Call and ReplyRecv in their common
 * case, with a direct switch to the partner.
 *
 * Its entry points, fastpath_call() and fastpath_reply_recv(), are declared
 * in arch.h with the other handlers the entry code calls: the port's entry
 * stub sends those two system calls there instead of to handle_syscall().
 * Each does steps 1-2 of the entry (kernel/entry.h).  When the fastpath
 * applies, the call is done and c->current is the partner, with no ready
 * queue touched, and the entry ends there (lock release, deferred work,
 * return to user).  Otherwise nothing was changed and the call goes on to
 * syscall_slowpath() under the same lock acquisition.
 */
#ifndef KERNEL_FASTPATH_H
#define KERNEL_FASTPATH_H

#include "core.h"

/* kernel/syscall.c: steps 3-5 of a system call, for t as kernel_enter() returned it. */
_Noreturn void syscall_slowpath(struct tcb *t, word_t sysno);

#endif
