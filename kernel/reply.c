/*
 * Reply capabilities (see reply.h).
 *
 * LOCK=fine: reply_setup and reply_from run on the read side holding the
 * locks of the caller and the receiver (the two TCBs whose slots change);
 * the IPC fastpath calls reply_setup holding the endpoint's lock instead,
 * which covers both there (docs/locking.md, "Why `fine`'s fastpath may
 * hold only the endpoint lock").
 * Replacing a stale reply cap in the receiver's caller slot also unlinks
 * it from its own master, in a third TCB that is blocked on reply for
 * good: only this slot's holder could ever touch that master's link.
 */
#include "reply.h"
#include "cdt.h"
#include "core.h"
#include "endpoint.h"
#include "invocation.h"
#include "ipc_locks.h"
#include "delete.h"
#include "printf.h"
#include "sched.h"
#include <arch.h>

void reply_clear(struct cte *slot)
{
    cdt_remove(slot);
    slot->cap = cap_null();
}

void reply_setup(struct tcb *caller, struct tcb *receiver, bool grant)
{
    struct cte *master = &caller->slots[TCB_SLOT_REPLY];
    struct cte *dest = &receiver->slots[TCB_SLOT_CALLER];
    struct cap r = master->cap;

    /* Every live TCB has its master (kernel/delete.c keeps it while emptying one). */
    assert(r.type == CAP_REPLY && (r.flags & CAPF_MASTER) && r.obj == caller);
    if (!cap_is_null(&dest->cap))
        reply_clear(dest);
    /* A caller blocked on reply has one reply cap at most: drop a stale one. */
    if (master->cdt_next)
        reply_clear(master->cdt_next);
    r.flags = 0;
    r.rights = grant ? RIGHTS_ALL : (uint8_t)(RIGHTS_ALL & ~RIGHT_GRANT);
    dest->cap = r;
    cdt_insert_child(master, dest);
}

/* The fault handler answered: label 0 resumes, MR0 (if sent) is the new ip. */
static void fault_reply(struct tcb *replier, struct tcb *caller)
{
    word_t mi = arch_get_reg(&replier->context, ABI_MSGINFO);

    if (msginfo_length(mi) >= 1)
        arch_set_reg(&caller->context, ABI_IP, get_mr(replier, tcb_ipc_buffer(replier), 0));
    caller->fault_type = FAULT_NONE;
    caller->blocked_flags = 0;
    if (msginfo_label(mi) == 0) {
        caller->state = TS_RUNNING;
        sched_wake(caller);
    } else {
        caller->state = TS_INACTIVE;
    }
}

void reply_from(struct tcb *t)
{
    reply_via(t, &t->slots[TCB_SLOT_CALLER]);
}

void reply_via(struct tcb *t, struct cte *slot)
{
    struct tcb *caller;
    struct ipc_locks locks;

    if (slot->cap.type != CAP_REPLY || (slot->cap.flags & CAPF_MASTER))
        return;
    caller = slot->cap.obj;
    locks = ipc_locks_of(&t->lock, NULL, caller);
    ipc_locks_acquire(&locks);
    if (caller->state == TS_BLOCKED_REPLY) {
        if (caller->blocked_flags & IPCF_FAULT) {
            fault_reply(t, caller);
        } else {
            ipc_transfer(t, caller, 0, (slot->cap.rights & RIGHT_GRANT) != 0);
            caller->blocked_flags = 0;
            caller->state = TS_RUNNING;
            sched_wake(caller);
        }
    }
    reply_clear(slot);
    ipc_locks_release(&locks);
}

void reply_cancel(struct tcb *caller)
{
    struct cte *master = &caller->slots[TCB_SLOT_REPLY];
    if (master->cdt_next)
        reply_clear(master->cdt_next);
}
