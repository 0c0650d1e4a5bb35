/*
 * The IPC fastpath: Call and ReplyRecv in the case that ping-pong and most
 * client/server traffic take, after seL4's fastpath.  It checks, in order
 * of cost, that the call needs nothing but a message in registers and a
 * direct switch to the partner:
 *
 *   - no capabilities transferred, message length <= ARCH_MSG_REGISTERS;
 *   - the cap is an endpoint cap with the rights the slow path demands;
 *   - Call: a receiver is waiting on the endpoint;
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
 * the only object lock: the partner is identified under it (Call) or by
 * the reply cap in the running thread's own caller slot (ReplyRecv), and
 * neither the running thread nor the partner needs its own lock
 * (docs/locking.md, "Issue 11, sixth round: fine", has the argument).  The
 * variants without object locks hold the whole kernel from the first
 * look.  The ready queues are only read, without their lock
 * (sched_highest() says why that is safe).  The address-space switch is
 * loaded after the lock release (after the commit under `rtm`) by the slow
 * path's deferred work (switch_and_leave()).
 */
#include "fastpath.h"
#include "accounting.h"
#include "cspace.h"
#include "endpoint.h"
#include "entry.h"
#include "reply.h"
#include "sched.h"
#include "vspace.h"
#include <abi/msginfo.h>
#include <abi/syscalls.h>
#include <arch.h>

/* Whether a message can go by the fastpath: registers only, no caps. */
static ALWAYS_INLINE bool message_fits(word_t mi)
{
    return msginfo_extra_caps(mi) == 0 && msginfo_length(mi) <= ARCH_MSG_REGISTERS;
}

/*
 * The slot cptr names in t's CSpace, as cspace_lookup_cap() finds it, or
 * NULL when that lookup fails.  The common shape, a root CNode whose guard
 * and radix take the whole word (every CSpace the root task makes), is one
 * guard check and one index; any other shape takes the general resolver.
 */
static ALWAYS_INLINE struct cte *lookup_slot(struct tcb *t, cptr_t cptr)
{
    const struct cap *root = &t->slots[TCB_SLOT_CSPACE].cap;

    if (likely(root->type == CAP_CNODE && root->size_bits + root->guard_bits == WORD_BITS)) {
        if (cptr >> root->size_bits != root->guard)
            return NULL;
        return &cnode_slots(root)[cptr & MASK(root->size_bits)];
    }
    struct lookup_result r = cspace_lookup_cap(t, cptr);
    return r.failure ? NULL : r.slot;
}

