/*
 * The multiboot (v1) information: the command line, the memory map and the
 * boot modules.  Everything needed later is copied out here, because the
 * information itself lies in memory that becomes untyped.
 */
#include <arch/x86.h>

#define MULTIBOOT_BOOTLOADER_MAGIC 0x2BADB002
#define MBI_FLAG_CMDLINE    (1u << 2)
#define MBI_FLAG_MODS       (1u << 3)
#define MBI_FLAG_MMAP       (1u << 6)
#define MMAP_AVAILABLE      1
#define LOW_MEMORY_END      0x100000ul      /* BIOS data, EBDA, ROMs, the AP trampoline */
#define IOAPIC_DEFAULT      0xfec00000ul    /* device untyped stops below the APICs */

struct __attribute__((packed)) mb_info {
    uint32_t flags;
    uint32_t mem_lower, mem_upper;
    uint32_t boot_device;
    uint32_t cmdline;
    uint32_t mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
};

struct __attribute__((packed)) mb_mmap_entry {
    uint32_t size;          /* of the rest of the entry: the next one is at +size+4 */
    uint64_t base, length;
    uint32_t type;
};

struct __attribute__((packed)) mb_module {
    uint32_t start, end, string, reserved;
};

static char cmdline[512];

/* Remove [start, end) from a region list, splitting a region when needed. */
static void regions_subtract(struct mem_region *r, unsigned *n, word_t start, word_t end)
{
    for (unsigned i = 0; i < *n; i++) {
        if (end <= r[i].start || start >= r[i].end)
            continue;
        if (start > r[i].start && end < r[i].end) {
            if (*n < BOOT_MAX_REGIONS) {
                r[*n] = (struct mem_region){ end, r[i].end };
                (*n)++;
            }
            r[i].end = start;
        } else if (start <= r[i].start && end >= r[i].end) {
            r[i] = r[--(*n)];
            i--;
        } else if (start <= r[i].start) {
            r[i].start = end;
        } else {
            r[i].end = start;
        }
    }
}

static void regions_add(struct mem_region *r, unsigned *n, word_t start, word_t end)
{
    start = (start + 0xfff) & ~0xffful;
    end &= ~0xffful;
    if (start >= end)
        return;
    if (*n == BOOT_MAX_REGIONS) {
        x86_puts("x86_64: too many memory regions, ignoring one\n");
        return;
    }
    r[(*n)++] = (struct mem_region){ start, end };
}

void multiboot_parse(uint32_t magic, uint32_t mbi_paddr, struct arch_boot_info *info)
{
    if (magic != MULTIBOOT_BOOTLOADER_MAGIC)
        arch_panic_dump("not booted by a multiboot loader", NULL);
    const struct mb_info *mbi = arch_phys_to_virt(mbi_paddr);

    if (mbi->flags & MBI_FLAG_CMDLINE) {
        const char *s = arch_phys_to_virt(mbi->cmdline);
        unsigned i = 0;
        for (; s[i] && i < sizeof(cmdline) - 1; i++)
            cmdline[i] = s[i];
        cmdline[i] = 0;
    }
    info->cmdline = cmdline;

    if (!(mbi->flags & MBI_FLAG_MMAP))
        arch_panic_dump("the boot loader gave no memory map", NULL);

    word_t low_ram_end = 0;
    info->nfree = 0;
    for (word_t p = mbi->mmap_addr; p < (word_t)mbi->mmap_addr + mbi->mmap_length;) {
        const struct mb_mmap_entry *e = arch_phys_to_virt(p);
        if (e->type == MMAP_AVAILABLE) {
            word_t end = e->base + e->length;
            if (end > DIRECT_MAP_SIZE) {
                x86_puts("x86_64: RAM above 512 GiB is not used\n");
                end = DIRECT_MAP_SIZE;
            }
            if (e->base < end)
                regions_add(info->free, &info->nfree, e->base, end);
            if (end <= 0x100000000ul && end > low_ram_end)
                low_ram_end = end;
        }
        p += e->size + 4;
    }

    /* Not free: the low 1 MiB, the kernel image (which holds the root task), modules. */
    regions_subtract(info->free, &info->nfree, 0, LOW_MEMORY_END);
    regions_subtract(info->free, &info->nfree, arch_virt_to_phys(_kernel_start),
                     arch_virt_to_phys(_kernel_end));
    if (mbi->flags & MBI_FLAG_MODS) {
        const struct mb_module *m = arch_phys_to_virt(mbi->mods_addr);
        for (unsigned i = 0; i < mbi->mods_count; i++)
            regions_subtract(info->free, &info->nfree, m[i].start & ~0xffful,
                             (m[i].end + 0xfff) & ~0xffful);
    }

    /* Device memory: the hole between the top of low RAM and the APICs (PCI BARs live there). */
    info->ndevice = 0;
    word_t dev_start = (low_ram_end + 0x1fffff) & ~0x1ffffful;
    if (dev_start < IOAPIC_DEFAULT)
        regions_add(info->device, &info->ndevice, dev_start, IOAPIC_DEFAULT);
}
