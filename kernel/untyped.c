/*
 * Untyped memory and object creation.
 *
 * Retype (MR0 type, MR1 size argument, MR2 node index, MR3 node depth,
 * MR4 node offset, MR5 count; extra cap 0 the CSpace root the node is
 * looked up in; node depth 0 means that root itself) carves `count`
 * objects from the untyped's watermark and puts caps to them, children of
 * the untyped cap, into consecutive empty slots.
 *
 * Memory is zeroed before objects are made from it.  An untyped cap keeps
 * two marks (bytes from its start): free_index, below which memory is in
 * use, and clear_index, below which memory is
 * known to be zero once free.  Zeroing advances clear_index in chunks with
 * a preemption point between chunks, so a preempted Retype makes progress
 * each time it is restarted.  Revoking all children resets both marks.
 */
#include "untyped.h"
#include "cdt.h"
#include "cspace.h"
#include "delete.h"
#include "endpoint.h"
#include "invocation.h"
#include "notification.h"
#include "preemption.h"
#include "printf.h"
#include "tcb.h"
#include "vspace.h"
#include <arch.h>

#define RETYPE_MAX_COUNT 256
#define CLEAR_CHUNK_BITS 16     /* zero 64 KiB between preemption points */
#define CNODE_MAX_RADIX  (WORD_BITS - CTE_BITS - 4)

unsigned object_size_bits(unsigned type, unsigned user_bits)
{
    switch (type) {
    case OBJ_UNTYPED:
        return user_bits >= UNTYPED_MIN_BITS && user_bits <= UNTYPED_MAX_BITS ? user_bits : 0;
    case OBJ_TCB:
        return TCB_BITS;
    case OBJ_ENDPOINT:
        return ENDPOINT_BITS;
    case OBJ_NOTIFICATION:
        return NOTIFICATION_BITS;
    case OBJ_CNODE:
        return user_bits >= 1 && user_bits <= 20 ? user_bits + CTE_BITS : 0;
    case OBJ_FRAME:
        return PAGE_BITS;
    case OBJ_LARGE_FRAME:
        return LARGE_PAGE_BITS;
    case OBJ_PAGE_TABLE:
    case OBJ_VSPACE:
        return arch_object_bits(type);
    default:
        return 0;
    }
}

struct cap object_create(unsigned type, word_t paddr, unsigned user_bits, bool device)
{
    struct cap c = cap_null();
    void *obj = arch_phys_to_virt(paddr);

    switch (type) {
    case OBJ_UNTYPED:
        c.type = CAP_UNTYPED;
        c.paddr = paddr;
        c.size_bits = (uint8_t)user_bits;
        c.flags = device ? CAPF_DEVICE : 0;
        c.free_index = 0;
        /* Fresh memory from a parent's retype was zeroed by that retype. */
        c.clear_index = device ? 0 : BIT(user_bits);
        break;
    case OBJ_TCB:
        tcb_init(obj);
        c.type = CAP_TCB;
        c.obj = obj;
        break;
    case OBJ_ENDPOINT:
        object_lock_init(&((struct endpoint *)obj)->lock);
        c.type = CAP_ENDPOINT;
        c.obj = obj;
        c.rights = RIGHTS_ALL;
        break;
    case OBJ_NOTIFICATION:
        object_lock_init(&((struct notification *)obj)->lock);
        c.type = CAP_NOTIFICATION;
        c.obj = obj;
        c.rights = RIGHT_READ | RIGHT_WRITE;
        break;
    case OBJ_CNODE:
        c.type = CAP_CNODE;
        c.obj = obj;
        c.size_bits = (uint8_t)user_bits;
        c.rights = RIGHTS_ALL;
        break;
    case OBJ_FRAME:
    case OBJ_LARGE_FRAME:
        c.type = CAP_FRAME;
        c.paddr = paddr;
        c.size_bits = type == OBJ_FRAME ? PAGE_BITS : LARGE_PAGE_BITS;
        c.flags = device ? CAPF_DEVICE : 0;
        c.rights = RIGHT_READ | RIGHT_WRITE;
        break;
    case OBJ_PAGE_TABLE:
        c.type = CAP_PAGE_TABLE;
        c.obj = obj;
        break;
    case OBJ_VSPACE:
        arch_vspace_init_root(obj);
        c.type = CAP_VSPACE;
        c.obj = obj;
        c.asid = (uint16_t)asid_alloc(obj);
        break;
    default:
        panic("object_create: type %u", type);
    }
    return c;
}

