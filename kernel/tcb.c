/*
 * TCB invocations (docs/abi.md lists arguments and results).
 */
#include "tcb.h"
#include "cdt.h"
#include "core.h"
#include "cspace.h"
#include "delete.h"
#include "endpoint.h"
#include "invocation.h"
#include "kernel.h"
#include "notification.h"
#include "printf.h"
#include "sched.h"
#include "vspace.h"
#include <arch.h>

void tcb_init(struct tcb *t)
{
    memset(t, 0, sizeof(*t));
    arch_context_init_user(&t->context);
    object_lock_init(&t->lock);
    t->state = TS_INACTIVE;
    t->timeslice = TIMESLICE_TICKS;
}

void tcb_set_name(struct tcb *t, const char *name)
{
    strlcpy(t->name, name, sizeof(t->name));
}

struct ipc_buffer *tcb_ipc_buffer(struct tcb *t)
{
    const struct cap *c = &t->slots[TCB_SLOT_IPC_BUFFER].cap;
    word_t offset;

    if (c->type != CAP_FRAME)
        return NULL;
    offset = t->ipc_buffer_vaddr & MASK(c->size_bits);
    if (offset + sizeof(struct ipc_buffer) > BIT(c->size_bits))
        return NULL;
    return arch_phys_to_virt(c->paddr + offset);
}

void tcb_suspend(struct tcb *t)
{
    ipc_cancel(t);
    t->state = TS_INACTIVE;
    sched_dequeue(t);
    sched_evict(t);
}

void tcb_resume(struct tcb *t)
{
    if (t->state != TS_INACTIVE)
        return;
    t->state = TS_RUNNING;
    sched_wake(t);
}

/*
 * t is about to be freed or to run on another core: its core gives back
 * the registers of t it still holds lazily (kernel/arch.h), so that they
 * are all in t and no core refers to t.  sched_evict(t) came first: t runs
 * nowhere, so no core can take them again meanwhile.
 */
static void release_lazy_registers(struct tcb *t)
{
    if (arch_core_held_context(t->affinity) == &t->context)
        core_request(t->affinity, REQ_RELEASE_CONTEXT, t, 0, 0, false);
}

/* The TCB's last cap goes: nothing may run, wait or point at it afterwards. */
void tcb_finalise(struct tcb *t)
{
    struct core *c = my_core();

    if (t->bound_notification)
        notification_unbind(t->bound_notification);
    ipc_cancel(t);
    t->state = TS_INACTIVE;
    sched_dequeue(t);
    sched_evict(t);
    release_lazy_registers(t);
    if (c->entry_thread == t)
        c->entry_thread = NULL;
    if (root_thread == t)
        root_thread = NULL;
}

/*
 * ---- Invocations.  The decode_* of each invocation makes every check
 * before any change, then makes the change, which cannot fail (through
 * its invoke_* where it has arguments to carry).
 */

/* What a TCB invocation does, once decoded (the fields its label uses). */
struct tcb_args {
    struct tcb *target;
    word_t flags;                   /* Read/Write/CopyRegisters: MR0 (suspend or resume bits) */
    word_t count;                   /* registers read or written */
    word_t regs[ARCH_USER_REGS];    /* WriteRegisters: the new values */
    struct tcb *source;             /* CopyRegisters */
    word_t value;                   /* SetPriority, SetAffinity, SetTLSBase; SetSpace: the fault endpoint */
    struct notification *ntfn;      /* BindNotification */
    char name[TCB_NAME_MAX];        /* SetName */
};

/* SetSpace, Configure, SetIPCBuffer: each TCB slot replaced by a child of a source slot. */
struct tcb_space_args {
    struct tcb *target;
    struct cte *invoked;            /* the slot of the TCB cap invoked */
    bool set_space;                 /* fault endpoint, CSpace and VSpace */
    bool set_buffer;                /* IPC buffer */
    word_t fault_endpoint;
    word_t buffer_vaddr;
    struct cte *src[TCB_SLOT_IPC_BUFFER + 1];   /* by enum tcb_slot */
    struct cap cap[TCB_SLOT_IPC_BUFFER + 1];
};

