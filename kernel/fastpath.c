/*
 * The IPC fastpath: Call and ReplyRecv in the case that ping-pong and most
 * client/server traffic take, after seL4's fastpath.  It checks, in order
 * of cost, that the call needs nothing but a message in registers and a
 * direct switch to the partner:
 *
 *   - no capabilities transferred, message length <= ARCH_MSG_REGISTERS;
 *   - the caller's CSpace is one CNode that takes the whole cptr (the
 *     shape the root task gives every thread), and the cap is an endpoint
 *     cap with the rights the slow path demands;
 *   - Call: a receiver is waiting on the endpoint, and its caller slot is
 *     empty (it answered its last caller);
 *     ReplyRecv: the caller slot holds a reply cap whose caller waits for
 *     the reply (not a fault reply), no sender is waiting on the endpoint
 *     (so the replier blocks), no notification is bound to the replier;
 *   - the partner runs on this core and may run at once: it is at least as
 *     important as anything ready here (and, for ReplyRecv, as the replier,
 *     which the slow path would otherwise keep in front of it).
 *
 * Anything else goes to the slow path, which sees the call untouched: the
 * checks change nothing.  When they pass, the effect is exactly the slow
 * path's (same registers, states, queues and reply caps), except that the
 * switch is direct: the running thread blocks and the partner, which was
 * blocked, becomes current, so no ready queue is touched.
 *
 * Locking: the kernel lock is held (ENTRY_IPC: the read side under `fine`,
 * inside the transaction under `rtm`).  Under `fine` the endpoint's lock is
 * the only object lock: the Call's partner is identified under it, the
 * ReplyRecv's by the reply cap in the running thread's own caller slot,
 * and neither the running thread nor the partner needs its own lock
 * (docs/locking.md, "Why `fine`'s fastpath may hold only the endpoint
 * lock", has the argument).  The variants without object locks hold the
 * whole kernel from the first look.
 * The ready queues are only read, without their lock
 * (sched_highest() says why that is safe).  The address space is loaded
 * after the lock release (after the commit under `rtm`), as the slow
 * path's deferred work would (switch_and_leave()).
 *
 * Shape: every function here ends in a call that does not return (the
 * exit to user, the slow path, the general entry), and the rare cases
 * that would call something that returns (timing, a request in the
 * mailbox, IRQ or IPI work to do at the exit) leave through such a
 * function too.  So the fastpath keeps nothing across a call, and the
 * port may compile this file with every register call-clobbered
 * (ARCH_FASTPATH_CFLAGS), which spares it the prologue that would save
 * them.
 */
#include "fastpath.h"
#include "accounting.h"
#include "cspace.h"
#include "endpoint.h"
#include "entry.h"
#include "printf.h"
#include "reply.h"
#include "sched.h"
#include "vspace.h"
#include <abi/msginfo.h>
#include <abi/syscalls.h>
#include <arch.h>

/* Whether a message can go by the fastpath: registers only, no caps (one test). */
static ALWAYS_INLINE bool message_fits(word_t mi)
{
    return msginfo_length_and_caps(mi) <= ARCH_MSG_REGISTERS;
}

/*
 * The cap cptr names in t's CSpace when that CSpace has the common shape,
 * a root CNode whose guard and radix take the whole word (every CSpace the
 * root task makes), and the cap is an endpoint cap with all of `rights`;
 * else NULL, and the slow path looks it up the general way (and reports
 * any failure).  One guard check and one index.
 */
static ALWAYS_INLINE const struct cap *endpoint_cap(struct tcb *t, unsigned rights)
{
    const struct cap *root = &t->slots[TCB_SLOT_CSPACE].cap;
    cptr_t cptr = arch_get_reg(&t->context, ABI_CPTR);

    if (root->type != CAP_CNODE || root->size_bits + root->guard_bits != WORD_BITS)
        return NULL;
    word_t guard = cptr >> root->size_bits;
    if (guard != root->guard)
        return NULL;
    /* cptr & MASK(size_bits), from the guard already in hand. */
    const struct cap *cap = &cnode_slots(root)[cptr - (guard << root->size_bits)].cap;
    if (cap->type != CAP_ENDPOINT || (cap->rights & rights) != rights)
        return NULL;
    return cap;
}

/*
 * Whether `to`, on this core `c`, may run now instead of everything ready
 * here.  An empty first bitmap level means nothing is ready (sched_highest()
 * would say -1), the usual case for a client and its server.
 */
