/*
 * Steps 1-2 of every kernel entry (kernel/syscall.c lists the steps):
 * note the entering thread, serve this core's mailbox, take the kernel
 * lock.  Inline in a header because two files begin entries with it: the
 * generic handlers (kernel/syscall.c) and the IPC fastpath's entry points
 * (kernel/fastpath.c, whose common entry has found its mailbox empty and
 * does steps 1 and 2 itself).
 */
#ifndef KERNEL_ENTRY_H
#define KERNEL_ENTRY_H

#include "core.h"
#include <lock.h>

/*
 * Step 1's note of the entering thread, which it returns; a system call
 * never comes from the idle thread.
 */
static ALWAYS_INLINE struct tcb *note_entry_thread(struct core *c, bool is_syscall)
{
    struct tcb *cur = c->current;
    struct tcb *t = is_syscall || cur != c->idle ? cur : NULL;

    /* The core's idle thread when nothing else runs. */
    if (!cur)
        __builtin_unreachable();
    c->entry_thread = t;
    c->entry_is_syscall = is_syscall;
    return t;
}

/*
 * On c, this core (my_core(), which the caller has at hand).  Returns the
 * thread whose entry this is, or NULL if a request took it away meanwhile.
 */
static ALWAYS_INLINE struct tcb *kernel_enter(struct core *c, enum kernel_entry_kind kind, bool is_syscall)
{
    note_entry_thread(c, is_syscall);
    core_serve_mailbox();
    kernel_lock_acquire(kind);
    return c->entry_thread;
}

#endif
