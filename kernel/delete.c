/*
 * Deleting capabilities and finalising objects.
 *
 * Deleting the last capability to a CNode or TCB (a container) first
 * empties the container, deleting the caps it holds, which may themselves
 * be last caps of containers.  That recursion is bounded by
 * DELETE_MAX_DEPTH.  Slots of containers being emptied further up (a
 * cycle: A holds the last cap to B, which holds the last cap to A) are
 * skipped; the level that owns them clears them before it returns.
 *
 * Decode, then invoke: a decoder first asks delete_scan() what the
 * deletion would do, without changing anything: whether it nests deeper
 * than the bound (the decoder returns E_REVOKE_FIRST and the user deletes
 * the inner containers first) and whether it would clear a slot the
 * decoder still needs.  The scan sees which caps are final now.  A cap
 * that becomes final during the deletion (the container held another
 * copy of it, deleted first) can still take the deletion past the bound;
 * then it stops as if preempted, keeping what it did, and the restarted
 * system call decodes again and meets the deeper structure in its scan.
 * So cte_delete() and cte_revoke() never fail; they only finish or stop.
 *
 * Preemption points are only at the outermost level (between the
 * top-level container's slots, and between the children in a revoke),
 * where every object is either untouched or fully deleted, so a restarted
 * operation finds a consistent state and simply continues.
 *
 * Memory is never reused while a capability can reach it: objects made
 * from an untyped stay allocated (below its watermark) until the untyped
 * has no children left and is retyped again.
 */
#include "delete.h"
#include "cdt.h"
#include "core.h"
#include "endpoint.h"
#include "irq.h"
#include "notification.h"
#include "preemption.h"
#include "printf.h"
#include "sched.h"
#include "tcb.h"
#include "untyped.h"
#include "vspace.h"
#include <arch.h>

#define DELETE_MAX_DEPTH 8

struct delete_chain {
    struct cte *slot[DELETE_MAX_DEPTH];
    unsigned n;
};

static enum progress delete_slot(struct cte *slot, struct delete_chain *chain);

static bool in_chain(const struct delete_chain *chain, const struct cte *slot)
{
    for (unsigned i = 0; i < chain->n; i++) {
        if (chain->slot[i] == slot)
            return true;
    }
    return false;
}

/*
 * A TCB's master reply cap is part of the TCB, not a capability it holds:
 * emptying the TCB deletes the reply caps made from it but leaves the
 * master.  A deletion preempted half-way can be abandoned (the slot's cap
 * moved away, the deleting thread restarted elsewhere) and the TCB used
 * again, so it must stay whole; its memory is cleared when it is reused.
 */
static bool is_part_of_object(const struct cap *container, word_t i)
{
    return container->type == CAP_TCB && i == TCB_SLOT_REPLY;
}

/* The slots a container holds: a CNode's array, or a TCB's own slots. */
static struct cte *container_slots(const struct cap *c, word_t *n)
{
    if (c->type == CAP_CNODE) {
        *n = BIT(c->size_bits);
        return (struct cte *)c->obj;
    }
    if (c->type == CAP_TCB) {
        *n = TCB_SLOT_COUNT;
        return ((struct tcb *)c->obj)->slots;
    }
    *n = 0;
    return NULL;
}

/* Whether slot i of `container` is one emptying the container deletes. */
static bool to_empty(const struct cap *container, const struct cte *slots, word_t i,
                     const struct delete_chain *chain)
{
    return !cap_is_null(&slots[i].cap) && !in_chain(chain, &slots[i]) &&
           !is_part_of_object(container, i);
}

/*
 * Delete every cap in the container named by slot's cap (skipping chain
 * slots).  Past DELETE_MAX_DEPTH it stops as preempted (the header comment
 * says why that happens only after progress and ends in the decoder).
 */
static enum progress empty_container(struct cte *slot, struct delete_chain *chain)
{
    word_t n;
    struct cte *slots = container_slots(&slot->cap, &n);
    bool outermost = chain->n == 0;
    enum progress p = PROGRESS_DONE;

    if (!slots)
        return PROGRESS_DONE;
    if (chain->n == DELETE_MAX_DEPTH)
        return PROGRESS_PREEMPTED;
    chain->slot[chain->n++] = slot;
    if (slot->cap.type == CAP_TCB) {
        /* The reply caps made from its master go; the master stays (is_part_of_object()). */
        struct cte *master = &slots[TCB_SLOT_REPLY];
        struct cte *child;
        while ((child = cdt_first_child(master)) != NULL)
            cte_delete_one(child);
    }
    for (word_t i = 0; i < n; i++) {
        if (!to_empty(&slot->cap, slots, i, chain))
            continue;
        p = delete_slot(&slots[i], chain);
        if (p == PROGRESS_PREEMPTED)
            break;
        if (outermost && i + 1 < n && preemption_point()) {
            p = PROGRESS_PREEMPTED;
            break;
        }
    }
    chain->n--;
    return p;
}