/* The TCB's master reply cap is made with it, in its own slot. */
void tcb_install_master_reply(struct tcb *t)
{
    struct cap r = cap_null();
    r.type = CAP_REPLY;
    r.obj = t;
    r.flags = CAPF_MASTER;
    r.rights = RIGHTS_ALL;
    /*
     * Outside the global CDT list: the master and the one reply cap made
     * from it form a private list, so IPC (the read side under LOCK=fine)
     * links and unlinks reply caps touching only the two TCBs it has locked.
     */
    struct cte *m = &t->slots[TCB_SLOT_REPLY];
    m->cap = r;
    m->cdt_prev = m->cdt_next = NULL;
    m->cdt_depth = 0;
}

static unsigned asids_free(void)
{
    unsigned n = 0;
    for (unsigned i = 1; i < ASID_COUNT; i++)
        n += asid_table[i].root == NULL;
    return n;
}

/* A Retype, once decoded: `count` objects of `type` at [start, end) of the untyped, caps into dest[]. */
struct retype_args {
    struct cte *untyped;
    word_t type;
    word_t user_bits;
    word_t count;
    unsigned obj_bits;
    struct cte *dest;
    bool reset;                     /* the untyped has no children: it starts over */
    word_t used;                    /* bytes in use below the objects (0 when reset) */
    word_t start;
    word_t end;
};

/*
 * Zero what is not known to be zero, with preemption points; the progress
 * is kept in the cap, so a restarted Retype continues where it stopped.
 */
static enum progress clear_memory(const struct retype_args *a)
{
    struct cap *ut = &a->untyped->cap;

    if (ut->flags & CAPF_DEVICE) {
        if (a->reset)
            ut->free_index = 0;
        return PROGRESS_DONE;
    }
    if (a->reset && ut->free_index != 0) {
        /* Memory below the old watermark was used: no longer known to be zero. */
        if (ut->clear_index > 0)
            ut->clear_index = 0;
        ut->free_index = 0;
    }
    word_t clear = MAX(ut->clear_index, a->used);
    while (clear < a->end) {
        word_t chunk_end = MIN(a->end, ALIGN_UP(clear + 1, CLEAR_CHUNK_BITS));
        memset(arch_phys_to_virt(ut->paddr + clear), 0, chunk_end - clear);
        clear = chunk_end;
        ut->clear_index = clear;
        if (clear < a->end && preemption_point())
            return PROGRESS_PREEMPTED;
    }
    return PROGRESS_DONE;
}

static enum progress invoke_retype(const struct retype_args *a)
{
    struct cap *ut = &a->untyped->cap;

    if (clear_memory(a) == PROGRESS_PREEMPTED)
        return PROGRESS_PREEMPTED;
    for (word_t i = 0; i < a->count; i++) {
        word_t paddr = ut->paddr + a->start + (i << a->obj_bits);
        struct cap c = object_create((unsigned)a->type, paddr, (unsigned)a->user_bits,
                                     (ut->flags & CAPF_DEVICE) != 0);
        cte_insert_child(a->untyped, &a->dest[i], c);
        if (a->type == OBJ_TCB)
            tcb_install_master_reply(a->dest[i].cap.obj);
    }
    ut->free_index = a->end;
    if (ut->clear_index < a->end)
        ut->clear_index = a->end;
    return PROGRESS_DONE;
}

/* The CNode the new caps go to: extra 0, or the CNode at (node index, node depth) within it. */
static enum status decode_dest_cnode(struct invocation *inv, word_t node_index, word_t node_depth,
                                     const struct cap **node)
{
    const struct cap *root = &inv->extra[0]->cap;

    if (root->type != CAP_CNODE)
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    if (node_depth == 0) {
        *node = root;
        return E_OK;
    }
    struct lookup_result r = cspace_lookup_slot(root, node_index, (unsigned)node_depth);
    if (r.failure)
        return inv_error(inv, E_FAILED_LOOKUP, r.failure, 2);
    if (r.slot->cap.type != CAP_CNODE)
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    *node = &r.slot->cap;
    return E_OK;
}

enum status decode_untyped_invocation(struct invocation *inv)
{
    struct cap *ut = &inv->slot->cap;
    struct retype_args a = { .untyped = inv->slot };
    const struct cap *node;
    enum status s;

