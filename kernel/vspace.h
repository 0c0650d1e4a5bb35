/*
 * Address spaces (generic part): ASIDs, which cores have used a space,
 * frame and page-table capabilities.  The port edits the tables
 * (kernel/arch.h).
 *
 * Every VSpace gets an ASID from a kernel table.  The entry records the
 * root table and the set of cores that have loaded it since it was made;
 * entry 0 is the kernel-only space (a thread without a VSpace runs on it),
 * never allocated, whose root_paddr is the port's kernel-only table, so
 * loading a space never needs a test for it;
 * unmapping flushes only those cores' TLBs.  A generation number, bumped
 * whenever the entry is freed, lets frame and page-table caps tell that the
 * space they were mapped into has gone (so they never touch a newer space
 * that reuses the ASID).
 *
 * LOCK=fine: the table is changed only under the write side [w]; `loaded`
 * bits are set by each core for itself with atomic OR.
 */
#ifndef KERNEL_VSPACE_H
#define KERNEL_VSPACE_H

#include "types.h"
#include "cap.h"
#include "tcb.h"
#include "core.h"

#define ASID_COUNT 1024     /* ASID 0 is the kernel-only space: never allocated */

struct asid_entry {
    void *root;             /* [w] the VSpace object, or NULL when free */
    word_t root_paddr;      /* [w] its physical address, which the switch loads */
    word_t gen;             /* [w] bumped on every free */
    coreset_t loaded;       /* cores that have loaded it (atomic OR by each core for itself) */
};

extern struct asid_entry asid_table[ASID_COUNT];

/* Boot, before any core records a loaded space: entry 0, the kernel-only space. */
void asid_table_init(void);

/* Allocate an ASID for a new VSpace; 0 when the table is full.  Caller holds the write side. */
unsigned asid_alloc(void *root);

/* The ASID of the thread's address space, or 0 (its vspace slot holds no VSpace cap).
 * Either side of the kernel lock: the slot is [w]. */
static inline unsigned tcb_vspace_asid(const struct tcb *t)
{
    const struct cap *c = &t->slots[TCB_SLOT_VSPACE].cap;

    if (c->type != CAP_VSPACE)
        return 0;
    /* A VSpace cap has its ASID from its making (kernel/debug.c checks it). */
    if (c->asid == 0)
        __builtin_unreachable();
    return c->asid;
}

/*
 * Switch this core, `c`, to the thread's address space, the bookkeeping
 * half: returns false when the space is the one loaded; else notes the
 * core in the ASID's set (not for ASID 0, which no shootdown flushes),
 * records the space as loaded (c->loaded_asid, and c->loaded_vspace_paddr,
 * always asid_table[c->loaded_asid].root_paddr) and returns true: the
 * caller must then have core_load_vspace() load it after the lock
 * release, through the deferred work (the slow path,
 * vspace_switch_deferred()) or itself (the IPC fastpath, which keeps the
 * answer in a register).  Inline: the fastpath
 * switches spaces on every call between two of them, and nothing when the
 * space is the same.  Caller holds the kernel lock (either side).
 *
 * The ASID alone tells whether the space is the loaded one: a VSpace cap's
 * ASID is live while the cap exists, and a core that has loaded an ASID
 * leaves it (REQ_LEAVE_VSPACE) before the ASID is freed and can name
 * another space (the invariant checker, kernel/debug.c, holds both).
 */
static ALWAYS_INLINE bool vspace_switch(struct core *c, struct tcb *t)
{
    unsigned asid = tcb_vspace_asid(t);
    struct asid_entry *e = &asid_table[asid];

    if (c->loaded_asid == asid)
        return false;
    if (asid) {
        word_t *bits = &e->loaded.bits[NCPUS <= WORD_BITS ? 0 : arch_core_id() / WORD_BITS];
        word_t me = BIT(arch_core_id() % WORD_BITS);
        /*
         * Each core adds only itself; the shootdown reads it under the
         * exclusive lock, and only the exclusive holder clears it, so a
         * relaxed look first is exact and spares the locked RMW (a full
         * barrier) on every switch back to a space this core has loaded.
         */
        if (!(__atomic_load_n(bits, __ATOMIC_RELAXED) & me))
            __atomic_fetch_or(bits, me, __ATOMIC_RELAXED);
    }
    c->loaded_asid = asid;
    c->loaded_vspace_paddr = e->root_paddr;
    return true;
}

/* vspace_switch(), the load left to core_run_deferred_work() after the lock release. */
static ALWAYS_INLINE void vspace_switch_deferred(struct core *c, struct tcb *t)
{
    if (vspace_switch(c, t))
        c->deferred.load_vspace = true;
}

/*
 * A frame or page-table cap records where it is mapped (CAPF_MAPPED, asid,
 * asid_gen, mapped_vaddr; a table also its level) so that unmap and delete
 * find the entry.  Only the cap that made a mapping carries it: a cap
 * derived from it (kernel/cnode.c), the copy a TCB slot holds of its IPC
 * buffer, and the cap once unmapped have none.
 */
static inline void cap_note_mapping(struct cap *c, unsigned asid, word_t vaddr)
{
    c->flags |= CAPF_MAPPED;
    c->asid = (uint16_t)asid;
    c->asid_gen = asid_table[asid].gen;
    c->mapped_vaddr = vaddr;
}

static inline void cap_clear_mapping(struct cap *c)
{
    c->flags &= (uint8_t)~CAPF_MAPPED;
    c->asid = 0;
    c->asid_gen = 0;
    c->mapped_vaddr = 0;
    c->level = 0;
}

/* Flush (asid, vaddr) or the whole space on every core that may cache it (waits for remote cores).
 * Caller holds the write side (LOCK=fine) or the big lock. */
void vspace_tlb_shootdown(unsigned asid, word_t vaddr, bool whole);

/* Destroying objects.  Caller holds the write side. */
void vspace_finalise(const struct cap *c);
void frame_finalise(const struct cap *c);
void page_table_finalise(const struct cap *c);

/* Boot: map a frame into the root task's space, making page tables from `alloc`. */
void vspace_boot_map(void *root, word_t vaddr, word_t paddr, unsigned rights,
                     word_t (*alloc_table)(void));

#endif
