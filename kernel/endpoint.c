/*
 * Endpoints: rendezvous message passing.
 *
 * A sender that finds a receiver waiting copies its message straight into
 * the receiver and goes on; otherwise it queues (Send, Call) or gives up
 * (NBSend).  A receiver that finds a sender waiting takes its message and
 * releases it (or, for a Call or a fault, leaves it waiting for the reply);
 * otherwise it queues (Recv) or returns E_WOULD_BLOCK (NBRecv).  Results
 * of a blocked receiver are written by the sender that completes it.
 *
 * LOCK=fine: the partner is identified from the queue before any lock is
 * taken (the read side of the big-reader lock keeps every object alive),
 * then the endpoint, both TCBs and the partner's ready queue are locked in
 * one call; if the queue changed meanwhile, everything is released and
 * the operation starts over.
 */
#include "endpoint.h"
#include "core.h"
#include "cspace.h"
#include "delete.h"
#include "invocation.h"
#include "ipc_locks.h"
#include "notification.h"
#include "printf.h"
#include "reply.h"
#include "sched.h"
#include "tcb_queue.h"
#include <arch.h>

/* ---- Message registers. */

word_t get_mr(struct tcb *t, struct ipc_buffer *buf, unsigned i)
{
    if (i < ARCH_MSG_REGISTERS)
        return arch_get_reg(&t->context, (enum abi_reg)(ABI_MR0 + i));
    if (buf && i < MSG_MAX_LENGTH)
        return buf->msg[i];
    return 0;
}

bool set_mr(struct tcb *t, struct ipc_buffer *buf, unsigned i, word_t v)
{
    if (i < ARCH_MSG_REGISTERS) {
        arch_set_reg(&t->context, (enum abi_reg)(ABI_MR0 + i), v);
        return true;
    }
    if (buf && i < MSG_MAX_LENGTH) {
        buf->msg[i] = v;
        return true;
    }
    return false;
}

unsigned mr_capacity(struct ipc_buffer *buf)
{
    return buf ? MSG_MAX_LENGTH : ARCH_MSG_REGISTERS;
}

/* ---- Transfer. */

/* Where a received cap goes: the receiver's receive slot, if it names an empty slot. */
static struct cte *receive_slot(struct tcb *r, struct ipc_buffer *rbuf)
{
    const struct cap *root = &r->slots[TCB_SLOT_CSPACE].cap;
    struct lookup_result lr;

    if (!rbuf || rbuf->receive_depth == 0)
        return NULL;
    if (rbuf->receive_cnode) {
        lr = cspace_lookup_cap(r, rbuf->receive_cnode);
        if (lr.failure || lr.slot->cap.type != CAP_CNODE)
            return NULL;
        root = &lr.slot->cap;
    }
    lr = cspace_lookup_slot(root, rbuf->receive_index, (unsigned)rbuf->receive_depth);
    if (lr.failure || !cap_is_null(&lr.slot->cap))
        return NULL;
    return lr.slot;
}

/*
 * Capabilities in a message: an endpoint cap naming the endpoint the
 * message goes through is unwrapped (its badge delivered in badges[i]);
 * the first other one is derived (cap_derive()) into the receive slot if
 * the sender may grant.  Caps that cannot be delivered end the list.
 * Returns the msginfo fields (extra caps delivered, unwrapped mask).
 */
static void transfer_caps(struct tcb *s, struct ipc_buffer *sbuf, struct tcb *r,
                          struct ipc_buffer *rbuf, unsigned ncaps, bool grant,
                          const struct endpoint *ep, unsigned *delivered, unsigned *unwrapped)
{
    struct cte *dest = NULL;
    bool dest_looked_up = false;

    *delivered = 0;
    *unwrapped = 0;
    if (!sbuf || !rbuf)
        return;
    for (unsigned i = 0; i < ncaps; i++) {
        struct lookup_result lr = cspace_lookup_cap(s, sbuf->caps[i]);
        if (lr.failure)
            return;
        struct cap *c = &lr.slot->cap;
        if (c->type == CAP_ENDPOINT && c->obj == ep && ep) {
            rbuf->badges[i] = c->badge;
            *unwrapped |= 1u << i;
            (*delivered)++;
            continue;
        }
        if (!grant)
            return;
        if (!dest_looked_up) {
            dest = receive_slot(r, rbuf);
            dest_looked_up = true;
        }
        struct cap copy;
        if (!dest || cap_derive(lr.slot, &copy) != E_OK)
            return;
        cte_insert_child(lr.slot, dest, copy);
        rbuf->badges[i] = 0;
        dest = NULL;    /* one receive slot: later caps other than unwrapped ones stop here */
        (*delivered)++;
    }
}

