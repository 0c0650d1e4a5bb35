/*
 * The kernel's own address space: the direct map of physical memory and the
 * kernel image window (boot.S builds both for 0..4 GiB), the identity map the
 * boot needed, and the PML4 the AP trampoline uses.
 */
#include <arch/cpu.h>
#include <arch/pte.h>
#include <arch/x86.h>

#define GIB (1ul << 30)

/* The trampoline's PML4: the kernel half plus the identity map the AP switch needs. */
static uint64_t trampoline_pml4[PT_ENTRIES] __attribute__((aligned(4096)));

word_t memory_trampoline_cr3(void)
{
    return arch_virt_to_phys(trampoline_pml4);
}

/* Take one zeroed page from the end of a free region below 4 GiB (already mapped). */
static word_t carve_page(struct arch_boot_info *info)
{
    for (unsigned i = 0; i < info->nfree; i++) {
        struct mem_region *r = &info->free[i];
        if (r->end <= 4 * GIB && r->end - r->start >= 4096) {
            r->end -= 4096;
            uint64_t *page = arch_phys_to_virt(r->end);
            for (unsigned j = 0; j < PT_ENTRIES; j++)
                page[j] = 0;
            return r->end;
        }
    }
    arch_panic_dump("no memory below 4 GiB for the direct map's page directories", NULL);
}

/* Map every GiB beyond the first four that holds free RAM (2 MiB pages). */
static void extend_direct_map(struct arch_boot_info *info)
{
    word_t top = 0;
    for (unsigned i = 0; i < info->nfree; i++)
        if (info->free[i].end > top)
            top = info->free[i].end;
    for (word_t gib = 4; gib * GIB < top; gib++) {
        word_t pd_paddr = carve_page(info);
        uint64_t *pd = arch_phys_to_virt(pd_paddr);
        for (unsigned j = 0; j < PT_ENTRIES; j++)
            pd[j] = (gib * GIB + ((word_t)j << LARGE_PAGE_BITS)) | PTE_PRESENT | PTE_WRITE |
                    PTE_LARGE | PTE_GLOBAL;
        x86_boot_pdpt_direct[gib] = pd_paddr | PTE_PRESENT | PTE_WRITE;
    }
}

/*
 * The identity map goes before anything else runs: the kernel must never
 * reach physical memory through low addresses, which belong to user space.
 * The caller has loaded a GDT at a kernel address already.  The page
 * directories become global mappings once only the kernel half reaches them;
 * cpu_init_core() then turns CR4.PGE on, which flushes the whole TLB.
 */
void memory_drop_identity(void)
{
    for (unsigned i = 0; i < PT_ENTRIES; i++)
        trampoline_pml4[i] = x86_boot_pml4[i];
    x86_boot_pml4[0] = 0;
    for (unsigned d = 0; d < 4; d++)
        for (unsigned i = 0; i < PT_ENTRIES; i++)
            x86_boot_pd[d][i] |= PTE_GLOBAL;
    write_cr3(read_cr3());
}

void memory_init(struct arch_boot_info *info)
{
    extend_direct_map(info);
    /* The trampoline needs the new kernel-half entries as well. */
    for (unsigned i = PT_ENTRIES / 2; i < PT_ENTRIES; i++)
        trampoline_pml4[i] = x86_boot_pml4[i];
}

/* Make the 2 MiB of direct map around paddr (< 4 GiB) uncached: APIC registers. */
void memory_map_uncached(word_t paddr)
{
    word_t gib = paddr / GIB, idx = (paddr % GIB) >> LARGE_PAGE_BITS;
    x86_boot_pd[gib][idx] |= PTE_PCD | PTE_PWT;
    invlpg((word_t)arch_phys_to_virt(paddr & ~((1ul << LARGE_PAGE_BITS) - 1)));
}
