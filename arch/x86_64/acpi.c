/*
 * ACPI, only as far as the port needs it: the RSDP (found by the BIOS-area
 * scan, so a UEFI-only boot without CSM is not supported: docs/booting.md),
 * the RSDT or XSDT, and the MADT, which lists every CPU's local APIC ID, the
 * I/O APIC and the ISA interrupt overrides.
 */
#include <arch/x86.h>

#define MAPPED_LIMIT 0x100000000ul  /* tables must lie in the boot direct map */

struct __attribute__((packed)) rsdp {
    char signature[8];
    uint8_t checksum;
    char oem[6];
    uint8_t revision;
    uint32_t rsdt;
    uint32_t length;
    uint64_t xsdt;
    uint8_t ext_checksum;
    uint8_t reserved[3];
};

struct __attribute__((packed)) sdt_header {
    char signature[4];
    uint32_t length;
    uint8_t revision;
    uint8_t checksum;
    char oem[6];
    char oem_table[8];
    uint32_t oem_revision;
    uint32_t creator, creator_revision;
};

struct __attribute__((packed)) madt {
    struct sdt_header h;
    uint32_t lapic_addr;
    uint32_t flags;
    uint8_t entries[];
};

#define MADT_LAPIC          0
#define MADT_IOAPIC         1
#define MADT_ISO            2
#define MADT_X2APIC         9
#define LAPIC_ENABLED       1u

struct acpi_info acpi_info;

static bool checksum_ok(const void *p, word_t len)
{
    const uint8_t *b = p;
    uint8_t sum = 0;
    for (word_t i = 0; i < len; i++)
        sum = (uint8_t)(sum + b[i]);
    return sum == 0;
}

static bool sig_is(const char *s, const char *want, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (s[i] != want[i])
            return false;
    return true;
}

static const struct rsdp *scan_rsdp(word_t start, word_t len)
{
    for (word_t p = start; p < start + len; p += 16) {
        const struct rsdp *r = arch_phys_to_virt(p);
        if (sig_is(r->signature, "RSD PTR ", 8) && checksum_ok(r, 20))
            return r;
    }
    return NULL;
}

/* The EBDA's first KiB (its segment is at 0x40E), then the BIOS ROM area. */
static const struct rsdp *find_rsdp(void)
{
    word_t ebda = (word_t)*(volatile uint16_t *)arch_phys_to_virt(0x40e) << 4;
    const struct rsdp *r = NULL;
    if (ebda >= 0x80000 && ebda < 0xa0000)
        r = scan_rsdp(ebda, 1024);
    return r ? r : scan_rsdp(0xe0000, 0x20000);
}

static const struct sdt_header *table_at(word_t paddr)
{
    if (paddr == 0 || paddr >= MAPPED_LIMIT)
        return NULL;
    const struct sdt_header *h = arch_phys_to_virt(paddr);
    return checksum_ok(h, h->length) ? h : NULL;
}

static const struct madt *find_madt(const struct rsdp *r)
{
    const struct sdt_header *root;
    unsigned entry_size;
    if (r->revision >= 2 && (root = table_at(r->xsdt)) != NULL) {
        entry_size = 8;
    } else {
        root = table_at(r->rsdt);
        entry_size = 4;
    }
    if (!root)
        return NULL;
    const uint8_t *e = (const uint8_t *)(root + 1);
    unsigned n = (root->length - sizeof(*root)) / entry_size;
    for (unsigned i = 0; i < n; i++) {
        word_t paddr = 0;
        for (unsigned b = 0; b < entry_size; b++)
            paddr |= (word_t)e[i * entry_size + b] << (8 * b);
        const struct sdt_header *h = table_at(paddr);
        if (h && sig_is(h->signature, "APIC", 4))
            return (const struct madt *)h;
    }
    return NULL;
}

static void add_cpu(uint32_t apic_id, uint32_t boot_apic_id)
{
    struct acpi_info *a = &acpi_info;
    /* The boot CPU is entry 0 already; firmware may list a CPU as both LAPIC and x2APIC. */
    for (unsigned i = 0; i < a->ncpus && i < NCPUS; i++)
        if (a->apic_ids[i] == apic_id)
            return;
    if (apic_id == boot_apic_id)
        return;
    if (a->ncpus < NCPUS)
        a->apic_ids[a->ncpus] = apic_id;
    a->ncpus++;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }

void acpi_init(uint32_t boot_apic_id)
{
    struct acpi_info *a = &acpi_info;
    a->ncpus = 1;
    a->apic_ids[0] = boot_apic_id;
    for (unsigned i = 0; i < 16; i++)
        a->isa_gsi[i] = i;      /* identity unless overridden */

    const struct rsdp *r = find_rsdp();
    const struct madt *m = r ? find_madt(r) : NULL;
    if (!m) {
        x86_puts("x86_64: no ACPI MADT; running on the boot core only, no I/O APIC\n");
        return;
    }
    for (const uint8_t *e = m->entries; e < (const uint8_t *)m + m->h.length && e[1] >= 2;
         e += e[1]) {
        switch (e[0]) {
        case MADT_LAPIC:
            if (rd32(e + 4) & LAPIC_ENABLED)
                add_cpu(e[3], boot_apic_id);
            break;
        case MADT_X2APIC:
            if (rd32(e + 8) & LAPIC_ENABLED)
                add_cpu(rd32(e + 4), boot_apic_id);
            break;
        case MADT_IOAPIC:
            /* The I/O APIC whose GSIs start at 0 carries the ISA IRQs; others are not used. */
            if (rd32(e + 8) == 0 && !a->ioapic_paddr) {
                a->ioapic_paddr = rd32(e + 4);
                a->ioapic_gsi_base = 0;
            }
            break;
        case MADT_ISO:
            if (e[2] == 0 && e[3] < 16) {   /* bus 0 is ISA */
                a->isa_gsi[e[3]] = rd32(e + 4);
                a->isa_flags[e[3]] = rd16(e + 8);
            }
            break;
        default:
            break;
        }
    }
}