/* Undo what one cap (not its object) holds: a frame's mapping. */
static void cap_cleanup(struct cap *c)
{
    if (c->type == CAP_FRAME)
        frame_finalise(c);
}

/* Destroy the object of a last cap (its contents, if a container, are gone already). */
static void object_finalise(struct cap *c)
{
    switch (c->type) {
    case CAP_ENDPOINT:
        endpoint_cancel_all(c->obj);
        break;
    case CAP_NOTIFICATION:
        notification_cancel_all(c->obj);
        notification_unbind(c->obj);
        irq_forget_notification(c->obj);
        break;
    case CAP_VSPACE:
        vspace_finalise(c);
        break;
    case CAP_PAGE_TABLE:
        page_table_finalise(c);
        break;
    case CAP_IRQ_HANDLER:
        irq_handler_finalise((unsigned)c->irq);
        break;
    default:
        break;
    }
}

static bool container_has_contents(const struct cap *c)
{
    word_t n;
    struct cte *slots = container_slots(c, &n);
    if (c->type == CAP_TCB && cdt_first_child(&slots[TCB_SLOT_REPLY]))
        return true;
    for (word_t i = 0; i < n; i++) {
        if (!cap_is_null(&slots[i].cap) && !is_part_of_object(c, i))
            return true;
    }
    return false;
}

static void slot_clear(struct cte *slot)
{
    cdt_remove(slot);
    slot->cap = cap_null();
}

static enum progress delete_slot(struct cte *slot, struct delete_chain *chain)
{
    if (cap_is_null(&slot->cap))
        return PROGRESS_DONE;
    if (cdt_is_final(slot)) {
        if (slot->cap.type == CAP_TCB) {
            /* Stop it everywhere before taking its slots away. */
            tcb_finalise(slot->cap.obj);
        }
        if (container_has_contents(&slot->cap) &&
            empty_container(slot, chain) == PROGRESS_PREEMPTED)
            return PROGRESS_PREEMPTED;
        object_finalise(&slot->cap);
    }
    cap_cleanup(&slot->cap);
    untyped_hand_over_marks(slot);
    slot_clear(slot);
    return PROGRESS_DONE;
}

enum progress cte_delete(struct cte *slot)
{
    struct delete_chain chain = { .n = 0 };
    return delete_slot(slot, &chain);
}

void cte_delete_one(struct cte *slot)
{
    struct delete_chain chain = { .n = DELETE_MAX_DEPTH - 1 };
    enum progress p;

    /* Callers pass caps that hold no container contents: no recursion, no preemption point. */
    p = delete_slot(slot, &chain);
    assert(p == PROGRESS_DONE);
    (void)p;
}

enum progress cte_revoke(struct cte *slot)
{
    struct cte *child;
    bool had_children = cdt_has_children(slot);

    while ((child = cdt_first_child(slot)) != NULL) {
        struct delete_chain chain = { .n = 0 };
        if (delete_slot(child, &chain) == PROGRESS_PREEMPTED)
            return PROGRESS_PREEMPTED;
        if (cdt_first_child(slot) && preemption_point())
            return PROGRESS_PREEMPTED;
    }
    if (slot->cap.type == CAP_UNTYPED && had_children) {
        /* Everything made from it is gone: it starts over (its memory is dirty). */
        slot->cap.free_index = 0;
        slot->cap.asid_gen = 0;
    }
    return PROGRESS_DONE;
}

/* ---- What a deletion would do, for decoders: the walk of delete_slot(), changing nothing. */

static void scan_slot(const struct cte *slot, struct delete_chain *chain, struct delete_scan *scan)
{
    word_t n;
    struct cte *slots;

    if (cap_is_null(&slot->cap))
        return;
    for (unsigned i = 0; i < scan->nwatch; i++)
        scan->clears_watched |= scan->watch[i] == slot;
    if (!cdt_is_final(slot) || !container_has_contents(&slot->cap))
        return;
    if (chain->n == DELETE_MAX_DEPTH) {
        scan->too_deep = true;
        return;
    }
    slots = container_slots(&slot->cap, &n);
    chain->slot[chain->n++] = (struct cte *)slot;
    for (word_t i = 0; i < n && !scan->too_deep; i++) {
        if (to_empty(&slot->cap, slots, i, chain))
            scan_slot(&slots[i], chain, scan);
    }
    chain->n--;
}

void delete_scan(const struct cte *slot, struct delete_scan *scan)
{
    struct delete_chain chain = { .n = 0 };
    scan_slot(slot, &chain, scan);
}

void revoke_scan(const struct cte *slot, struct delete_scan *scan)
{
    for (const struct cte *c = cdt_first_child(slot); c && c->cdt_depth > slot->cdt_depth && !scan->too_deep;
         c = c->cdt_next)
        delete_scan(c, scan);
}
