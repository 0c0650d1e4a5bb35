/*
 * Kernel entries: system calls, interrupts and user faults.
 *
 * Every entry follows the same steps:
 *   1. note the entering thread, serve this core's mailbox;
 *   2. take the kernel lock (ENTRY_IPC for IPC, notifications, replies,
 *      yield and interrupts; ENTRY_GENERAL otherwise), serving the mailbox
 *      while waiting;
 *   3. if a request took the thread away meanwhile, skip to 5;
 *   4. decode (all checks), then execute (cannot fail);
 *   5. schedule, release the lock, run the deferred hardware work, return.
 *
 * Call and ReplyRecv go from the entry stub straight to the fastpath
 * (kernel/fastpath.c), which does steps 1-2 itself, handles the common
 * case with a direct switch and otherwise leaves the call untouched for
 * syscall_slowpath(), under the same lock acquisition.
 *
 * Under LOCK=fine an IPC system call whose capability turns out to be an
 * object invocation upgrades to the write side and decodes again: the
 * number alone does not say which kind of work a Call or Send does, and
 * looking the cap up before holding any lock would be unsafe.
 */
#include "kernel.h"
#include "accounting.h"
#include "core.h"
#include "cspace.h"
#include "debug.h"
#include "delete.h"
#include "endpoint.h"
#include "entry.h"
#include "fastpath.h"
#include "fault.h"
#include "invariants.h"
#include "invocation.h"
#include "irq.h"
#include "notification.h"
#include "preemption.h"
#include "reply.h"
#include "sched.h"
#include <abi/syscalls.h>
#include <lock.h>

/* Step 5. */
static _Noreturn void leave(void)
{
    struct core *c = my_core();

    schedule();
    c->entry_thread = NULL;
    kernel_lock_release();
    core_run_deferred_work(c);
    accounting_exit(c);
    arch_return_to_user(c->current);
}

/* Look up the extra caps of an invocation in the caller's IPC buffer. */
static enum status lookup_extra_caps(struct invocation *inv, word_t mi)
{
    unsigned n = (unsigned)msginfo_extra_caps(mi);

    inv->nextra = 0;
    if (n && !inv->buffer)
        return E_TRUNCATED_MESSAGE;
    for (unsigned i = 0; i < n; i++) {
        struct lookup_result r = cspace_lookup_cap(inv->thread, inv->buffer->caps[i]);
        if (r.failure)
            return inv_error(inv, E_FAILED_LOOKUP, r.failure, i);
        inv->extra[i] = r.slot;
        inv->nextra = i + 1;
    }
    return E_OK;
}

static enum status decode_invocation(struct invocation *inv)
{
    switch (inv->cap.type) {
    case CAP_UNTYPED:
        return decode_untyped_invocation(inv);
    case CAP_CNODE:
        return decode_cnode_invocation(inv);
    case CAP_TCB:
        return decode_tcb_invocation(inv);
    case CAP_IRQ_CONTROL:
        return decode_irq_control_invocation(inv);
    case CAP_IRQ_HANDLER:
        return decode_irq_handler_invocation(inv);
    case CAP_FRAME:
        return decode_frame_invocation(inv);
    case CAP_PAGE_TABLE:
        return decode_page_table_invocation(inv);
    case CAP_VSPACE:
        return decode_vspace_invocation(inv);
    case CAP_IO_PORT:
        return arch_decode_io_port_invocation(inv);
    default:
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    }
}

/* An object invocation by Call or Send; the result goes to the caller unless it was preempted. */
static void invoke_object(struct tcb *t, struct cte *slot)
{
    struct invocation inv;
    word_t mi = arch_get_reg(&t->context, ABI_MSGINFO);
    enum status s;

    memset(&inv, 0, sizeof(inv));
    inv.thread = t;
    inv.buffer = tcb_ipc_buffer(t);
    inv.label = msginfo_label(mi);
    inv.length = (unsigned)MIN(msginfo_length(mi), (word_t)mr_capacity(inv.buffer));
    inv.slot = slot;
    inv.cap = slot->cap;
    s = lookup_extra_caps(&inv, mi);
    if (s == E_OK)
        s = decode_invocation(&inv);
    if (s == STATUS_PREEMPTED) {
        preemption_restart_counted();
        arch_context_restart_syscall(&t->context);
        return;
    }
    /* The caller may have deleted itself, or been taken off this core. */
    if (my_core()->entry_thread != t)
        return;
    if (s != E_OK) {
        for (unsigned i = 0; i < inv.nerr; i++)
            set_mr(t, inv.buffer, i, inv.err[i]);
        inv.nresults = inv.nerr;
    }
    syscall_return(t, s, inv.nresults);
}

