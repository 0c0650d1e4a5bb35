/*
 * Deleting capabilities and finalising objects.
 *
 * Deleting the last capability to a CNode or TCB (a container) that still
 * holds caps must first delete those, and each may itself be the last cap
 * of a container, so the work is a walk over a graph of containers that
 * can be deep and can have cycles (A holds the last cap to B, B a cap to
 * A).  Interrupts are off in the kernel, so the walk uses no recursion and
 * no stack proportional to its depth, and it stops at preemption points.
 * It cannot fail: Delete and Revoke have no error after their lookups.
 *
 * As in seL4, the last cap of a container with contents first becomes a
 * zombie (CAP_ZOMBIE) in its own slot.  A zombie names the container and
 * counts the slots still to empty (zombie_left: slots at and above it are
 * empty or belong to the object itself).  Nothing can be invoked, looked
 * up, copied or sent through a zombie, so nobody can put caps back into
 * the container: it only ever empties.  The walk starts at the slot the
 * operation was invoked on (its root) and looks at the highest slot not
 * yet emptied of the current zombie's container:
 *   - empty, the root itself (a cycle back to the start) or the TCB's
 *     master reply cap (part of the object): counted as emptied;
 *   - a cap that is not the last of a container with contents: deleted,
 *     finalising its object when it is the last;
 *   - the last cap of a container with contents: made a zombie, and the
 *     walk goes down into it;
 *   - a zombie (one left by a stopped operation): the walk goes down into
 *     it, taking it over.
 * A zombie with nothing left is removed from its slot, and the walk goes
 * back up to the zombie it came from (zombie_parent, set on the way down)
 * or ends at the root.
 *
 * Invariant: every object has at most one zombie and then no other cap
 * (a zombie is made only from a last cap, and cannot be copied), and the
 * zombies on the walk's way down from the root each sit in the container
 * of the one before.  So a zombie met in the current container is either
 * the root (skipped: a cycle) or not on the way down at all: going down
 * into it can never loop.
 *
 * Preemption points follow every step that leaves lasting progress (a cap
 * deleted, a zombie made or removed, a slot counted as emptied): a
 * restarted call decodes again, finds its root holding the zombie, and
 * walks down the zombies again (no polls on the way) to where it stopped.
 *
 * Memory is never reused while a capability can reach it: objects made
 * from an untyped stay allocated (below its watermark) until the untyped
 * has no children left and is retyped again; a zombie is a child like
 * the cap it replaced.
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

static bool is_container(uint8_t type)
{
    return type == CAP_CNODE || type == CAP_TCB;
}

/* The slots of a container of type `type` at obj, and how many it has. */
static struct cte *container_array(uint8_t type, void *obj, uint8_t size_bits, word_t *n)
{
    if (type == CAP_CNODE) {
        *n = BIT(size_bits);
        return obj;
    }
    *n = TCB_SLOT_COUNT;
    return ((struct tcb *)obj)->slots;
}

/*
 * The slots a container cap's deletion would empty: a CNode's array, a
 * TCB's own slots, or a zombie's slots not yet emptied; NULL otherwise.
 */
static struct cte *container_slots(const struct cap *c, word_t *n)
{
    struct cte *slots;

    if (c->type == CAP_ZOMBIE) {
        slots = container_array(c->zombie_of, c->obj, c->size_bits, n);
        *n = c->zombie_left;
        return slots;
    }
    if (is_container(c->type))
        return container_array(c->type, c->obj, c->size_bits, n);
    *n = 0;
    return NULL;
}

/*
 * A TCB's master reply cap is part of the TCB, not a capability it holds:
 * emptying the TCB deletes the reply caps made from it but leaves the
 * master, and its memory is cleared when it is reused.
 */
static bool is_part_of_object(uint8_t container_type, word_t i)
{
    return container_type == CAP_TCB && i == TCB_SLOT_REPLY;
}

