/*
 * CNode invocations (Copy, Mint, Move, Mutate, Delete, Revoke, Rotate,
 * SaveCaller) and the slot operations they share with other objects.
 *
 * Message layout (docs/abi.md): MR0 dest index, MR1 dest depth, then the
 * source or pivot as (index, depth) in the next MRs; source CNodes are
 * extra caps.  The badge of a CNode cap (Mint, Mutate, Rotate) is its
 * guard data (abi/cnode_guard.h).
 */
#include "cspace.h"
#include "cdt.h"
#include "delete.h"
#include "invocation.h"
#include "preemption.h"
#include "printf.h"
#include "vspace.h"

void cte_insert_child(struct cte *parent, struct cte *dest, struct cap cap)
{
    assert(cap_is_null(&dest->cap));
    dest->cap = cap;
    cdt_insert_child(parent, dest);
}

void cte_insert_root(struct cte *dest, struct cap cap)
{
    assert(cap_is_null(&dest->cap));
    dest->cap = cap;
    cdt_insert_sibling(NULL, dest);
}

void cte_move(struct cte *src, struct cte *dest)
{
    assert(cap_is_null(&dest->cap));
    dest->cap = src->cap;
    cdt_move(src, dest);
    src->cap = cap_null();
}

void cte_swap(struct cte *a, struct cte *b)
{
    struct cap t = a->cap;
    a->cap = b->cap;
    b->cap = t;
    cdt_swap(a, b);
}

/* Errors of a failed lookup: E_FAILED_LOOKUP with the failure kind and the argument index. */
static enum status lookup_error(struct invocation *inv, struct lookup_result r, unsigned arg)
{
    return inv_error(inv, E_FAILED_LOOKUP, r.failure, arg);
}

/* Give an endpoint or notification cap a badge, or a CNode cap a guard (badge 0: no change). */
static enum status apply_badge(struct invocation *inv, struct cap *c, word_t badge)
{
    if (!badge)
        return E_OK;
    if (c->type == CAP_ENDPOINT || c->type == CAP_NOTIFICATION) {
        if (c->badge)
            return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
        c->badge = badge;
        return E_OK;
    }
    if (c->type == CAP_CNODE && cspace_set_guard(c, badge))
        return E_OK;
    return inv_error(inv, E_INVALID_ARGUMENT, 5, 0);
}

/*
 * As seL4's deriveCap.  A derived cap never carries a mapping (only the cap
 * that made a mapping does, vspace.h).  An untyped cap with children has
 * no child cap until it is revoked (the copy would retype memory its
 * children use).  An empty slot, reply caps, IRQ control, page tables (a
 * table maps at one place) and zombies (a zombie is its object's only cap,
 * kernel/delete.c) have none at all.
 */
enum status cap_derive(const struct cte *src, struct cap *out)
{
    struct cap c = src->cap;

    switch (c.type) {
    case CAP_UNTYPED:
        if (cdt_has_children(src))
            return E_REVOKE_FIRST;
        break;
    case CAP_NULL:
    case CAP_REPLY:
    case CAP_IRQ_CONTROL:
    case CAP_PAGE_TABLE:
    case CAP_ZOMBIE:
        return E_ILLEGAL_OPERATION;
    case CAP_FRAME:
        cap_clear_mapping(&c);
        break;
    default:
        break;
    }
    *out = c;
    return E_OK;
}

/* Copy and Mint: the derived cap with `rights` at most and, for Mint, `badge`. */
static enum status derive_copy(struct invocation *inv, const struct cte *src, word_t rights,
                               bool set_badge, word_t badge, struct cap *out)
{
    struct cap c;
    enum status st;

    if (cap_is_null(&src->cap))
        return inv_error(inv, E_FAILED_LOOKUP, LOOKUP_MISSING_CAPABILITY, 2);
    if ((st = cap_derive(src, &c)))
        return st;
    c.rights &= (uint8_t)rights;
    if (set_badge && (st = apply_badge(inv, &c, badge)))
        return st;
    *out = c;
    return E_OK;
}

/* Resolve (MR index, MR depth) against the CNode cap `root` as a slot. */
static enum status get_slot(struct invocation *inv, const struct cap *root, unsigned mr,
                            struct cte **out)
{
    struct lookup_result r = cspace_lookup_slot(root, inv_mr(inv, mr), (unsigned)inv_mr(inv, mr + 1));
    if (r.failure)
        return lookup_error(inv, r, mr);
    *out = r.slot;
    return E_OK;
}

static enum status extra_cnode(struct invocation *inv, unsigned i, const struct cap **out)
{
    if (inv->nextra <= i)
        return E_TRUNCATED_MESSAGE;
    if (inv->extra[i]->cap.type != CAP_CNODE)
        return inv_error(inv, E_INVALID_CAPABILITY, i, 0);
    *out = &inv->extra[i]->cap;
    return E_OK;
}

/*
 * ---- Invocations.  The decode_* of each invocation makes every check
 * before any change, then makes the change, which cannot fail (through
 * its invoke_* where it has arguments to carry).  decode_source(), the
 * part Copy, Mint, Move and Mutate share, only checks.
 */

/* What a CNode invocation acts on, once decoded. */
struct cnode_args {
    struct cte *dest;
    struct cte *src;            /* Copy, Mint, Move, Mutate, Rotate; the caller's reply slot for SaveCaller */
    struct cte *pivot;          /* Rotate */
    struct cap to_dest;         /* the cap dest receives */
    struct cap to_pivot;        /* Rotate: the cap pivot receives */
};

static void invoke_copy(const struct cnode_args *a)
{
    cte_insert_child(a->src, a->dest, a->to_dest);
}