static ALWAYS_INLINE bool may_switch_to(struct core *c, unsigned me, const struct tcb *to)
{
    return to->affinity == me && (__atomic_load_n(&c->ready_l1, __ATOMIC_RELAXED) == 0 ||
                                  (int)to->priority >= sched_highest(me));
}

/*
 * The register part of the slow path's transfer(): MRs, message info,
 * badge, status.  `mi` is the sender's message info (message_fits()).
 * The MRs are copied with constant register names, so each is one load
 * and one store; the nested tests cost an empty message one branch (a
 * switch on the length compiled to a chain of four).
 */
static ALWAYS_INLINE void copy_message(struct tcb *from, struct tcb *to, word_t mi, word_t badge)
{
    unsigned len = (unsigned)msginfo_length(mi);

    _Static_assert(ARCH_MSG_REGISTERS == 4, "one test per message register");
    if (len > 0) {
        arch_set_reg(&to->context, ABI_MR0, arch_get_reg(&from->context, ABI_MR0));
        if (len > 1) {
            arch_set_reg(&to->context, ABI_MR1, arch_get_reg(&from->context, ABI_MR1));
            if (len > 2) {
                arch_set_reg(&to->context, ABI_MR2, arch_get_reg(&from->context, ABI_MR2));
                if (len > 3)
                    arch_set_reg(&to->context, ABI_MR3, arch_get_reg(&from->context, ABI_MR3));
            }
        }
    }
    arch_set_reg(&to->context, ABI_MSGINFO, msginfo_new(msginfo_label(mi), 0, 0, len));
    arch_set_reg(&to->context, ABI_BADGE, badge);
    arch_set_reg(&to->context, ABI_STATUS, E_OK);
}

/*
 * *cap = a cap of `type` with `rights` naming `obj`, every other field 0,
 * field by field: assigning a structure built elsewhere copies it through
 * the stack (REP MOVS on x86_64, which the emulator runs one word at a
 * time).  GCC merges the byte fields into one store.
 */
static ALWAYS_INLINE void cap_set_plain(struct cap *cap, enum cap_type type, uint8_t rights, void *obj)
{
    cap->type = (uint8_t)type;
    cap->rights = rights;
    cap->size_bits = 0;
    cap->flags = 0;
    cap->guard_bits = 0;
    cap->level = 0;
    cap->asid = 0;
    cap->obj = obj;
    cap->badge = 0;
    cap->asid_gen = 0;
    _Static_assert(sizeof(struct cap) == 8 + 3 * sizeof(word_t), "every field of struct cap is set above");
}

/*
 * reply_setup(caller, receiver, grant != 0), where grant is the send cap's
 * RIGHT_GRANT bit (0 or RIGHT_GRANT), for a receiver whose caller slot is
 * empty (try_call() checked it): the reply cap is the
 * master's (tcb_install_master_reply()) without CAPF_MASTER and with the
 * rights set, linked as the master's only child.  A running caller's master
 * has no child (a reply cap exists only while its thread waits for the
 * reply, kernel/debug.c).
 */
static ALWAYS_INLINE void reply_setup_fast(struct tcb *caller, struct tcb *receiver, unsigned grant)
{
    struct cte *master = &caller->slots[TCB_SLOT_REPLY];
    struct cte *dest = &receiver->slots[TCB_SLOT_CALLER];

    assert(!master->cdt_next && master->cdt_depth == 0 && cap_is_null(&dest->cap));
    cap_set_plain(&dest->cap, CAP_REPLY, (uint8_t)((RIGHTS_ALL & ~RIGHT_GRANT) | grant), caller);
    dest->cdt_depth = 1;
    dest->cdt_prev = master;
    dest->cdt_next = NULL;
    master->cdt_next = dest;
}

/*
 * reply_clear(slot) for a reply cap, which is its master's only child and
 * has none of its own (nothing is ever derived from one): unlink it from
 * the master and empty the slot.
 */
static ALWAYS_INLINE void reply_clear_fast(struct cte *slot)
{
    assert(!slot->cdt_next && slot->cdt_prev && slot->cdt_prev->cdt_next == slot);
    slot->cdt_prev->cdt_next = NULL;
    slot->cdt_prev = NULL;
    slot->cdt_depth = 0;
    cap_set_plain(&slot->cap, CAP_NULL, 0, NULL);
}