static bool container_has_contents(const struct cap *c)
{
    word_t n;
    struct cte *slots = container_slots(c, &n);
    uint8_t type = c->type == CAP_ZOMBIE ? c->zombie_of : c->type;

    if (type == CAP_TCB && cdt_first_child(&slots[TCB_SLOT_REPLY]))
        return true;
    for (word_t i = 0; i < n; i++) {
        if (!cap_is_null(&slots[i].cap) && !is_part_of_object(type, i))
            return true;
    }
    return false;
}

/* Undo what one cap (not its object) holds: a frame's mapping. */
static void cap_cleanup(struct cap *c)
{
    if (c->type == CAP_FRAME)
        frame_finalise(c);
}

/* Destroy the object of a last cap (a container's contents are gone already). */
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

static void slot_clear(struct cte *slot)
{
    cdt_remove(slot);
    slot->cap = cap_null();
}

/* Delete a cap that holds no container contents, finalising its object if it is the last. */
static void delete_leaf(struct cte *slot)
{
    if (cdt_is_final(slot))
        object_finalise(&slot->cap);
    cap_cleanup(&slot->cap);
    untyped_hand_over_marks(slot);
    slot_clear(slot);
}

/*
 * The first step of deleting the cap in `slot` (not a zombie): a last TCB
 * cap stops its thread everywhere and loses the reply caps made from its
 * master; then the last cap of a container with contents becomes a zombie
 * (returns false), and any other cap is deleted (returns true).
 */
static bool delete_or_make_zombie(struct cte *slot)
{
    struct cap *c = &slot->cap;

    if (is_container(c->type) && cdt_is_final(slot)) {
        if (c->type == CAP_TCB) {
            struct tcb *t = c->obj;
            struct cte *child;
            tcb_finalise(t);
            while ((child = cdt_first_child(&t->slots[TCB_SLOT_REPLY])) != NULL)
                delete_leaf(child);
        }
        if (container_has_contents(c)) {
            word_t n;
            container_slots(c, &n);
            c->zombie_of = c->type;
            c->type = CAP_ZOMBIE;
            c->zombie_parent = NULL;
            c->zombie_left = n;
            return false;
        }
    }
    delete_leaf(slot);
    return true;
}

/* Empty the zombie in root and everything it leads to, then clear root (header comment). */
static enum progress delete_zombie(struct cte *root)
{
    struct cte *cur = root;

    for (;;) {
        struct cap *z = &cur->cap;
        word_t n;
        struct cte *slots = container_slots(z, &n);

        if (n == 0) {
            struct cte *parent = z->zombie_parent;
            slot_clear(cur);
            if (cur == root)
                return PROGRESS_DONE;
            cur = parent;
        } else {
            struct cte *next = &slots[n - 1];
            if (next->cap.type == CAP_ZOMBIE && next != root) {
                /* Left by a stopped walk, this one's or another's: no progress, no poll. */
                next->cap.zombie_parent = cur;
                cur = next;
                continue;
            }
            if (cap_is_null(&next->cap) || next == root || is_part_of_object(z->zombie_of, n - 1) ||
                delete_or_make_zombie(next)) {
                z->zombie_left--;
            } else {
                next->cap.zombie_parent = cur;
                cur = next;
            }
        }
        if (preemption_point())
            return PROGRESS_PREEMPTED;
    }
}

enum progress cte_delete(struct cte *slot)
{
    if (cap_is_null(&slot->cap))
        return PROGRESS_DONE;
    if (slot->cap.type != CAP_ZOMBIE && delete_or_make_zombie(slot))
        return PROGRESS_DONE;
    return delete_zombie(slot);
}

enum progress cte_revoke(struct cte *slot)
{
    struct cte *child;
    bool had_children = cdt_has_children(slot);

    while ((child = cdt_first_child(slot)) != NULL) {
        if (cte_delete(child) == PROGRESS_PREEMPTED)
            return PROGRESS_PREEMPTED;
        if (cdt_first_child(slot) && preemption_point())
            return PROGRESS_PREEMPTED;
    }
    if (slot->cap.type == CAP_UNTYPED && had_children) {
        /* Everything made from it is gone: it starts over (its memory is dirty). */
        slot->cap.free_index = 0;
        slot->cap.clear_index = 0;
    }
    return PROGRESS_DONE;
}