static bool is_ipc_syscall(word_t sysno)
{
    return sysno >= SYS_CALL && sysno <= SYS_YIELD;
}

static void lookup_failed(struct tcb *t, struct lookup_result r)
{
    set_mr(t, NULL, 0, r.failure);
    syscall_return(t, E_FAILED_LOOKUP, 1);
}

/* Recv, NBRecv, the receive of ReplyRecv.  Returns false when general work is needed (endpoint_receive()). */
static bool do_recv(struct tcb *t, cptr_t cptr, bool blocking, bool general_held)
{
    struct lookup_result r = cspace_lookup_cap(t, cptr);

    if (r.failure) {
        lookup_failed(t, r);
        return true;
    }
    struct cap c = r.slot->cap;
    if (DEBUG)
        invocation_note_cap(c.type);
    if (c.type == CAP_ENDPOINT && (c.rights & RIGHT_READ)) {
        if (notification_poll_bound(t))
            return true;
        return endpoint_receive(t, c.obj, &c, blocking, general_held);
    } else if (c.type == CAP_NOTIFICATION && (c.rights & RIGHT_READ)) {
        notification_wait(t, c.obj, blocking);
    } else {
        syscall_return(t, E_INVALID_CAPABILITY, 0);
    }
    return true;
}

/* A receive that found a sender's caps to transfer: take the lock for general work and redo it. */
static void receive(struct core *c, struct tcb *t, cptr_t cptr, bool blocking, bool general_held)
{
    if (do_recv(t, cptr, blocking, general_held))
        return;
    kernel_lock_upgrade();
    if (c->entry_thread != t)
        leave();
    do_recv(t, cptr, blocking, true);
}

/* Call, Send, NBSend.  Returns false when the cap is an object: the caller must take the write side. */
static bool do_send(struct tcb *t, cptr_t cptr, word_t sysno, bool general_held)
{
    struct lookup_result r = cspace_lookup_cap(t, cptr);

    if (r.failure) {
        lookup_failed(t, r);
        return true;
    }
    struct cap c = r.slot->cap;
    if (DEBUG)
        invocation_note_cap(c.type);
    if (c.type == CAP_ENDPOINT) {
        bool is_call = sysno == SYS_CALL;
        if (!(c.rights & RIGHT_WRITE) ||
            (is_call && !(c.rights & (RIGHT_GRANT | RIGHT_GRANT_REPLY)))) {
            syscall_return(t, E_INVALID_CAPABILITY, 0);
            return true;
        }
        endpoint_send(t, c.obj, &c, sysno != SYS_NBSEND, is_call);
        return true;
    }
    if (c.type == CAP_NOTIFICATION) {
        if (!(c.rights & RIGHT_WRITE)) {
            syscall_return(t, E_INVALID_CAPABILITY, 0);
            return true;
        }
        notification_signal(c.obj, c.badge);
        syscall_return(t, E_OK, 0);
        return true;
    }
    if (c.type == CAP_REPLY && !(c.flags & CAPF_MASTER) && sysno != SYS_CALL) {
        /* The reply cap lives in a CNode slot: a CDT change, so general work (LOCK=fine). */
        if (!general_held)
            return false;
        reply_via(t, r.slot);
        syscall_return(t, E_OK, 0);
        return true;
    }
    if (c.type == CAP_REPLY || c.type == CAP_NULL) {
        syscall_return(t, E_INVALID_CAPABILITY, 0);
        return true;
    }
    if (!general_held)
        return false;
    invoke_object(t, r.slot);
    return true;
}