/* The endpoint named by cptr in t's CSpace if the cap has all of `rights`, else NULL. */
static ALWAYS_INLINE const struct cap *endpoint_cap(struct tcb *t, unsigned rights)
{
    struct cte *slot = lookup_slot(t, arch_get_reg(&t->context, ABI_CPTR));

    if (!slot || slot->cap.type != CAP_ENDPOINT || (slot->cap.rights & rights) != rights)
        return NULL;
    return &slot->cap;
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
 * *to = *from as one load and one store per word: GCC copies a 32-byte
 * structure with REP MOVSL on x86_64, which the emulator runs as one
 * instruction per four bytes (the kernel has no vector registers for it).
 * The words are read through a may_alias type, which is what lets a cap be
 * accessed as words.
 */
static ALWAYS_INLINE void copy_cap_by_words(struct cap *to, const struct cap *from)
{
    typedef word_t __attribute__((may_alias)) cap_word_t;
    const cap_word_t *src = (const cap_word_t *)from;
    cap_word_t *dst = (cap_word_t *)to;

    _Static_assert(sizeof(struct cap) % sizeof(word_t) == 0 && _Alignof(struct cap) >= _Alignof(word_t),
                   "a cap is whole, aligned words");
#pragma GCC unroll 8
    for (unsigned i = 0; i < sizeof(struct cap) / sizeof(word_t); i++)
        dst[i] = src[i];
}

/*
 * reply_setup(caller, receiver, grant != 0), where grant is the send cap's
 * RIGHT_GRANT bit (0 or RIGHT_GRANT), when the receiver's caller slot is
 * empty and the caller's master has no child (every round trip after the
 * first: ReplyRecv emptied the slot): the reply cap is the master's with
 * the flags cleared and the rights set, linked as the master's only child.
 * Otherwise the general reply_setup() drops the stale caps first.
 */
static ALWAYS_INLINE void reply_setup_fast(struct tcb *caller, struct tcb *receiver, unsigned grant)
{
    struct cte *master = &caller->slots[TCB_SLOT_REPLY];
    struct cte *dest = &receiver->slots[TCB_SLOT_CALLER];

    if (unlikely(!cap_is_null(&dest->cap) || master->cdt_next)) {
        reply_setup(caller, receiver, grant != 0);
        return;
    }
    copy_cap_by_words(&dest->cap, &master->cap);
    dest->cap.flags = 0;
    dest->cap.rights = (uint8_t)((RIGHTS_ALL & ~RIGHT_GRANT) | grant);
    dest->cdt_depth = master->cdt_depth + 1;
    dest->cdt_prev = master;
    dest->cdt_next = NULL;
    master->cdt_next = dest;
}

/*
 * reply_clear(slot) for a reply cap, which has no children (nothing is
 * ever derived from one): unlink it from its master and empty the slot.
 */
static ALWAYS_INLINE void reply_clear_fast(struct cte *slot)
{
    if (unlikely(slot->cdt_next)) {
        reply_clear(slot);
        return;
    }
    if (slot->cdt_prev)
        slot->cdt_prev->cdt_next = NULL;
    slot->cdt_prev = NULL;
    slot->cdt_depth = 0;
    /* cap_null(), field by field: assigning the returned structure copies it
     * through the stack, and a memset becomes REP STOS, one instruction per
     * word under the emulator.  GCC merges the byte fields into one store. */
    struct cap *cap = &slot->cap;
    cap->type = CAP_NULL;
    cap->rights = 0;
    cap->size_bits = 0;
    cap->flags = 0;
    cap->guard_bits = 0;
    cap->level = 0;
    cap->asid = 0;
    cap->obj = NULL;
    cap->badge = 0;
    cap->asid_gen = 0;
    _Static_assert(sizeof(struct cap) == 8 + 3 * sizeof(word_t), "every field of struct cap is cleared above");
}

/*
 * What schedule() would do on picking `to`, which was blocked (not queued),
 * and the end of the entry (kernel/syscall.c, step 5): the fastpath touched
 * no ready queue, so there is nothing for schedule() to decide.  Left from
 * here, not from handle_syscall(), so that the successful fastpath never
 * returns through a function epilogue.  The address-space switch is the
 * slow path's (vspace_switch(), core_load_vspace()), except that whether
 * to load stays in a register instead of the deferred record.
 */
static _Noreturn ALWAYS_INLINE void switch_and_leave(struct core *c, struct tcb *to)
{
    if (to->timeslice == 0)
        to->timeslice = TIMESLICE_TICKS;
    c->current = to;
    bool load = vspace_switch(c, to);
    c->entry_thread = NULL;
    kernel_lock_release();
    if (load)
        core_load_vspace(c);
    core_run_deferred_irq_ipi(c);
    accounting_exit_switched(c);
    arch_return_to_user(c->current);
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

    /* [e] alone, taken before the partner is identified, so that nothing
     * is checked twice: [e] covers dest while dest waits in ep's queue, and
     * t is current here (docs/locking.md, "Issue 11, sixth round: fine"). */
    object_lock_acquire(&ep->lock);
    dest = endpoint_peek(ep, EP_RECV);
    if (!dest || !may_switch_to(c, me, dest)) {
        object_lock_release(&ep->lock);
        return;
    }
    endpoint_dequeue(ep, dest);
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

/* The ReplyRecv fastpath for t, this core's entry thread; returns when it does not apply. */
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
    /* The caller slot is [t], and t is current here: only a sender
     * completing t's receive writes it, and t is running, not receiving. */
    if (slot->cap.type != CAP_REPLY || (slot->cap.flags & CAPF_MASTER))
        return;
    caller = slot->cap.obj;
    if (caller->priority < t->priority || !may_switch_to(c, me, caller))
        return;
    cap = endpoint_cap(t, RIGHT_READ);
    if (!cap)
        return;
    ep = cap->obj;

    /* [e] alone: t is current here, and the reply cap in t's slot, the only
     * one naming caller, keeps every other core off caller (docs/locking.md,
     * "Issue 11, sixth round: fine"). */
    object_lock_acquire(&ep->lock);
    if (caller->state != TS_BLOCKED_REPLY || (caller->blocked_flags & IPCF_FAULT) ||
        ep->state == EP_SEND) {
        object_lock_release(&ep->lock);
        return;
    }
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
 * Entered from the entry stub, in place of handle_syscall(), so that the
 * common case runs through one function frame, not two.
 */
_Noreturn void fastpath_call(void)
{
    struct core *c = my_core();
    accounting_enter(c, ENTRY_CAUSE_SYSCALL);
    struct tcb *t = kernel_enter(c, ENTRY_IPC, true);

    if (likely(t))
        try_call(c, t);
    syscall_slowpath(t, SYS_CALL);
}

_Noreturn void fastpath_reply_recv(void)
{
    struct core *c = my_core();
    accounting_enter(c, ENTRY_CAUSE_SYSCALL);
    struct tcb *t = kernel_enter(c, ENTRY_IPC, true);

    if (likely(t))
        try_reply_recv(c, t);
    syscall_slowpath(t, SYS_REPLY_RECV);
}