static void transfer(struct tcb *s, struct tcb *r, word_t badge, bool grant, struct endpoint *ep)
{
    struct ipc_buffer *sbuf = tcb_ipc_buffer(s), *rbuf = tcb_ipc_buffer(r);
    word_t mi, label;
    unsigned len, delivered = 0, unwrapped = 0;

    if (s->blocked_flags & IPCF_FAULT) {
        label = s->fault_type;
        len = MIN(4u, mr_capacity(rbuf));
        for (unsigned i = 0; i < len; i++)
            set_mr(r, rbuf, i, s->fault[i]);
    } else {
        mi = arch_get_reg(&s->context, ABI_MSGINFO);
        label = msginfo_label(mi);
        len = (unsigned)MIN(msginfo_length(mi), (word_t)MIN(mr_capacity(sbuf), mr_capacity(rbuf)));
        for (unsigned i = 0; i < len; i++)
            set_mr(r, rbuf, i, get_mr(s, sbuf, i));
        transfer_caps(s, sbuf, r, rbuf, (unsigned)msginfo_extra_caps(mi), grant, ep,
                      &delivered, &unwrapped);
    }
    arch_set_reg(&r->context, ABI_MSGINFO, msginfo_new(label, unwrapped, delivered, len));
    arch_set_reg(&r->context, ABI_BADGE, badge);
    arch_set_reg(&r->context, ABI_STATUS, E_OK);
}

void ipc_transfer(struct tcb *sender, struct tcb *receiver, word_t badge, bool grant)
{
    transfer(sender, receiver, badge, grant, NULL);
}

static uint8_t send_flags(const struct cap *cap, bool is_call)
{
    uint8_t f = is_call ? IPCF_CALL : 0;
    if (cap->rights & RIGHT_GRANT)
        f |= IPCF_GRANT;
    if (cap->rights & RIGHT_GRANT_REPLY)
        f |= IPCF_GRANT_REPLY;
    return f;
}

/* A sender whose message was taken: a Call or a fault waits for the reply, a Send goes on. */
static void complete_send(struct tcb *s, struct tcb *r)
{
    if (s->blocked_flags & (IPCF_CALL | IPCF_FAULT)) {
        reply_setup(s, r, (s->blocked_flags & IPCF_GRANT) != 0);
        s->state = TS_BLOCKED_REPLY;
        sched_dequeue(s);
    } else {
        arch_set_reg(&s->context, ABI_STATUS, E_OK);
        sched_wake(s);
    }
}

/*
 * Lock ep, `self` and the partner waiting in ep's queue as `partner_state`
 * (or none): identify the partner without locks, lock the set, and start
 * over if the queue changed meanwhile.  Returns the partner, NULL if none.
 */
static struct tcb *lock_with_partner(struct endpoint *ep, struct tcb *self,
                                     enum endpoint_state partner_state, struct ipc_locks *locks)
{
    for (;;) {
        struct tcb *partner = endpoint_peek(ep, partner_state);
        *locks = ipc_locks_of(&ep->lock, &self->lock, partner);
        ipc_locks_acquire(locks);
        if (endpoint_waiter(ep, partner_state) == partner)
            return partner;
        ipc_locks_release(locks);
    }
}

/* t blocks in ep's queue, which then holds waiters of `queue_state`.  Caller holds the set's locks. */
static void block_in_queue(struct endpoint *ep, struct tcb *t, enum thread_state state,
                           enum endpoint_state queue_state)
{
    t->state = (uint8_t)state;
    t->blocked_on = ep;
    sched_dequeue(t);
    endpoint_append(ep, t);
    ep->state = queue_state;
}

