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
    if (c->entry_thread == t)
        c->entry_thread = NULL;
    if (root_thread == t)
        root_thread = NULL;
}

/* ---- Decoding helpers. */

static enum status check_cnode(struct invocation *inv, struct cte *slot, word_t data, struct cap *out,
                               unsigned idx)
{
    struct cap c = slot->cap;
    if (c.type != CAP_CNODE)
        return inv_error(inv, E_INVALID_CAPABILITY, idx, 0);
    if (data) {
        unsigned gbits = data & 63;
        word_t guard = data >> 6;
        if (gbits + c.size_bits > WORD_BITS || (gbits < WORD_BITS && (guard >> gbits)))
            return inv_error(inv, E_INVALID_ARGUMENT, 1, 0);
        c.guard_bits = (uint8_t)gbits;
        c.guard = guard;
    }
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
 * Replace the cap in one of t's slots by a child of src carrying `c`.
 * The old cap is deleted first; that may be its object's last cap and so
 * take long (STATUS_PREEMPTED: the call restarts and finds it gone).
 */
static enum status replace_slot(struct tcb *t, enum tcb_slot which, struct cte *src, struct cap c)
{
    struct cte *dest = &t->slots[which];
    enum status s = cte_delete(dest);
    if (s)
        return s;
    if (src) {
        if (c.type == CAP_FRAME) {
            c.flags &= (uint8_t)~CAPF_MAPPED;
            c.asid = 0;
            c.asid_gen = 0;
            c.mapped_vaddr = 0;
        }
        cte_insert_child(src, dest, c);
    }
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
            sched_enqueue(t);
    }
}

static enum status decode_read_registers(struct invocation *inv, struct tcb *t)
{
    word_t regs[ARCH_USER_REGS];
    word_t count = inv_mr(inv, 1);

    if (inv->length < 2)
        return E_TRUNCATED_MESSAGE;
    if (count > ARCH_USER_REGS || count > mr_capacity(inv->buffer))
        return inv_error(inv, E_RANGE, 0, MIN((word_t)ARCH_USER_REGS, (word_t)mr_capacity(inv->buffer)));
    if (t == inv->thread)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (inv_mr(inv, 0) & 1)
        tcb_suspend(t);
    else
        sync_registers(t);
    arch_context_read_all(&t->context, regs);
    for (word_t i = 0; i < count; i++)
        inv_result(inv, (unsigned)i, regs[i]);
    return E_OK;
}

static enum status decode_write_registers(struct invocation *inv, struct tcb *t)
{
    word_t regs[ARCH_USER_REGS];
    word_t count = inv_mr(inv, 1);

    if (inv->length < 2)
        return E_TRUNCATED_MESSAGE;
    if (count > ARCH_USER_REGS)
        return inv_error(inv, E_RANGE, 0, ARCH_USER_REGS);
    if (inv->length < 2 + count)
        return E_TRUNCATED_MESSAGE;
    if (t == inv->thread)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    sync_registers(t);
    arch_context_read_all(&t->context, regs);
    for (word_t i = 0; i < count; i++)
        regs[i] = inv_mr(inv, (unsigned)(2 + i));
    arch_context_write_all(&t->context, regs);
    if (inv_mr(inv, 0) & 1)
        tcb_resume(t);
    return E_OK;
}

static enum status decode_copy_registers(struct invocation *inv, struct tcb *t)
{
    word_t regs[ARCH_USER_REGS];
    struct tcb *src;

    if (inv->length < 1 || inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    if (inv->extra[0]->cap.type != CAP_TCB)
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    src = inv->extra[0]->cap.obj;
    if (t == inv->thread || src == inv->thread)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (inv_mr(inv, 0) & 1)
        tcb_suspend(src);
    else
        sync_registers(src);
    sync_registers(t);
    arch_context_read_all(&src->context, regs);
    arch_context_write_all(&t->context, regs);
    if (inv_mr(inv, 0) & 2)
        tcb_resume(t);
    return E_OK;
}

/* SetSpace and Configure: MR0 fault endpoint, MR1 CSpace guard data; extra 0 CNode, 1 VSpace. */
static enum status decode_set_space(struct invocation *inv, struct tcb *t, bool with_buffer)
{
    struct cap cspace, vspace;
    enum status s;
    unsigned need = with_buffer ? 3 : 2;

    if (inv->length < need || inv->nextra < 2 || (with_buffer && inv->nextra < 3))
        return E_TRUNCATED_MESSAGE;
    if ((s = check_cnode(inv, inv->extra[0], inv_mr(inv, 1), &cspace, 0)))
        return s;
    vspace = inv->extra[1]->cap;
    if (vspace.type != CAP_VSPACE || vspace.asid == 0)
        return inv_error(inv, E_INVALID_CAPABILITY, 1, 0);
    if (with_buffer && (s = check_ipc_buffer(inv, inv->extra[2], inv_mr(inv, 2), 2, 2)))
        return s;
    /* Deleting old caps may be preempted; nothing else has changed yet. */
    if ((s = cte_delete(&t->slots[TCB_SLOT_CSPACE])) || (s = cte_delete(&t->slots[TCB_SLOT_VSPACE])))
        return s;
    if (with_buffer && (s = cte_delete(&t->slots[TCB_SLOT_IPC_BUFFER])))
        return s;
    /* The extra caps may have lived in the slots just emptied. */
    if (cap_is_null(&inv->extra[0]->cap) || cap_is_null(&inv->extra[1]->cap) ||
        (with_buffer && cap_is_null(&inv->extra[2]->cap)))
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    sync_registers(t);
    t->fault_endpoint = inv_mr(inv, 0);
    replace_slot(t, TCB_SLOT_CSPACE, inv->extra[0], cspace);
    replace_slot(t, TCB_SLOT_VSPACE, inv->extra[1], vspace);
    if (with_buffer) {
        t->ipc_buffer_vaddr = inv_mr(inv, 2);
        replace_slot(t, TCB_SLOT_IPC_BUFFER, inv->extra[2], inv->extra[2]->cap);
    }
    return E_OK;
}

static enum status decode_set_ipc_buffer(struct invocation *inv, struct tcb *t)
{
    enum status s;

