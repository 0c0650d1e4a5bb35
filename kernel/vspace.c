/*
 * Address spaces, generic part: ASIDs, loading, TLB shootdown, Frame and
 * PageTable invocations (see vspace.h).
 *
 *   Frame Map        MR0 vaddr, MR1 rights, MR2 attributes; extra 0 the VSpace
 *   Frame Unmap      -
 *   Frame GetAddress -> MR0 physical address
 *   PageTable Map    MR0 vaddr; extra 0 the VSpace
 *   PageTable Unmap  -
 */
#include "vspace.h"
#include "core.h"
#include "invocation.h"
#include "printf.h"
#include <arch.h>

struct asid_entry asid_table[ASID_COUNT];
static unsigned asid_next = 1;

void asid_table_init(void)
{
    asid_table[0].root_paddr = arch_kernel_vspace_paddr();
}

unsigned asid_alloc(void *root)
{
    for (unsigned i = 0; i < ASID_COUNT - 1; i++) {
        unsigned a = asid_next;
        asid_next = asid_next + 1 == ASID_COUNT ? 1 : asid_next + 1;
        if (asid_table[a].root == NULL) {
            asid_table[a].root = root;
            asid_table[a].root_paddr = arch_virt_to_phys(root);
            coreset_clear_all(&asid_table[a].loaded);
            return a;
        }
    }
    return 0;
}

/* Run `kind` on every core that has loaded asid (this core directly). */
static void for_loaded_cores(unsigned asid, enum core_request_kind kind, word_t vaddr, bool whole)
{
    for (unsigned core = 0; core < ncores_online; core++) {
        if (!coreset_has(&asid_table[asid].loaded, core))
            continue;
        core_request(core, kind, NULL, asid, vaddr, whole);
    }
}

void vspace_tlb_shootdown(unsigned asid, word_t vaddr, bool whole)
{
    for_loaded_cores(asid, REQ_TLB_FLUSH, vaddr, whole);
}

/* The VSpace of a cap mapped at (asid, gen), if it still exists. */
static void *mapped_root(const struct cap *c)
{
    if (!(c->flags & CAPF_MAPPED) || c->asid == 0 || c->asid >= ASID_COUNT)
        return NULL;
    if (asid_table[c->asid].root == NULL || asid_table[c->asid].gen != c->asid_gen)
        return NULL;
    return asid_table[c->asid].root;
}

static void frame_unmap(struct cap *c)
{
    void *root = mapped_root(c);
    bool large = c->size_bits != PAGE_BITS;
    word_t paddr;
    bool writable;

    /* Only if the entry still maps this frame (a table may have been removed and replaced). */
    if (root && arch_user_translate(root, c->mapped_vaddr, &paddr, &writable) &&
        (paddr & ~MASK(c->size_bits)) == c->paddr) {
        arch_frame_unmap(root, c->mapped_vaddr, large);
        vspace_tlb_shootdown(c->asid, c->mapped_vaddr, false);
    }
    cap_clear_mapping(c);
}

static void page_table_unmap(struct cap *c)
{
    void *root = mapped_root(c);

    if (root && arch_pt_lookup(root, c->mapped_vaddr, c->level) == arch_virt_to_phys(c->obj)) {
        arch_pt_remove(root, c->mapped_vaddr, c->level);
        vspace_tlb_shootdown(c->asid, 0, true);
    }
    /* A table that is mapped again must not bring its old entries along. */
    memset(c->obj, 0, BIT(arch_object_bits(OBJ_PAGE_TABLE)));
    cap_clear_mapping(c);
}

void frame_finalise(const struct cap *c)
{
    struct cap copy = *c;
    if (copy.flags & CAPF_MAPPED)
        frame_unmap(&copy);
}

void page_table_finalise(const struct cap *c)
{
    struct cap copy = *c;
    if (copy.flags & CAPF_MAPPED)
        page_table_unmap(&copy);
}

void vspace_finalise(const struct cap *c)
{
    unsigned asid = c->asid;

    if (asid == 0 || asid >= ASID_COUNT || asid_table[asid].root != c->obj)
        return;
    /* Every core that may run on it or cache it leaves it before the memory can be reused. */
    for_loaded_cores(asid, REQ_LEAVE_VSPACE, 0, true);
    asid_table[asid].root = NULL;
    asid_table[asid].root_paddr = 0;
    asid_table[asid].gen++;
    coreset_clear_all(&asid_table[asid].loaded);
}

/*
 * ---- Invocations.  The decode_* of each invocation makes every check
 * before any change, then makes the change, which cannot fail (through
 * its invoke_* where it has arguments to carry).  decode_map(), the part
 * Frame Map and PageTable Map share, only checks.
 */

/* A Frame or PageTable Map, once decoded. */
struct map_args {
    struct cap *cap;                /* the frame or page table (in the invoked slot) */
    void *root;                     /* the VSpace */
    unsigned asid;
    word_t vaddr;
    word_t rights;                  /* frames */
    word_t attrs;                   /* frames */
    unsigned level;                 /* page tables: the level it fills */
};