static void do_send(struct tcb *s, struct endpoint *ep, word_t badge, uint8_t flags, bool blocking)
{
    struct ipc_locks locks;
    struct tcb *r = lock_with_partner(ep, s, EP_RECV, &locks);

    s->blocked_flags = flags;
    if (r) {
        endpoint_dequeue(ep, r);
        transfer(s, r, badge, (flags & IPCF_GRANT) != 0, ep);
        r->state = TS_RUNNING;
        complete_send(s, r);
        sched_wake(r);
    } else if (blocking) {
        s->blocked_badge = badge;
        block_in_queue(ep, s, TS_BLOCKED_SEND, EP_SEND);
    } else {
        s->blocked_flags = 0;
        arch_set_reg(&s->context, ABI_STATUS, E_OK);
    }
    ipc_locks_release(&locks);
}

void endpoint_send(struct tcb *sender, struct endpoint *ep, const struct cap *cap,
                   bool blocking, bool is_call)
{
    do_send(sender, ep, cap->badge, send_flags(cap, is_call), blocking);
}

void endpoint_send_fault(struct tcb *t, struct endpoint *ep, word_t badge)
{
    do_send(t, ep, badge, IPCF_FAULT | IPCF_GRANT_REPLY, true);
}

bool endpoint_receive(struct tcb *r, struct endpoint *ep, const struct cap *cap, bool blocking,
                      bool general_held)
{
    struct ipc_locks locks;
    struct tcb *s = lock_with_partner(ep, r, EP_SEND, &locks);
    (void)cap;

    /* The sender's caps would go into the CDT: general work (kernel/syscall.c upgrades). */
    if (s && !general_held && !(s->blocked_flags & IPCF_FAULT) &&
        msginfo_extra_caps(arch_get_reg(&s->context, ABI_MSGINFO)) != 0) {
        ipc_locks_release(&locks);
        return false;
    }
    if (s) {
        endpoint_dequeue(ep, s);
        transfer(s, r, s->blocked_badge, (s->blocked_flags & IPCF_GRANT) != 0, ep);
        complete_send(s, r);
    } else if (blocking) {
        block_in_queue(ep, r, TS_BLOCKED_RECV, EP_RECV);
    } else {
        arch_set_reg(&r->context, ABI_STATUS, E_WOULD_BLOCK);
        arch_set_reg(&r->context, ABI_MSGINFO, 0);
    }
    ipc_locks_release(&locks);
    return true;
}

/* ---- Cancelling. */

/*
 * Take t out of the IPC it is blocked in.  It becomes runnable again and
 * re-executes its system call (a fault message is simply sent again).
 * Caller holds the lock exclusively (ENTRY_GENERAL) or t's locks.
 */
void ipc_cancel(struct tcb *t)
{
    switch (t->state) {
    case TS_BLOCKED_SEND:
    case TS_BLOCKED_RECV:
        endpoint_dequeue(t->blocked_on, t);
        break;
    case TS_BLOCKED_NOTIFICATION:
        notification_cancel_wait(t->blocked_on, t);
        break;
    case TS_BLOCKED_REPLY:
        reply_cancel(t);
        break;
    default:
        return;
    }
    if (!(t->blocked_flags & IPCF_FAULT))
        arch_context_restart_syscall(&t->context);
    t->blocked_flags = 0;
    t->state = TS_RESTART;
}

void endpoint_cancel_all(struct endpoint *ep)
{
    while (ep->head) {
        struct tcb *t = ep->head;
        ipc_cancel(t);
        sched_wake(t);
    }
    ep->state = EP_IDLE;
}

void endpoint_cancel_badged(struct endpoint *ep, word_t badge)
{
    struct tcb *t = ep->head, *next;

    if (ep->state != EP_SEND)
        return;
    for (; t; t = next) {
        next = t->ep_next;
        if (t->blocked_badge == badge) {
            ipc_cancel(t);
            sched_wake(t);
        }
    }
}
