/*
 * User page tables in the ARMv7 short-descriptor format (kernel/arch.h,
 * "Memory and address spaces").
 *
 *   OBJ_VSPACE      a 16 KiB L1 table, 4096 entries of 1 MiB; with TTBCR.N = 1
 *                   only the lower 2048 (user space, below USER_TOP) are used
 *   OBJ_PAGE_TABLE  a 1 KiB L2 table, 256 entries of 4 KiB: level 1
 *   OBJ_FRAME       a 4 KiB small page, mapped in an L2 table
 *   OBJ_LARGE_FRAME a 1 MiB section, mapped straight in the L1 table
 *
 * User mappings are not global (nG): their TLB entries carry the ASID.
 * Memory types: RAM is normal write-back shareable memory unless the
 * mapping asks for VM_UNCACHED (normal non-cacheable); anything outside RAM
 * is device memory and never executable.
 *
 * Coherence of edits: the A9's walker reads the tables coherently with the
 * L1 data caches (pagetable.h, TTBR_ATTRS), so a DSB makes an edit visible
 * to it.  A new entry replaces a fault entry, which the TLB never holds, so
 * it needs no flush; a removed entry is flushed from every core at once by
 * the broadcast TLB operations (mmu.c).  Mapping executable RAM cleans the
 * frame's data lines and invalidates the instruction caches, because the
 * I-cache does not snoop the data side: the frame may hold code just
 * written through another mapping (the root task loading a program).
 */
#include <arch/imx6.h>
#include <arch/pagetable.h>
#include <abi/objects.h>

static inline uint32_t *l1_entry(void *root, word_t vaddr)
{
    return (uint32_t *)root + (vaddr >> 20);
}

static inline uint32_t *l2_table(uint32_t l1e)
{
    return arch_phys_to_virt(l1e & L1_TABLE_ADDR);
}

static inline uint32_t *l2_entry(uint32_t l1e, word_t vaddr)
{
    return l2_table(l1e) + ((vaddr >> 12) & (L2_ENTRIES - 1));
}

static inline bool is_ram(word_t paddr)
{
    return paddr >= RAM_PBASE && paddr - RAM_PBASE < RAM_SIZE;
}

static inline void table_written(void)
{
    __asm__ volatile("dsb ishst" ::: "memory");
}

/* Drop vaddr's translation, of any ASID, from every core's TLB (TLBIMVAAIS). */
static void flush_vaddr_all_asids(word_t vaddr)
{
    __asm__ volatile("dsb ishst\n"
                     "mcr p15, 0, %0, c8, c3, 3\n"
                     "mcr p15, 0, %1, c7, c1, 6\n"     /* BPIALLIS */
                     "dsb ish\n isb"
                     : : "r"(vaddr & ~(word_t)0xFFF), "r"(0) : "memory");
}

unsigned arch_object_bits(unsigned object_type)
{
    switch (object_type) {
    case OBJ_VSPACE:      return 14;
    case OBJ_PAGE_TABLE:  return L2_TABLE_BITS;
    case OBJ_FRAME:       return PAGE_BITS;
    case OBJ_LARGE_FRAME: return LARGE_PAGE_BITS;
    default:              return 0;
    }
}

unsigned arch_pt_missing_level(void *root, word_t vaddr, bool large)
{
    if (large)
        return 0;
    return (*l1_entry(root, vaddr) & L1_TYPE_MASK) == L1_FAULT ? 1 : 0;
}

void arch_pt_install(void *root, word_t vaddr, unsigned level, word_t table_paddr)
{
    (void)level;    /* only level 1 exists */
    *l1_entry(root, vaddr) = (table_paddr & L1_TABLE_ADDR) | L1_TABLE;
    table_written();
}

word_t arch_pt_lookup(void *root, word_t vaddr, unsigned level)
{
    uint32_t e = *l1_entry(root, vaddr);
    if (level != 1 || (e & L1_TYPE_MASK) != L1_TABLE)
        return 0;
    return e & L1_TABLE_ADDR;
}