static enum status check_cnode(struct invocation *inv, struct cte *slot, word_t data, struct cap *out,
                               unsigned idx)
{
    struct cap c = slot->cap;
    if (c.type != CAP_CNODE)
        return inv_error(inv, E_INVALID_CAPABILITY, idx, 0);
    if (data && !cspace_set_guard(&c, data))
        return inv_error(inv, E_INVALID_ARGUMENT, 1, 0);
    *out = c;
    return E_OK;
}

static enum status check_ipc_buffer(struct invocation *inv, struct cte *slot, word_t vaddr,
                                    unsigned idx, unsigned arg)
{
    const struct cap *c = &slot->cap;
    if (c->type != CAP_FRAME || (c->flags & CAPF_DEVICE) || !(c->rights & RIGHT_WRITE))
        return inv_error(inv, E_INVALID_CAPABILITY, idx, 0);
    if (!IS_ALIGNED(vaddr, 3) || vaddr >= USER_TOP)
        return inv_error(inv, E_ALIGNMENT, arg, 0);
    if ((vaddr & MASK(c->size_bits)) + sizeof(struct ipc_buffer) > BIT(c->size_bits))
        return inv_error(inv, E_INVALID_ARGUMENT, arg, 0);
    return E_OK;
}

/*
 * A thread another core is running has its live registers in that core:
 * take it off the core (it stays runnable, back in its queue) so the saved
 * context is current and changes to it take effect.
 */
static void sync_registers(struct tcb *t)
{
    if (t->affinity != arch_core_id() && cores[t->affinity].current == t) {
        sched_evict(t);
        if (tcb_runnable(t))
            sched_enqueue(t, QUEUE_BACK);
    }
}

/* Read and Copy Registers read t's saved registers: t suspended first (flags bit 0), else synced. */
static void stop_or_sync(struct tcb *t, word_t flags)
{
    if (flags & 1)
        tcb_suspend(t);
    else
        sync_registers(t);
}

static void invoke_read_registers(struct invocation *inv, const struct tcb_args *a)
{
    word_t regs[ARCH_USER_REGS];

    stop_or_sync(a->target, a->flags);
    arch_context_read_all(&a->target->context, regs);
    for (word_t i = 0; i < a->count; i++)
        inv_result(inv, (unsigned)i, regs[i]);
}

static enum status decode_read_registers(struct invocation *inv, struct tcb_args *a)
{
    a->flags = inv_mr(inv, 0);
    a->count = inv_mr(inv, 1);
    if (inv->length < 2)
        return E_TRUNCATED_MESSAGE;
    if (a->count > ARCH_USER_REGS || a->count > mr_capacity(inv->buffer))
        return inv_error(inv, E_RANGE, 0, MIN((word_t)ARCH_USER_REGS, (word_t)mr_capacity(inv->buffer)));
    if (a->target == inv->thread)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    invoke_read_registers(inv, a);
    return E_OK;
}

static void invoke_write_registers(const struct tcb_args *a)
{
    word_t regs[ARCH_USER_REGS];

    sync_registers(a->target);
    arch_context_read_all(&a->target->context, regs);
    for (word_t i = 0; i < a->count; i++)
        regs[i] = a->regs[i];
    arch_context_write_all(&a->target->context, regs);
    if (a->flags & 1)
        tcb_resume(a->target);
}

static enum status decode_write_registers(struct invocation *inv, struct tcb_args *a)
{
    a->flags = inv_mr(inv, 0);
    a->count = inv_mr(inv, 1);
    if (inv->length < 2)
        return E_TRUNCATED_MESSAGE;
    if (a->count > ARCH_USER_REGS)
        return inv_error(inv, E_RANGE, 0, ARCH_USER_REGS);
    if (inv->length < 2 + a->count)
        return E_TRUNCATED_MESSAGE;
    if (a->target == inv->thread)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    for (word_t i = 0; i < a->count; i++)
        a->regs[i] = inv_mr(inv, (unsigned)(2 + i));
    invoke_write_registers(a);
    return E_OK;
}

