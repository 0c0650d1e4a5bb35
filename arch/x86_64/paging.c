/*
 * User address spaces: 4-level tables, 4 KiB frames and 2 MiB large frames.
 * Levels count from the root: 0 PML4 (OBJ_VSPACE), 1 PDPT, 2 PD, 3 PT (each
 * an OBJ_PAGE_TABLE).  A 2 MiB frame is a PD entry, a 4 KiB frame a PT entry.
 * Table entries carry P|W|U and let the leaf decide the rights, as the
 * hardware combines them all.  The kernel half (PML4 entries 256..511) is
 * shared by every address space and holds only global mappings.
 */
#include <abi/objects.h>
#include <arch/cpu.h>
#include <arch/pte.h>
#include <arch/x86.h>

#define LEVELS          4
#define LEVEL_PD        2
#define LEVEL_PT        3
#define TABLE_ENTRY     (PTE_PRESENT | PTE_WRITE | PTE_USER)
#define LARGE_MASK      ((1ul << LARGE_PAGE_BITS) - 1)

unsigned arch_object_bits(unsigned object_type)
{
    switch (object_type) {
    case OBJ_VSPACE:
    case OBJ_PAGE_TABLE:
    case OBJ_FRAME:
        return PAGE_BITS;
    case OBJ_LARGE_FRAME:
        return LARGE_PAGE_BITS;
    default:
        return 0;
    }
}

static unsigned index_at(word_t vaddr, unsigned level)
{
    return (vaddr >> (39 - 9 * level)) & (PT_ENTRIES - 1);
}

static uint64_t *table_of(uint64_t entry)
{
    return arch_phys_to_virt(entry & PTE_ADDR_MASK);
}

static unsigned leaf_level(bool large)
{
    return large ? LEVEL_PD : LEVEL_PT;
}

/*
 * The table at `level` on the way to vaddr, or NULL when a table above it is
 * missing or a large page ends the walk first (*blocked says which).
 */
static uint64_t *walk(void *root, word_t vaddr, unsigned level, bool *blocked)
{
    uint64_t *t = root;
    *blocked = false;
    for (unsigned l = 0; l < level; l++) {
        uint64_t e = t[index_at(vaddr, l)];
        if (!(e & PTE_PRESENT))
            return NULL;
        if (l > 0 && (e & PTE_LARGE)) {
            *blocked = true;
            return NULL;
        }
        t = table_of(e);
    }
    return t;
}

unsigned arch_pt_missing_level(void *root, word_t vaddr, bool large)
{
    uint64_t *t = root;
    for (unsigned l = 0; l < leaf_level(large); l++) {
        uint64_t e = t[index_at(vaddr, l)];
        if (!(e & PTE_PRESENT))
            return l + 1;
        if (l > 0 && (e & PTE_LARGE))
            return 0;   /* a large frame is in the way: arch_frame_slot_free() says no */
        t = table_of(e);
    }
    return 0;
}

void arch_pt_install(void *root, word_t vaddr, unsigned level, word_t table_paddr)
{
    bool blocked;
    uint64_t *t = walk(root, vaddr, level - 1, &blocked);
    if (t)
        t[index_at(vaddr, level - 1)] = table_paddr | TABLE_ENTRY;
}

word_t arch_pt_lookup(void *root, word_t vaddr, unsigned level)
{
    bool blocked;
    uint64_t *t = walk(root, vaddr, level - 1, &blocked);
    if (!t)
        return 0;
    uint64_t e = t[index_at(vaddr, level - 1)];
    if (!(e & PTE_PRESENT) || (level > 1 && (e & PTE_LARGE)))
        return 0;
    return e & PTE_ADDR_MASK;
}

void arch_pt_remove(void *root, word_t vaddr, unsigned level)
{
    bool blocked;
    uint64_t *t = walk(root, vaddr, level - 1, &blocked);
    if (!t)
        return;
    t[index_at(vaddr, level - 1)] = 0;
    /* A whole subtree went: drop this core's non-global entries. */
    write_cr3(read_cr3());
}

bool arch_frame_slot_free(void *root, word_t vaddr, bool large)
{
    bool blocked;
    unsigned level = leaf_level(large);
    uint64_t *t = walk(root, vaddr, level, &blocked);
    if (!t)
        return !blocked;
    return !(t[index_at(vaddr, level)] & PTE_PRESENT);
}

void arch_frame_map(void *root, word_t vaddr, word_t paddr, bool large, unsigned rights,
                    unsigned attrs)
{
    bool blocked;
    unsigned level = leaf_level(large);
    uint64_t *t = walk(root, vaddr, level, &blocked);
    if (!t)
        return;
    /* x86 cannot map write-only or no-access: any present mapping is readable. */
    uint64_t pte = paddr | PTE_PRESENT | PTE_USER;
    if (rights & RIGHT_WRITE)
        pte |= PTE_WRITE;
    if (large)
        pte |= PTE_LARGE;
    if (attrs & VM_UNCACHED)
        pte |= PTE_PCD | PTE_PWT;
    if ((attrs & VM_EXECUTE_NEVER) && x86_features.nx)
        pte |= PTE_NX;
    t[index_at(vaddr, level)] = pte;
}

void arch_frame_unmap(void *root, word_t vaddr, bool large)
{
    bool blocked;
    unsigned level = leaf_level(large);
    uint64_t *t = walk(root, vaddr, level, &blocked);
    if (!t)
        return;
    t[index_at(vaddr, level)] = 0;
    /* INVLPG drops a large page's entry too; harmless when another space is loaded. */
    invlpg(vaddr);
}

bool arch_user_translate(void *root, word_t vaddr, word_t *paddr, bool *writable)
{
    if (vaddr >= USER_TOP)
        return false;
    uint64_t *t = root;
    bool w = true;
    for (unsigned l = 0; l < LEVELS; l++) {
        uint64_t e = t[index_at(vaddr, l)];
        if ((e & (PTE_PRESENT | PTE_USER)) != (PTE_PRESENT | PTE_USER))
            return false;
        w = w && (e & PTE_WRITE);
        if (l == LEVEL_PD && (e & PTE_LARGE)) {
            *paddr = (e & PTE_ADDR_MASK & ~LARGE_MASK) | (vaddr & LARGE_MASK);
            *writable = w;
            return true;
        }
        if (l == LEVEL_PT) {
            *paddr = (e & PTE_ADDR_MASK) | (vaddr & ((1ul << PAGE_BITS) - 1));
            *writable = w;
            return true;
        }
        t = table_of(e);
    }
    return false;
}

void arch_vspace_init_root(void *root)
{
    uint64_t *pml4 = root;
    for (unsigned i = PT_ENTRIES / 2; i < PT_ENTRIES; i++)
        pml4[i] = x86_boot_pml4[i];
}

void arch_tlb_flush_local(unsigned asid, word_t vaddr, bool whole_space)
{
    if (asid == ~0u) {
        /* Toggling CR4.PGE flushes everything, global entries and all PCIDs. */
        word_t cr4 = read_cr4();
        if (cr4 & CR4_PGE) {
            write_cr4(cr4 & ~CR4_PGE);
            write_cr4(cr4);
        } else {
            write_cr3(read_cr3());
        }
    } else if (whole_space) {
        write_cr3(read_cr3());
    } else {
        invlpg(vaddr);
    }
}