static enum status get_vspace(struct invocation *inv, struct map_args *a)
{
    if (inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    const struct cap *v = &inv->extra[0]->cap;
    if (v->type != CAP_VSPACE || v->asid == 0 || asid_table[v->asid].root != v->obj)
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    a->root = v->obj;
    a->asid = v->asid;
    return E_OK;
}

static void invoke_frame_map(const struct map_args *a)
{
    bool large = a->cap->size_bits != PAGE_BITS;

    arch_frame_map(a->root, a->vaddr, a->cap->paddr, large, (unsigned)a->rights, (unsigned)a->attrs);
    cap_note_mapping(a->cap, a->asid, a->vaddr);
}

/* What Frame Map and PageTable Map share: `length` MRs, MR0 vaddr, extra 0 the VSpace, not mapped yet. */
static enum status decode_map(struct invocation *inv, struct map_args *a, unsigned length)
{
    enum status s;

    if (inv->length < length)
        return E_TRUNCATED_MESSAGE;
    if ((s = get_vspace(inv, a)))
        return s;
    a->vaddr = inv_mr(inv, 0);
    if (a->cap->flags & CAPF_MAPPED)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    return E_OK;
}

/* Frame Map: MR0 vaddr, MR1 rights, MR2 attributes; extra 0 the VSpace. */
static enum status decode_frame_map(struct invocation *inv, struct map_args *a)
{
    struct cap *c = a->cap;
    bool large = c->size_bits != PAGE_BITS;
    enum status s;

    if ((s = decode_map(inv, a, 3)))
        return s;
    a->rights = inv_mr(inv, 1) & c->rights;
    a->attrs = inv_mr(inv, 2);
    if (!IS_ALIGNED(a->vaddr, c->size_bits))
        return inv_error(inv, E_ALIGNMENT, 0, 0);
    if (a->vaddr >= USER_TOP || USER_TOP - a->vaddr < BIT(c->size_bits))
        return inv_error(inv, E_INVALID_ARGUMENT, 0, 0);
    if (!(a->rights & RIGHT_READ))
        return inv_error(inv, E_INVALID_ARGUMENT, 1, 0);
    if (a->attrs & ~(word_t)(VM_UNCACHED | VM_EXECUTE_NEVER))
        return inv_error(inv, E_INVALID_ARGUMENT, 2, 0);
    unsigned missing = arch_pt_missing_level(a->root, a->vaddr, large);
    if (missing)
        return inv_error(inv, E_FAILED_LOOKUP, missing, 0);
    if (!arch_frame_slot_free(a->root, a->vaddr, large))
        return E_DELETE_FIRST;
    if (c->flags & CAPF_DEVICE)
        a->attrs |= VM_UNCACHED;
    invoke_frame_map(a);
    return E_OK;
}

enum status decode_frame_invocation(struct invocation *inv)
{
    struct map_args a = { .cap = &inv->slot->cap };

    switch (inv->label) {
    case FRAME_MAP:
        return decode_frame_map(inv, &a);
    case FRAME_UNMAP:
        if (a.cap->flags & CAPF_MAPPED)
            frame_unmap(a.cap);
        return E_OK;
    case FRAME_GET_ADDRESS:
        inv_result(inv, 0, a.cap->paddr);
        return E_OK;
    default:
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    }
}

static void invoke_page_table_map(const struct map_args *a)
{
    arch_pt_install(a->root, a->vaddr, a->level, arch_virt_to_phys(a->cap->obj));
    cap_note_mapping(a->cap, a->asid, a->vaddr);
    a->cap->level = (uint8_t)a->level;
}

/* PageTable Map: MR0 vaddr; extra 0 the VSpace. */
static enum status decode_page_table_map(struct invocation *inv, struct map_args *a)
{
    enum status s;

    if ((s = decode_map(inv, a, 1)))
        return s;
    if (a->vaddr >= USER_TOP)
        return inv_error(inv, E_INVALID_ARGUMENT, 0, 0);
    a->level = arch_pt_missing_level(a->root, a->vaddr, false);
    if (a->level == 0)
        return E_DELETE_FIRST;
    invoke_page_table_map(a);
    return E_OK;
}

enum status decode_page_table_invocation(struct invocation *inv)
{
    struct map_args a = { .cap = &inv->slot->cap };

    switch (inv->label) {
    case PAGE_TABLE_MAP:
        return decode_page_table_map(inv, &a);
    case PAGE_TABLE_UNMAP:
        if (a.cap->flags & CAPF_MAPPED)
            page_table_unmap(a.cap);
        return E_OK;
    default:
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    }
}

/* A VSpace has no invocations: its ASID comes with it from Retype and goes with its last cap. */
enum status decode_vspace_invocation(struct invocation *inv)
{
    return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
}

void vspace_boot_map(void *root, word_t vaddr, word_t paddr, unsigned rights,
                     word_t (*alloc_table)(void))
{
    unsigned level;
    while ((level = arch_pt_missing_level(root, vaddr, false)) != 0)
        arch_pt_install(root, vaddr, level, alloc_table());
    arch_frame_map(root, vaddr, paddr, false, rights, 0);
}
