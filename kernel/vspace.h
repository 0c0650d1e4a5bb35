/*
 * Address spaces (generic part): ASIDs, which cores have used a space,
 * frame and page-table capabilities.  The port edits the tables
 * (kernel/arch.h).
 *
 * Every VSpace gets an ASID from a kernel table.  The entry records the
 * root table and the set of cores that have loaded it since it was made;
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

#define ASID_COUNT 1024     /* ASID 0 is never used: it means "none" */

struct asid_entry {
    void *root;             /* [w] the VSpace object, or NULL when free */
    word_t gen;             /* [w] bumped on every free */
    coreset_t loaded;       /* cores that have loaded it (atomic OR by each core for itself) */
};

extern struct asid_entry asid_table[ASID_COUNT];

/* Allocate an ASID for a new VSpace; 0 when the table is full.  Caller holds the write side. */
unsigned asid_alloc(void *root);

/* The root of the thread's address space, or NULL (its vspace slot holds no VSpace cap).
 * Either side of the kernel lock: the slot is [w]. */
void *tcb_vspace_root(struct tcb *t, unsigned *asid);

/* Switch this core to the thread's address space (deferred) and note the core in the ASID's set.
 * Caller holds the kernel lock (either side). */
void vspace_switch_to(struct tcb *t);

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
