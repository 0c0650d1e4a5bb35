/*
 * The capability derivation tree: one preorder list of slots with depths
 * (see cap.h for why this represents the tree).
 */
#include <limits.h>
#include "cdt.h"
#include "printf.h"
#include <arch.h>

/*
 * The list starts at a sentinel that is never a parent: roots (depth 0) are
 * inserted right after it.  Operations start from a slot; only the
 * invariant checker walks the list from the start.
 */
static struct cte cdt_sentinel;

void cdt_insert_child(struct cte *parent, struct cte *child)
{
    child->cdt_depth = parent->cdt_depth + 1;
    child->cdt_prev = parent;
    child->cdt_next = parent->cdt_next;
    if (parent->cdt_next)
        parent->cdt_next->cdt_prev = child;
    parent->cdt_next = child;
}

void cdt_insert_sibling(struct cte *after, struct cte *slot)
{
    if (!after) {
        slot->cdt_depth = 0;
        slot->cdt_prev = &cdt_sentinel;
        slot->cdt_next = cdt_sentinel.cdt_next;
        if (cdt_sentinel.cdt_next)
            cdt_sentinel.cdt_next->cdt_prev = slot;
        cdt_sentinel.cdt_next = slot;
        return;
    }
    /* After `after`'s whole subtree, so the new slot does not adopt its children. */
    struct cte *last = after;
    while (last->cdt_next && last->cdt_next->cdt_depth > after->cdt_depth)
        last = last->cdt_next;
    slot->cdt_depth = after->cdt_depth;
    slot->cdt_prev = last;
    slot->cdt_next = last->cdt_next;
    if (last->cdt_next)
        last->cdt_next->cdt_prev = slot;
    last->cdt_next = slot;
}

void cdt_remove(struct cte *slot)
{
    /* Its children move up to its parent.  Their depths must follow: left one too deep, they
     * would read as children of the slot before them (a sibling's subtree), which Revoke would
     * then delete and whose Retype would count them. */
    for (struct cte *d = slot->cdt_next; d && d->cdt_depth > slot->cdt_depth; d = d->cdt_next)
        d->cdt_depth--;
    if (slot->cdt_prev)
        slot->cdt_prev->cdt_next = slot->cdt_next;
    if (slot->cdt_next)
        slot->cdt_next->cdt_prev = slot->cdt_prev;
    slot->cdt_prev = slot->cdt_next = NULL;
    slot->cdt_depth = 0;
}

void cdt_move(struct cte *src, struct cte *dest)
{
    dest->cdt_prev = src->cdt_prev;
    dest->cdt_next = src->cdt_next;
    dest->cdt_depth = src->cdt_depth;
    if (dest->cdt_prev)
        dest->cdt_prev->cdt_next = dest;
    if (dest->cdt_next)
        dest->cdt_next->cdt_prev = dest;
    src->cdt_prev = src->cdt_next = NULL;
    src->cdt_depth = 0;
}

void cdt_swap(struct cte *a, struct cte *b)
{
    struct cte tmp_a = *a, tmp_b = *b;

    if (a == b)
        return;
    /* Adjacent slots point at each other: go through a scratch position. */
    if (a->cdt_next == b || b->cdt_next == a) {
        struct cte *first = a->cdt_next == b ? a : b;
        struct cte *second = first == a ? b : a;
        struct cte *before = first->cdt_prev, *after = second->cdt_next;
        word_t d1 = first->cdt_depth, d2 = second->cdt_depth;
        /* New order: before, second, first, after; depths stay with positions. */
        second->cdt_prev = before;
        second->cdt_next = first;
        first->cdt_prev = second;
        first->cdt_next = after;
        if (before)
            before->cdt_next = second;
        if (after)
            after->cdt_prev = first;
        second->cdt_depth = d1;
        first->cdt_depth = d2;
        return;
    }
    a->cdt_prev = tmp_b.cdt_prev;
    a->cdt_next = tmp_b.cdt_next;
    a->cdt_depth = tmp_b.cdt_depth;
    b->cdt_prev = tmp_a.cdt_prev;
    b->cdt_next = tmp_a.cdt_next;
    b->cdt_depth = tmp_a.cdt_depth;
    if (a->cdt_prev)
        a->cdt_prev->cdt_next = a;
    if (a->cdt_next)
        a->cdt_next->cdt_prev = a;
    if (b->cdt_prev)
        b->cdt_prev->cdt_next = b;
    if (b->cdt_next)
        b->cdt_next->cdt_prev = b;
}

struct cte *cdt_first_child(const struct cte *slot)
{
    struct cte *n = slot->cdt_next;
    return n && n->cdt_depth > slot->cdt_depth ? n : NULL;
}

bool cdt_has_children(const struct cte *slot)
{
    return cdt_first_child(slot) != NULL;
}

bool cdt_is_final(const struct cte *slot)
{
    const struct cap *c = &slot->cap;
    if (slot->cdt_prev && cap_same_object(&slot->cdt_prev->cap, c))
        return false;
    if (slot->cdt_next && cap_same_object(&slot->cdt_next->cap, c))
        return false;
    return true;
}

/* Whether child's object may be derived from parent's (same object, or made from the untyped). */
static bool derivation_ok(const struct cap *parent, const struct cap *child)
{
    if (cap_same_object(parent, child))
        return true;
    if (parent->type == CAP_REPLY && child->type == CAP_REPLY)
        return parent->obj == child->obj && (parent->flags & CAPF_MASTER) && !(child->flags & CAPF_MASTER);
    if (parent->type == CAP_IRQ_CONTROL)
        return child->type == CAP_IRQ_HANDLER;
    if (parent->type != CAP_UNTYPED)
        return false;
    word_t start = parent->paddr, end = parent->paddr + BIT(parent->size_bits);
    word_t p;
    switch (child->type) {
    case CAP_UNTYPED:
    case CAP_FRAME:
        p = child->paddr;
        break;
    case CAP_TCB:
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION:
    case CAP_CNODE:
    case CAP_PAGE_TABLE:
    case CAP_VSPACE:
    case CAP_ZOMBIE:
        p = arch_virt_to_phys(child->obj);
        break;
    default:
        return false;
    }
    return p >= start && p < end && p - start < parent->free_index;
}

long cdt_check(const char **why)
{
    long n = 0;
    struct cte *prev = &cdt_sentinel;

    for (struct cte *s = cdt_sentinel.cdt_next; s; prev = s, s = s->cdt_next) {
        n++;
        if (s->cdt_prev != prev) {
            *why = "cdt: prev link does not match";
            return -1;
        }
        if (cap_is_null(&s->cap)) {
            *why = "cdt: an empty slot is linked";
            return -1;
        }
        if (s->cap.type >= CAP_TYPE_COUNT) {
            *why = "cdt: a capability has an unknown type";
            return -1;
        }
        /* The parent is the nearest earlier slot of smaller depth. */
        struct cte *parent = s->cdt_prev;
        while (parent != &cdt_sentinel && parent->cdt_depth >= s->cdt_depth)
            parent = parent->cdt_prev;
        if (parent != &cdt_sentinel && !derivation_ok(&parent->cap, &s->cap)) {
            *why = "cdt: a capability is not derived from its parent";
            return -1;
        }
        if (n > LONG_MAX / 2) {
            *why = "cdt: the list has a cycle";
            return -1;
        }
    }
    return n;
}

/* The first slot of the list (for the invariant checker). */
struct cte *cdt_first(void)
{
    return cdt_sentinel.cdt_next;
}