/*
 * The end of an entry that recorded IRQ or IPI work or runs with timing on
 * (switch_and_leave()).  Out of line and not returning, so that the
 * fastpath itself keeps nothing across a call.
 */
static _Noreturn __attribute__((noinline, cold)) void leave_switched_slowly(struct core *c, struct tcb *to)
{
    core_run_deferred_irq_ipi(c);
    accounting_exit_switched(c);
    arch_return_to_user_thread(&to->context);
}

/*
 * What schedule() would do on picking `to`, which was blocked (not queued),
 * and the end of the entry (kernel/syscall.c, step 5): the fastpath touched
 * no ready queue, so there is nothing for schedule() to decide.  The
 * address-space switch is the slow path's (vspace_switch(), then the load
 * of the space it recorded after the lock release), except that whether
 * to load, and the recorded space, are read before the release and stay
 * in registers: no request can change the record on this core before the
 * load (requests are served only on entries and while waiting for the
 * lock), and the release's barrier would otherwise make the compiler load
 * them again.  IRQ or IPI work recorded meanwhile (by
 * a request served while waiting for the lock) and timing go to
 * leave_switched_slowly(): every call on this path is one that does not
 * return, so the fastpath keeps nothing across a call.
 */
static _Noreturn ALWAYS_INLINE void switch_and_leave(struct core *c, struct tcb *to)
{
    if (to->timeslice == 0)
        to->timeslice = TIMESLICE_TICKS;
    c->current = to;
    c->entry_thread = NULL;
    /* Two copies of the release, so that no test of whether to load is left
     * after it (GCC threads that test through a small release, not a large one). */
    if (vspace_switch(c, to)) {
        word_t vspace_root_paddr = c->loaded_vspace_paddr;
        unsigned asid = c->loaded_asid;
        kernel_lock_release();
        arch_vspace_load(vspace_root_paddr, asid);
    } else {
        kernel_lock_release();
    }
    if (unlikely(c->deferred.pending | (c->account.entry_stamp != 0)))
        leave_switched_slowly(c, to);
    arch_return_to_user_thread(&to->context);
}

/* The Call fastpath for t, this core's entry thread; returns when it does not apply. */
static ALWAYS_INLINE void try_call(struct core *c, struct tcb *t)
{
    word_t mi = arch_get_reg(&t->context, ABI_MSGINFO);
    const struct cap *cap;
    struct endpoint *ep;
    struct tcb *dest;
    unsigned me = arch_core_id();

    if (!message_fits(mi))
        return;
    cap = endpoint_cap(t, RIGHT_WRITE);
    /* A Call needs grant or grant-reply, like the slow path's decode. */
    if (!cap || !(cap->rights & (RIGHT_GRANT | RIGHT_GRANT_REPLY)))
        return;
    ep = cap->obj;

    /* [e] alone, taken before the partner is identified, so that nothing is
     * checked twice: [e] covers dest while it waits in ep's queue, and t is
     * current here. */
    object_lock_acquire(&ep->lock);
    dest = endpoint_waiter(ep, EP_RECV);
    /* A receiver that kept its last caller's reply cap: the slow path drops that one first. */
    if (!dest || !may_switch_to(c, me, dest) || !cap_is_null(&dest->slots[TCB_SLOT_CALLER].cap)) {
        object_lock_release(&ep->lock);
        return;
    }
    endpoint_dequeue_head(ep, dest);
    copy_message(t, dest, mi, cap->badge);
    dest->state = TS_RUNNING;
    /* The caller waits for the reply, as complete_send() leaves it: the
     * grant flags are the cap's grant rights one bit lower. */
    _Static_assert(IPCF_GRANT == RIGHT_GRANT >> 1 && IPCF_GRANT_REPLY == RIGHT_GRANT_REPLY >> 1,
                   "the grant flags sit one bit below the grant rights");
    t->blocked_flags = (uint8_t)(IPCF_CALL | ((cap->rights >> 1) & (IPCF_GRANT | IPCF_GRANT_REPLY)));
    reply_setup_fast(t, dest, cap->rights & RIGHT_GRANT);
    t->state = TS_BLOCKED_REPLY;
    object_lock_release(&ep->lock);

    switch_and_leave(c, dest);
}