_Noreturn void handle_syscall(word_t sysno)
{
    struct core *c = my_core();

    accounting_enter(c, ENTRY_CAUSE_SYSCALL);
    syscall_slowpath(kernel_enter(c, is_ipc_syscall(sysno) ? ENTRY_IPC : ENTRY_GENERAL, true), sysno);
}

_Noreturn void syscall_slowpath(struct tcb *t, word_t sysno)
{
    struct core *c = my_core();

    if (!t)
        leave();
    if (sysno >= SYS_DEBUG_PUTS && sysno < SYS_COUNT) {
        handle_debug_syscall(sysno);
        leave();
    }
    if (DEBUG)
        invocation_note_start(t, sysno);
    if (!is_ipc_syscall(sysno)) {
        handle_fault(t, FAULT_UNKNOWN_SYSCALL, arch_get_reg(&t->context, ABI_IP),
                     arch_get_reg(&t->context, ABI_SP), sysno, 0);
        leave();
    }

    cptr_t cptr = arch_get_reg(&t->context, ABI_CPTR);
    /*
     * A message with caps may insert them into the CDT, which only general
     * work may change: take that lock before decoding (LOCK=fine; the other
     * variants hold the lock exclusively already and go on).
     */
    bool general = false;
    if (sysno != SYS_RECV && sysno != SYS_NBRECV && sysno != SYS_YIELD &&
        msginfo_extra_caps(arch_get_reg(&t->context, ABI_MSGINFO)) != 0) {
        kernel_lock_upgrade();
        if (c->entry_thread != t)
            leave();
        general = true;
    }
    switch (sysno) {
    case SYS_CALL:
    case SYS_SEND:
    case SYS_NBSEND:
        if (!do_send(t, cptr, sysno, general)) {
            /* An object invocation: general work.  Re-decode after upgrading. */
            kernel_lock_upgrade();
            if (c->entry_thread != t)
                leave();
            do_send(t, cptr, sysno, true);
        }
        break;
    case SYS_RECV:
    case SYS_NBRECV:
        receive(c, t, cptr, sysno == SYS_RECV, general);
        break;
    case SYS_REPLY:
        reply_from(t);
        syscall_return(t, E_OK, 0);
        break;
    case SYS_REPLY_RECV:
        reply_from(t);
        receive(c, t, cptr, true, general);
        break;
    case SYS_YIELD:
        syscall_return(t, E_OK, 0);
        sched_yield_current();
        break;
    default:
        break;
    }
    if (DEBUG)
        invocation_note_end(t);
    leave();
}

_Noreturn void handle_interrupt(unsigned irq)
{
    struct core *c = my_core();

    accounting_enter(c, ENTRY_CAUSE_INTERRUPT);
    /* An interrupt is not the current thread's request: nothing to restart if it is taken away. */
    kernel_enter(c, ENTRY_IPC, false);
    c->entry_thread = NULL;
    if (irq == arch_timer_irq()) {
        sched_tick();
    } else if (irq == arch_ipi_irq()) {
        /* Relaxed: the IPI delivery ordered the sender's store; a stale false only delays. */
        __atomic_store_n(&c->mailbox.reschedule, false, __ATOMIC_RELAXED);
    } else if (irq < arch_irq_count()) {
        irq_deliver(irq);
    }
    leave();
}

_Noreturn void handle_user_fault(unsigned fault_type, word_t addr, word_t arch_code, word_t arch_status)
{
    struct core *c = my_core();

    accounting_enter(c, ENTRY_CAUSE_FAULT);
    struct tcb *t = kernel_enter(c, ENTRY_IPC, false);

    if (t) {
        struct arch_context *ctx = &t->context;
        if (fault_type == FAULT_VM)
            handle_fault(t, FAULT_VM, arch_get_reg(ctx, ABI_IP), addr, arch_code, arch_status);
        else
            handle_fault(t, (enum fault_type)fault_type, arch_get_reg(ctx, ABI_IP),
                         arch_get_reg(ctx, ABI_SP), arch_code, arch_status);
    }
    leave();
}
