/*
 * Steps 1-2 of every kernel entry (kernel/syscall.c lists the steps):
 * note the entering thread, serve this core's mailbox, take the kernel
 * lock.  Inline in a header because two files begin entries with it: the
 * generic handlers (kernel/syscall.c) and the IPC fastpath's entry points
 * (kernel/fastpath.c).
 */
#ifndef KERNEL_ENTRY_H
#define KERNEL_ENTRY_H

#include "core.h"
#include <lock.h>

/*
 * On c, this core (my_core(), which the caller has at hand).  Returns the
 * thread whose entry this is, or NULL if a request took it away meanwhile.
 */
static ALWAYS_INLINE struct tcb *kernel_enter(struct core *c, enum kernel_entry_kind kind, bool is_syscall)
{
    struct tcb *cur = c->current;

    c->entry_thread = cur == c->idle ? NULL : cur;
    c->entry_is_syscall = is_syscall;
    core_serve_mailbox();
    kernel_lock_acquire(kind);
    return c->entry_thread;
}

#endif