static void invoke_copy_registers(const struct tcb_args *a)
{
    word_t regs[ARCH_USER_REGS];

    stop_or_sync(a->source, a->flags);
    sync_registers(a->target);
    arch_context_read_all(&a->source->context, regs);
    arch_context_write_all(&a->target->context, regs);
    if (a->flags & 2)
        tcb_resume(a->target);
}

static enum status decode_copy_registers(struct invocation *inv, struct tcb_args *a)
{
    if (inv->length < 1 || inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    if (inv->extra[0]->cap.type != CAP_TCB)
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    a->flags = inv_mr(inv, 0);
    a->source = inv->extra[0]->cap.obj;
    if (a->target == inv->thread || a->source == inv->thread)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    invoke_copy_registers(a);
    return E_OK;
}

/*
 * Replace the target's slots as seL4's ThreadControl does: delete each
 * old cap (each may be its object's last and take long: preempted, the
 * call restarts, decodes again and finds the old slots empty or holding
 * the zombie it continues), then insert a child of each source that still
 * holds a cap to the same object.  A deletion can reach a source or the
 * invoked TCB cap only through a container whose last cap it deletes
 * (docs/kernel.md, "Replacing a thread's caps"): a source that went leaves
 * its slot empty, and an invoked cap that went (the thread may be gone
 * with it) ends the call after the deletions.  Either way the call has
 * done what it can and cannot fail.
 */
static enum progress invoke_set_space(const struct tcb_space_args *a)
{
    struct tcb *t = a->target;

    for (unsigned i = 0; i <= TCB_SLOT_IPC_BUFFER; i++) {
        if (a->src[i] && cte_delete(&t->slots[i]) == PROGRESS_PREEMPTED)
            return PROGRESS_PREEMPTED;
    }
    if (a->invoked->cap.type != CAP_TCB || a->invoked->cap.obj != t)
        return PROGRESS_DONE;
    if (a->set_space) {
        sync_registers(t);
        t->fault_endpoint = a->fault_endpoint;
    }
    if (a->set_buffer)
        t->ipc_buffer_vaddr = a->buffer_vaddr;
    for (unsigned i = 0; i <= TCB_SLOT_IPC_BUFFER; i++) {
        if (a->src[i] && cap_same_object(&a->src[i]->cap, &a->cap[i]))
            cte_insert_child(a->src[i], &t->slots[i], a->cap[i]);
    }
    return PROGRESS_DONE;
}

/*
 * The check SetSpace, Configure and SetIPCBuffer share once their caps are
 * decoded.  A thread may not replace its own CSpace while its TCB slot
 * holds the last cap to it: the deletion would empty the CSpace the call
 * was looked up in, and a call preempted there could not be decoded again
 * when it restarts (its lookups would meet the zombie).  Every other
 * deletion leaves the caller's CSpace in place.
 */
static enum status decode_space_deletions(struct invocation *inv, struct tcb_space_args *a)
{
    a->invoked = inv->slot;
    if (a->set_space && a->target == inv->thread && cdt_is_final(&a->target->slots[TCB_SLOT_CSPACE]))
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    /* A frame becomes the IPC buffer unmapped (the thread reaches it through its own mapping). */
    if (a->set_buffer)
        cap_clear_mapping(&a->cap[TCB_SLOT_IPC_BUFFER]);
    if (invoke_set_space(a) == PROGRESS_PREEMPTED)
        return STATUS_PREEMPTED;
    return E_OK;
}

/* SetSpace and Configure: MR0 fault endpoint, MR1 CSpace guard data; extra 0 CNode, 1 VSpace. */
static enum status decode_set_space(struct invocation *inv, struct tcb_space_args *a, bool with_buffer)
{
    enum status s;
    unsigned need = with_buffer ? 3 : 2;