    if (inv->label != UNTYPED_RETYPE)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (inv->length < 6 || inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;

    a.type = inv_mr(inv, 0);
    a.user_bits = inv_mr(inv, 1);
    a.count = inv_mr(inv, 5);
    word_t node_index = inv_mr(inv, 2), node_depth = inv_mr(inv, 3), offset = inv_mr(inv, 4);

    if (a.type >= OBJ_TYPE_COUNT)
        return inv_error(inv, E_INVALID_ARGUMENT, 0, 0);
    if (a.user_bits >= WORD_BITS)
        return inv_error(inv, E_RANGE, 0, WORD_BITS - 1);
    a.obj_bits = object_size_bits((unsigned)a.type, (unsigned)a.user_bits);
    if (a.obj_bits == 0)
        return inv_error(inv, E_INVALID_ARGUMENT, 1, 0);
    if (a.count < 1 || a.count > RETYPE_MAX_COUNT)
        return inv_error(inv, E_RANGE, 1, RETYPE_MAX_COUNT);
    if ((ut->flags & CAPF_DEVICE) && a.type != OBJ_FRAME && a.type != OBJ_LARGE_FRAME &&
        a.type != OBJ_UNTYPED)
        return inv_error(inv, E_INVALID_ARGUMENT, 0, 0);
    if ((s = decode_dest_cnode(inv, node_index, node_depth, &node)))
        return s;
    word_t slots = BIT(node->size_bits);
    if (offset >= slots || a.count > slots - offset)
        return inv_error(inv, E_RANGE, 0, slots - 1);
    a.dest = cnode_slots(node) + offset;
    for (word_t i = 0; i < a.count; i++) {
        if (!cap_is_null(&a.dest[i].cap))
            return E_DELETE_FIRST;
    }

    /*
     * Where the objects go.  An untyped with no children starts over; one
     * with children may not have an untyped copy of itself among them (two
     * caps would hand out the same memory).
     */
    a.reset = !cdt_has_children(inv->slot);
    if (!a.reset) {
        for (struct cte *c = cdt_first_child(inv->slot); c && c->cdt_depth > inv->slot->cdt_depth;
             c = c->cdt_next) {
            if (c->cap.type == CAP_UNTYPED && c->cap.paddr == ut->paddr &&
                c->cap.size_bits == ut->size_bits)
                return E_REVOKE_FIRST;
        }
    }
    word_t size = BIT(ut->size_bits);
    a.used = a.reset ? 0 : ut->free_index;
    a.start = ALIGN_UP(ut->paddr + a.used, a.obj_bits) - ut->paddr;
    if (a.obj_bits > ut->size_bits || a.start > size || ((size - a.start) >> a.obj_bits) < a.count)
        return inv_error(inv, E_NOT_ENOUGH_MEMORY, a.start >= size ? 0 : size - a.start, 0);
    if (a.type == OBJ_VSPACE && asids_free() < a.count)
        return inv_error(inv, E_NOT_ENOUGH_MEMORY, 0, 0);
    a.end = a.start + (a.count << a.obj_bits);
    if (invoke_retype(&a) == PROGRESS_PREEMPTED)
        return STATUS_PREEMPTED;
    return E_OK;
}

/*
 * An untyped copy and its parent hand out the same memory, and while the
 * copy exists only the copy retypes (the parent has an untyped copy among
 * its children), so when the copy goes, its marks are the current ones and
 * the parent takes them over, with or without children:
 *   - with children (they become the parent's), the objects made from the
 *     copy lie above the parent's own watermark, and the parent's next
 *     Retype (it has children, so it does not start over) would hand out
 *     memory those objects use;
 *   - without children, the memory the copy's objects used is no longer
 *     zero, and the parent's next Retype starts over trusting its own
 *     zeroed-up-to mark, which still says "never used, all zero": it gave
 *     out frames, CNodes and TCBs with what the copy's objects left in them
 *     (a CNode whose first slot held a freed TCB's saved registers).
 */
void untyped_hand_over_marks(struct cte *slot)
{
    struct cap *c = &slot->cap;
    if (c->type != CAP_UNTYPED)
        return;
    struct cte *parent = slot->cdt_prev;
    while (parent && parent->cdt_depth >= slot->cdt_depth)
        parent = parent->cdt_prev;
    if (!parent || !cap_same_object(&parent->cap, c))
        return;
    parent->cap.free_index = MAX(parent->cap.free_index, c->free_index);
    parent->cap.clear_index = c->clear_index;
}