/*
 * The ReplyRecv fastpath for t, this core's entry thread; returns when it
 * does not apply.  The caller slot is [t]: only reply_setup() writes it,
 * for a sender completing t's receive, and t is running, not receiving;
 * the cap there names a thread blocked on that reply (kernel/debug.c), and
 * it is the only reply cap naming that thread, so no other core can
 * reply to it.
 */
static ALWAYS_INLINE void try_reply_recv(struct core *c, struct tcb *t)
{
    word_t mi = arch_get_reg(&t->context, ABI_MSGINFO);
    struct cte *slot = &t->slots[TCB_SLOT_CALLER];
    const struct cap *cap;
    struct endpoint *ep;
    struct tcb *caller;
    unsigned me = arch_core_id();

    /* A bound notification may have a signal for the receive: slow path. */
    if (!message_fits(mi) || t->bound_notification || (t->blocked_flags & IPCF_FAULT))
        return;
    if (slot->cap.type != CAP_REPLY)
        return;
    assert(!(slot->cap.flags & CAPF_MASTER));
    caller = slot->cap.obj;
    /* A fault reply, or a replier the slow path would keep in front of its caller. */
    if ((caller->blocked_flags & IPCF_FAULT) || caller->priority < t->priority ||
        !may_switch_to(c, me, caller))
        return;
    cap = endpoint_cap(t, RIGHT_READ);
    if (!cap)
        return;
    ep = cap->obj;

    /* [e] alone: t is current here, and no other core can reach caller. */
    object_lock_acquire(&ep->lock);
    /* A sender waiting: the receive would not block. */
    if (ep->state == EP_SEND) {
        object_lock_release(&ep->lock);
        return;
    }
    assert(caller->state == TS_BLOCKED_REPLY);
    /* The reply, as reply_via() gives it. */
    copy_message(t, caller, mi, 0);
    caller->blocked_flags = 0;
    caller->state = TS_RUNNING;
    reply_clear_fast(slot);
    /* The receive, as endpoint_receive() blocks when no sender waits. */
    t->state = TS_BLOCKED_RECV;
    t->blocked_on = ep;
    endpoint_append(ep, t);
    ep->state = EP_RECV;
    object_lock_release(&ep->lock);

    switch_and_leave(c, caller);
}

/*
 * The fastpath's entries.  The common entry counts itself, finds the
 * mailbox empty, takes the kernel lock and tries the fastpath; with timing
 * on or a request in the mailbox, the entry goes through entry_general()
 * instead, which does steps 1-2 as every entry does and then tries the
 * same fastpath.  Either way, what the fastpath does not take goes on to
 * syscall_slowpath() under the same lock acquisition.  The general entry
 * is a separate copy so that the common one calls nothing that returns.
 *
 * A common entry that had to wait for the lock goes to the slow path,
 * which copes with a request served meanwhile (kernel_lock_wait_hook())
 * having taken its thread away.  The wait cost more than the fastpath
 * would save, and with nothing of the fastpath's live across it the
 * compiler keeps no stack slot for it (one instruction per entry on
 * arm-imx6).
 */
static _Noreturn ALWAYS_INLINE void try_fastpath(struct core *c, struct tcb *t, word_t sysno)
{
    if (likely(t)) {
        if (sysno == SYS_CALL)
            try_call(c, t);
        else
            try_reply_recv(c, t);
    }
    syscall_slowpath(t, sysno);
}

static _Noreturn __attribute__((noinline, cold)) void entry_general(word_t sysno)
{
    struct core *c = my_core();

    accounting_enter(c, ENTRY_CAUSE_SYSCALL);
    try_fastpath(c, kernel_enter(c, ENTRY_IPC, true), sysno);
}

static _Noreturn ALWAYS_INLINE void entry(word_t sysno)
{
    struct core *c = my_core();

    if (unlikely(!accounting_enter_is_count_only(c) || core_mailbox_pending(c)))
        entry_general(sysno);
    accounting_count_entry(c, ENTRY_CAUSE_SYSCALL);
    struct tcb *t = note_entry_thread(c, true);
    if (unlikely(kernel_lock_acquire(ENTRY_IPC)))
        syscall_slowpath(c->entry_thread, sysno);   /* NULL if a request took t away */
    try_fastpath(c, t, sysno);
}

_Noreturn void fastpath_call(void)
{
    entry(SYS_CALL);
}

_Noreturn void fastpath_reply_recv(void)
{
    entry(SYS_REPLY_RECV);
}