    if (inv->length < need || inv->nextra < 2 || (with_buffer && inv->nextra < 3))
        return E_TRUNCATED_MESSAGE;
    if ((s = check_cnode(inv, inv->extra[0], inv_mr(inv, 1), &a->cap[TCB_SLOT_CSPACE], 0)))
        return s;
    a->cap[TCB_SLOT_VSPACE] = inv->extra[1]->cap;
    if (a->cap[TCB_SLOT_VSPACE].type != CAP_VSPACE || a->cap[TCB_SLOT_VSPACE].asid == 0)
        return inv_error(inv, E_INVALID_CAPABILITY, 1, 0);
    if (with_buffer && (s = check_ipc_buffer(inv, inv->extra[2], inv_mr(inv, 2), 2, 2)))
        return s;
    a->set_space = true;
    a->fault_endpoint = inv_mr(inv, 0);
    a->src[TCB_SLOT_CSPACE] = inv->extra[0];
    a->src[TCB_SLOT_VSPACE] = inv->extra[1];
    if (with_buffer) {
        a->set_buffer = true;
        a->buffer_vaddr = inv_mr(inv, 2);
        a->src[TCB_SLOT_IPC_BUFFER] = inv->extra[2];
        a->cap[TCB_SLOT_IPC_BUFFER] = inv->extra[2]->cap;
    }
    return decode_space_deletions(inv, a);
}

/* SetIPCBuffer: MR0 the buffer's address; extra 0 the frame. */
static enum status decode_set_ipc_buffer(struct invocation *inv, struct tcb_space_args *a)
{
    enum status s;

    if (inv->length < 1 || inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    if ((s = check_ipc_buffer(inv, inv->extra[0], inv_mr(inv, 0), 0, 0)))
        return s;
    a->set_buffer = true;
    a->buffer_vaddr = inv_mr(inv, 0);
    a->src[TCB_SLOT_IPC_BUFFER] = inv->extra[0];
    a->cap[TCB_SLOT_IPC_BUFFER] = inv->extra[0]->cap;
    return decode_space_deletions(inv, a);
}

static void invoke_set_priority(const struct tcb_args *a)
{
    struct tcb *t = a->target;
    bool queued = t->in_ready_queue;

    if (queued)
        sched_dequeue(t);
    t->priority = (uint8_t)a->value;
    t->max_priority = (uint8_t)a->value;
    if (queued)
        sched_enqueue(t, QUEUE_BACK);
    else if (tcb_runnable(t) && t->affinity != arch_core_id())
        core_defer_ipi(t->affinity);
}

/* SetPriority: MR0 the priority, at most the authority's (extra 0, else the caller) maximum. */
static enum status decode_set_priority(struct invocation *inv, struct tcb_args *a)
{
    struct tcb *auth = inv->thread;