/*
 * The A9 may cache the L1 entry itself (its walk cache), so a removed table
 * takes a flush of everything, of every ASID: rare enough not to matter.
 */
void arch_pt_remove(void *root, word_t vaddr, unsigned level)
{
    (void)level;
    *l1_entry(root, vaddr) = L1_FAULT;
    arch_tlb_flush_local(~0u, 0, true);
}

bool arch_frame_slot_free(void *root, word_t vaddr, bool large)
{
    uint32_t e = *l1_entry(root, vaddr);
    if (large)
        return (e & L1_TYPE_MASK) == L1_FAULT;
    if ((e & L1_TYPE_MASK) != L1_TABLE)
        return false;       /* no table (callers checked), or a section covers it */
    return (*l2_entry(e, vaddr) & 3) == L2_FAULT;
}

void arch_frame_map(void *root, word_t vaddr, word_t paddr, bool large, unsigned rights, unsigned attrs)
{
    bool writable = (rights & RIGHT_WRITE) != 0;
    bool ram = is_ram(paddr);
    bool exec = ram && !(attrs & VM_EXECUTE_NEVER);
    bool cached = ram && !(attrs & VM_UNCACHED);

    if (exec)
        mmu_sync_icache_range((word_t)arch_phys_to_virt(paddr), large ? LARGE_PAGE_SIZE : PAGE_SIZE);

    if (large) {
        /* AP[1:0] = 11: user read/write; 10: user read-only (AP[2] stays 0: the kernel may write). */
        uint32_t e = (paddr & L1_SECT_ADDR) | L1_SECT_NG | L1_SECT_AP1 | L1_SECT_AP0;
        if (!writable)
            e &= ~(uint32_t)L1_SECT_AP0;
        if (cached)
            e |= L1_SECT_NORMAL;
        else if (ram)
            e |= L1_SECT_UNCACHED;
        else
            e |= L1_SECT_DEVICE;
        if (!exec)
            e |= L1_SECT_XN;
        *l1_entry(root, vaddr) = e;
    } else {
        uint32_t e = (paddr & L2_ADDR) | L2_SMALL | L2_NG | L2_AP1 | (writable ? L2_AP0 : 0);
        if (cached)
            e |= L2_TEX1 | L2_C | L2_B | L2_S;
        else if (ram)
            e |= L2_TEX1 | L2_S;
        else
            e |= L2_B;
        if (!exec)
            e |= L2_XN;
        *l2_entry(*l1_entry(root, vaddr), vaddr) = e;
    }
    table_written();
}

void arch_frame_unmap(void *root, word_t vaddr, bool large)
{
    uint32_t *l1e = l1_entry(root, vaddr);
    if (large) {
        if ((*l1e & L1_TYPE_MASK) != L1_SECTION)
            return;
        *l1e = L1_FAULT;
    } else {
        if ((*l1e & L1_TYPE_MASK) != L1_TABLE)
            return;
        *l2_entry(*l1e, vaddr) = L2_FAULT;
    }
    flush_vaddr_all_asids(vaddr);
}

bool arch_user_translate(void *root, word_t vaddr, word_t *paddr, bool *writable)
{
    if (vaddr >= USER_TOP)
        return false;
    uint32_t e = *l1_entry(root, vaddr);
    switch (e & L1_TYPE_MASK) {
    case L1_SECTION:
        *paddr = (e & L1_SECT_ADDR) | (vaddr & (LARGE_PAGE_SIZE - 1));
        *writable = (e & L1_SECT_AP0) != 0;
        return true;
    case L1_TABLE: {
        uint32_t p = *l2_entry(e, vaddr);
        if ((p & 2) == 0)
            return false;
        *paddr = (p & L2_ADDR) | (vaddr & (PAGE_SIZE - 1));
        *writable = (p & L2_AP0) != 0;
        return true;
    }
    default:
        return false;
    }
}

/*
 * Nothing to share: the kernel's mappings live in TTBR1's table, and the
 * new object is already zero (every user entry a fault).
 */
void arch_vspace_init_root(void *root)
{
    (void)root;
}
