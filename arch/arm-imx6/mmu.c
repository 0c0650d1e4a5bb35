/*
 * The kernel's address space, address-space switches, and TLB and cache
 * maintenance (arm-imx6).
 *
 * kernel_l1 is built by boot.S (direct map and device sections) and is
 * TTBR1's table on every core: TTBCR.N = 1 sends every address at or above
 * 2 GiB there, so a VSpace's own L1 table (TTBR0) holds user mappings only
 * and never needs the kernel's entries copied in.  With no thread's space
 * loaded, TTBR0 points at empty_l1, whose entries all fault.
 *
 * ASIDs.  Generic code numbers address spaces 1..ASID_COUNT-1 (kernel/
 * vspace.h); the A9 tags TLB entries with an 8-bit hardware ASID
 * (CONTEXTIDR).  Kernel ASID a runs under hardware ASID arm_hw_asid(a)
 * (machine.h), never 0: hardware ASID 0 stays with the kernel-only space.  Several kernel ASIDs
 * may share a hardware one, so each core remembers which kernel ASID last
 * ran under each hardware ASID (arm_core.asid_owner) and drops the
 * hardware ASID's TLB entries on this core before another space uses it.
 * Flushes for an address space then hit every space sharing its hardware
 * ASID: more than needed, never less.
 *
 * Other cores.  With ACTLR.SMP and FW set, the A9 broadcasts the
 * inner-shareable TLB operations (TLBIALLIS, TLBIASIDIS, TLBIMVAIS,
 * TLBIMVAAIS) and BPIALLIS / ICIALLUIS to every core of the cluster (ARM ARM
 * B3.10.5, "TLB maintenance operations and the memory order model"; Cortex-A9
 * MPCore TRM, ACTLR.FW).  So arch_tlb_flush_local() reaches every core by
 * itself; the generic shootdown IPIs are redundant here but harmless.  A
 * DSB ISH after the operations waits until all cores have completed them.
 */
#include <arch/imx6.h>
#include <arch/pagetable.h>
#include <vspace.h>

/* arm_hw_asid(): a / 256 is a hardware ASID (below 256) for every kernel ASID. */
_Static_assert(ASID_COUNT <= 1u << (2 * ARCH_ASID_BITS), "kernel ASIDs fold into hardware ASIDs");

uint32_t kernel_l1[4096] __attribute__((aligned(16384), section(".bss.pagetables")));
/* TTBR0's table when no user space is loaded; 8 KiB is the TTBR0 table size when N = 1. */
uint32_t empty_l1[2048] __attribute__((aligned(8192), section(".bss.pagetables")));

static inline void write_ttbr0(word_t paddr)
{
    __asm__ volatile("mcr p15, 0, %0, c2, c0, 0\n isb" : : "r"(paddr | TTBR_ATTRS) : "memory");
}

static inline void write_contextidr(unsigned asid)
{
    __asm__ volatile("dsb\n mcr p15, 0, %0, c13, c0, 1\n isb" : : "r"(asid) : "memory");
}

static inline void tlbi_asid_local(unsigned hw)
{
    __asm__ volatile("mcr p15, 0, %0, c8, c7, 2\n dsb nsh\n isb" : : "r"(hw) : "memory");
}

/*
 * arch_vspace_load() (machine.h) when the kernel-only space is loaded
 * (ASID 0) or the hardware ASID last ran another space: the same sequence,
 * fully synchronized, with the hardware ASID's TLB entries on this core
 * dropped while the empty table is loaded, so no walk can refill them from
 * the previous owner's table.  The last ISB matters here: after a switch
 * to the kernel-only space the caller may free the old table.
 */
void arm_vspace_load_slow(word_t vspace_root_paddr, unsigned asid)
{
    write_ttbr0(arch_virt_to_phys(empty_l1));
    if (asid == 0) {
        write_contextidr(0);
        return;
    }
    unsigned hw = arm_hw_asid(asid);
    write_contextidr(hw);
    uint32_t *owner = arm_stack_top_words()->asid_owner;
    if (owner[hw] != asid) {
        tlbi_asid_local(hw);
        owner[hw] = asid;
    }
    write_ttbr0(vspace_root_paddr);
}

/* Broadcast to all cores (see the header comment). */
void arch_tlb_flush_local(unsigned asid, word_t vaddr, bool whole_space)
{
    __asm__ volatile("dsb ishst" ::: "memory");     /* table edits before the flush */
    if (asid == ~0u)
        __asm__ volatile("mcr p15, 0, %0, c8, c3, 0" : : "r"(0) : "memory");    /* TLBIALLIS */
    else if (whole_space)
        __asm__ volatile("mcr p15, 0, %0, c8, c3, 2" : : "r"(arm_hw_asid(asid)) : "memory");   /* TLBIASIDIS */
    else
        __asm__ volatile("mcr p15, 0, %0, c8, c3, 1"            /* TLBIMVAIS */
                         : : "r"((vaddr & ~(word_t)0xFFF) | arm_hw_asid(asid)) : "memory");
    __asm__ volatile("mcr p15, 0, %0, c7, c1, 6\n"              /* BPIALLIS */
                     "dsb ish\n isb" : : "r"(0) : "memory");
}

/* Clean data cache lines to the point of unification (where the I-cache fetches from). */
void mmu_clean_dcache_range(word_t vaddr, word_t size)
{
    for (word_t a = vaddr & ~(word_t)(CACHE_LINE_SIZE - 1); a < vaddr + size; a += CACHE_LINE_SIZE)
        __asm__ volatile("mcr p15, 0, %0, c7, c11, 1" : : "r"(a) : "memory");  /* DCCMVAU */
    __asm__ volatile("dsb ish" ::: "memory");
}

/*
 * Make code written through the data side visible to instruction fetches
 * on every core: the A9's instruction caches do not snoop the data caches.
 */
void mmu_sync_icache_range(word_t vaddr, word_t size)
{
    mmu_clean_dcache_range(vaddr, size);
    __asm__ volatile("mcr p15, 0, %0, c7, c1, 0\n"     /* ICIALLUIS */
                     "mcr p15, 0, %0, c7, c1, 6\n"     /* BPIALLIS */
                     "dsb ish\n isb" : : "r"(0) : "memory");
}

bool lock_rtm_probe(void)
{
    return false;
}