    a->value = inv_mr(inv, 0);
    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (inv->nextra >= 1) {
        if (inv->extra[0]->cap.type != CAP_TCB)
            return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
        auth = inv->extra[0]->cap.obj;
    }
    if (a->value > auth->max_priority)
        return inv_error(inv, E_RANGE, 0, auth->max_priority);
    invoke_set_priority(a);
    return E_OK;
}

/* The only migration: the thread leaves its core (by IPI if it runs there) and joins the other. */
static void invoke_set_affinity(const struct tcb_args *a)
{
    struct tcb *t = a->target;

    if (a->value == t->affinity)
        return;
    sched_dequeue(t);
    sched_evict(t);
    release_lazy_registers(t);
    t->affinity = (unsigned)a->value;
    t->timeslice = TIMESLICE_TICKS;
    if (tcb_runnable(t))
        sched_enqueue(t, QUEUE_BACK);
}

static enum status decode_set_affinity(struct invocation *inv, struct tcb_args *a)
{
    a->value = inv_mr(inv, 0);
    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (a->value >= ncores_online)
        return inv_error(inv, E_RANGE, 0, ncores_online - 1);
    invoke_set_affinity(a);
    return E_OK;
}

static enum status decode_resume(struct invocation *inv, struct tcb_args *a)
{
    if (a->target->slots[TCB_SLOT_CSPACE].cap.type != CAP_CNODE)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    tcb_resume(a->target);
    return E_OK;
}

static enum status decode_bind(struct invocation *inv, struct tcb_args *a)
{
    if (inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    if (inv->extra[0]->cap.type != CAP_NOTIFICATION || !(inv->extra[0]->cap.rights & RIGHT_READ))
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    a->ntfn = inv->extra[0]->cap.obj;
    if (a->target->bound_notification || a->ntfn->bound_tcb || a->ntfn->state == NTFN_WAITING)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    notification_bind(a->ntfn, a->target);
    return E_OK;
}

static enum status decode_unbind(struct invocation *inv, struct tcb_args *a)
{
    if (!a->target->bound_notification)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    notification_unbind(a->target->bound_notification);
    return E_OK;
}

/* SetName: MR0 length, then the bytes packed little-endian into MR1.. */
static enum status decode_set_name(struct invocation *inv, struct tcb_args *a)
{
    word_t len = inv_mr(inv, 0);

    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (len >= TCB_NAME_MAX)
        return inv_error(inv, E_RANGE, 0, TCB_NAME_MAX - 1);
    if (inv->length < 1 + (len + sizeof(word_t) - 1) / sizeof(word_t))
        return E_TRUNCATED_MESSAGE;
    for (word_t i = 0; i < len; i++) {
        word_t w = inv_mr(inv, (unsigned)(1 + i / sizeof(word_t)));
        a->name[i] = (char)(w >> (8 * (i % sizeof(word_t))));
    }
    a->name[len] = '\0';
    tcb_set_name(a->target, a->name);
    return E_OK;
}

/*
 * SetTLSBase: MR0 the base.  A thread running on another core is taken off
 * it first, as WriteRegisters does, so the base is loaded when it next runs;
 * the caller's own base is loaded by its return to user mode.
 */
static void invoke_set_tls_base(const struct tcb_args *a)
{
    sync_registers(a->target);
    a->target->context.tls_base = a->value;
}

static enum status decode_set_tls_base(struct invocation *inv, struct tcb_args *a)
{
    a->value = inv_mr(inv, 0);
    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (!arch_tls_base_valid(a->value))
        return inv_error(inv, E_INVALID_ARGUMENT, 0, 0);
    invoke_set_tls_base(a);
    return E_OK;
}

enum status decode_tcb_invocation(struct invocation *inv)
{
    struct tcb_args a = { .target = inv->cap.obj };
    struct tcb_space_args space = { .target = inv->cap.obj };

    switch (inv->label) {
    case TCB_READ_REGISTERS:
        return decode_read_registers(inv, &a);
    case TCB_WRITE_REGISTERS:
        return decode_write_registers(inv, &a);
    case TCB_COPY_REGISTERS:
        return decode_copy_registers(inv, &a);
    case TCB_CONFIGURE:
        return decode_set_space(inv, &space, true);
    case TCB_SET_SPACE:
        return decode_set_space(inv, &space, false);
    case TCB_SET_IPC_BUFFER:
        return decode_set_ipc_buffer(inv, &space);
    case TCB_SET_PRIORITY:
        return decode_set_priority(inv, &a);
    case TCB_SET_AFFINITY:
        return decode_set_affinity(inv, &a);
    case TCB_SUSPEND:
        tcb_suspend(a.target);
        return E_OK;
    case TCB_RESUME:
        return decode_resume(inv, &a);
    case TCB_BIND_NOTIFICATION:
        return decode_bind(inv, &a);
    case TCB_UNBIND_NOTIFICATION:
        return decode_unbind(inv, &a);
    case TCB_SET_NAME:
        return decode_set_name(inv, &a);
    case TCB_SET_TLS_BASE:
        return decode_set_tls_base(inv, &a);
    default:
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    }
}