    if (inv->length < 1 || inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    if ((s = check_ipc_buffer(inv, inv->extra[0], inv_mr(inv, 0), 0, 0)))
        return s;
    if ((s = cte_delete(&t->slots[TCB_SLOT_IPC_BUFFER])))
        return s;
    if (cap_is_null(&inv->extra[0]->cap))
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    t->ipc_buffer_vaddr = inv_mr(inv, 0);
    replace_slot(t, TCB_SLOT_IPC_BUFFER, inv->extra[0], inv->extra[0]->cap);
    return E_OK;
}

static enum status decode_set_priority(struct invocation *inv, struct tcb *t)
{
    word_t prio = inv_mr(inv, 0);
    struct tcb *auth = inv->thread;

    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (inv->nextra >= 1) {
        if (inv->extra[0]->cap.type != CAP_TCB)
            return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
        auth = inv->extra[0]->cap.obj;
    }
    if (prio > auth->max_priority)
        return inv_error(inv, E_RANGE, 0, auth->max_priority);
    bool queued = t->in_ready_queue;
    if (queued)
        sched_dequeue(t);
    t->priority = (uint8_t)prio;
    t->max_priority = (uint8_t)prio;
    if (queued)
        sched_enqueue(t);
    else if (tcb_runnable(t) && t->affinity != arch_core_id())
        core_defer_ipi(t->affinity);
    return E_OK;
}

/* The only migration: the thread leaves its core (by IPI if it runs there) and joins the other. */
static enum status decode_set_affinity(struct invocation *inv, struct tcb *t)
{
    word_t core = inv_mr(inv, 0);

    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (core >= ncores_online)
        return inv_error(inv, E_RANGE, 0, ncores_online - 1);
    if (core == t->affinity)
        return E_OK;
    sched_dequeue(t);
    sched_evict(t);
    t->affinity = (unsigned)core;
    t->timeslice = TIMESLICE_TICKS;
    if (tcb_runnable(t))
        sched_enqueue(t);
    return E_OK;
}

static enum status decode_bind(struct invocation *inv, struct tcb *t)
{
    struct notification *n;

    if (inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    if (inv->extra[0]->cap.type != CAP_NOTIFICATION || !(inv->extra[0]->cap.rights & RIGHT_READ))
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    n = inv->extra[0]->cap.obj;
    if (t->bound_notification || n->bound_tcb || n->state == NTFN_WAITING)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    notification_bind(n, t);
    return E_OK;
}

/* SetName: MR0 length, then the bytes packed little-endian into MR1.. */
static enum status decode_set_name(struct invocation *inv, struct tcb *t)
{
    word_t len = inv_mr(inv, 0);
    char name[TCB_NAME_MAX];

    if (inv->length < 1)
        return E_TRUNCATED_MESSAGE;
    if (len >= TCB_NAME_MAX)
        return inv_error(inv, E_RANGE, 0, TCB_NAME_MAX - 1);
    if (inv->length < 1 + (len + sizeof(word_t) - 1) / sizeof(word_t))
        return E_TRUNCATED_MESSAGE;
    for (word_t i = 0; i < len; i++) {
        word_t w = inv_mr(inv, (unsigned)(1 + i / sizeof(word_t)));
        name[i] = (char)(w >> (8 * (i % sizeof(word_t))));
    }
    name[len] = '\0';
    tcb_set_name(t, name);
    return E_OK;
}

enum status decode_tcb_invocation(struct invocation *inv)
{
    struct tcb *t = inv->cap.obj;

    switch (inv->label) {
    case TCB_READ_REGISTERS:
        return decode_read_registers(inv, t);
    case TCB_WRITE_REGISTERS:
        return decode_write_registers(inv, t);
    case TCB_COPY_REGISTERS:
        return decode_copy_registers(inv, t);
    case TCB_CONFIGURE:
        return decode_set_space(inv, t, true);
    case TCB_SET_SPACE:
        return decode_set_space(inv, t, false);
    case TCB_SET_IPC_BUFFER:
        return decode_set_ipc_buffer(inv, t);
    case TCB_SET_PRIORITY:
        return decode_set_priority(inv, t);
    case TCB_SET_AFFINITY:
        return decode_set_affinity(inv, t);
    case TCB_SUSPEND:
        tcb_suspend(t);
        return E_OK;
    case TCB_RESUME:
        if (t->slots[TCB_SLOT_CSPACE].cap.type != CAP_CNODE)
            return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
        tcb_resume(t);
        return E_OK;
    case TCB_BIND_NOTIFICATION:
        return decode_bind(inv, t);
    case TCB_UNBIND_NOTIFICATION:
        if (!t->bound_notification)
            return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
        notification_unbind(t->bound_notification);
        return E_OK;
    case TCB_SET_NAME:
        return decode_set_name(inv, t);
    default:
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    }
}