/* Move and Mutate: the cap moves with its place in the CDT; Mutate changes its badge or guard. */
static void invoke_move(const struct cnode_args *a)
{
    cte_move(a->src, a->dest);
    a->dest->cap = a->to_dest;
}

/* src -> pivot -> dest, as two moves (or a swap when dest is src). */
static void invoke_rotate(const struct cnode_args *a)
{
    if (a->src == a->dest) {
        cte_swap(a->pivot, a->src);
    } else {
        cte_move(a->pivot, a->dest);
        cte_move(a->src, a->pivot);
    }
    a->dest->cap = a->to_dest;
    a->pivot->cap = a->to_pivot;
}

static void invoke_save_caller(const struct cnode_args *a)
{
    if (!cap_is_null(&a->src->cap))
        cte_move(a->src, a->dest);
}

/* The source slot of Copy, Mint, Move and Mutate: (MR2, MR3) in extra 0; `length` MRs in all. */
static enum status decode_source(struct invocation *inv, struct cnode_args *a, unsigned length)
{
    const struct cap *src_root;
    enum status s;

    if (inv->length < length)
        return E_TRUNCATED_MESSAGE;
    if ((s = extra_cnode(inv, 0, &src_root)) || (s = get_slot(inv, src_root, 2, &a->src)))
        return s;
    return E_OK;
}

static enum status decode_copy(struct invocation *inv, struct cnode_args *a, bool mint)
{
    enum status s;

    if ((s = decode_source(inv, a, mint ? 6u : 5u)))
        return s;
    if (!cap_is_null(&a->dest->cap))
        return E_DELETE_FIRST;
    if ((s = derive_copy(inv, a->src, inv_mr(inv, 4), mint, mint ? inv_mr(inv, 5) : 0, &a->to_dest)))
        return s;
    invoke_copy(a);
    return E_OK;
}

static enum status decode_move(struct invocation *inv, struct cnode_args *a, bool mutate)
{
    enum status s;

    if ((s = decode_source(inv, a, mutate ? 5u : 4u)))
        return s;
    if (cap_is_null(&a->src->cap))
        return inv_error(inv, E_FAILED_LOOKUP, LOOKUP_MISSING_CAPABILITY, 2);
    if (!cap_is_null(&a->dest->cap))
        return E_DELETE_FIRST;
    if (a->src == a->dest)
        return E_ILLEGAL_OPERATION;
    a->to_dest = a->src->cap;
    if (mutate && (s = apply_badge(inv, &a->to_dest, inv_mr(inv, 4))))
        return s;
    invoke_move(a);
    return E_OK;
}

static enum status decode_rotate(struct invocation *inv, struct cnode_args *a)
{
    const struct cap *pivot_root, *src_root;
    enum status s;

    if (inv->length < 8)
        return E_TRUNCATED_MESSAGE;
    if ((s = extra_cnode(inv, 0, &pivot_root)) || (s = extra_cnode(inv, 1, &src_root)) ||
        (s = get_slot(inv, pivot_root, 2, &a->pivot)) || (s = get_slot(inv, src_root, 5, &a->src)))
        return s;
    if (a->pivot == a->src || a->pivot == a->dest)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (cap_is_null(&a->src->cap))
        return inv_error(inv, E_FAILED_LOOKUP, LOOKUP_MISSING_CAPABILITY, 5);
    if (cap_is_null(&a->pivot->cap))
        return inv_error(inv, E_FAILED_LOOKUP, LOOKUP_MISSING_CAPABILITY, 2);
    if (a->src != a->dest && !cap_is_null(&a->dest->cap))
        return E_DELETE_FIRST;
    /* The two caps as they will be, badged as by Mutate: a zero badge keeps a cap as it is. */
    a->to_dest = a->pivot->cap;
    a->to_pivot = a->src->cap;
    if ((s = apply_badge(inv, &a->to_dest, inv_mr(inv, 7))) ||
        (s = apply_badge(inv, &a->to_pivot, inv_mr(inv, 4))))
        return s;
    invoke_rotate(a);
    return E_OK;
}

/* Delete and Revoke: nothing to check past the lookup; the deletion cannot fail (delete.h). */
static enum status decode_delete(struct cte *dest, bool revoke)
{
    if ((revoke ? cte_revoke(dest) : cte_delete(dest)) == PROGRESS_PREEMPTED)
        return STATUS_PREEMPTED;
    return E_OK;
}

static enum status decode_save_caller(struct invocation *inv, struct cnode_args *a)
{
    a->src = &inv->thread->slots[TCB_SLOT_CALLER];
    if (!cap_is_null(&a->dest->cap))
        return E_DELETE_FIRST;
    invoke_save_caller(a);
    return E_OK;
}

enum status decode_cnode_invocation(struct invocation *inv)
{
    struct cnode_args a = { .dest = NULL };
    enum status s;

    if (inv->label < CNODE_REVOKE || inv->label > CNODE_SAVE_CALLER)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (inv->length < 2)
        return E_TRUNCATED_MESSAGE;
    if ((s = get_slot(inv, &inv->cap, 0, &a.dest)))
        return s;

    switch (inv->label) {
    case CNODE_REVOKE:
        return decode_delete(a.dest, true);
    case CNODE_DELETE:
        return decode_delete(a.dest, false);
    case CNODE_COPY:
        return decode_copy(inv, &a, false);
    case CNODE_MINT:
        return decode_copy(inv, &a, true);
    case CNODE_MOVE:
        return decode_move(inv, &a, false);
    case CNODE_MUTATE:
        return decode_move(inv, &a, true);
    case CNODE_ROTATE:
        return decode_rotate(inv, &a);
    case CNODE_SAVE_CALLER:
        return decode_save_caller(inv, &a);
    default:
        return E_ILLEGAL_OPERATION;
    }
}
