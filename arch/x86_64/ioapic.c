/*
 * The I/O APIC: device IRQs.  User IRQ numbers are ISA IRQs 0..15 (mapped to
 * I/O APIC pins by the MADT's interrupt source overrides: on QEMU and most PCs
 * the PIT's IRQ 0 is pin 2) and pins 16.. for PCI.  IRQ n uses vector
 * VEC_IRQ_BASE + n and is delivered to the boot core.
 *
 * Masking (docs/x86_64.md): the entry code masks a line when it delivers it
 * and sends the EOI at once; arch_irq_follow() sets the mask as the kernel
 * last decided (unmasked after the driver's Ack).  It runs after the kernel
 * lock is released, on any core, so the index/data register pair, the state
 * below and its read of the kernel's decision are under ioapic_lock.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define IOREGSEL        0x00
#define IOWIN           0x10
#define IOAPIC_VER      0x01
#define IOAPIC_REDIR(n) (0x10 + 2 * (n))

#define REDIR_MASKED    (1u << 16)
#define REDIR_LEVEL     (1u << 15)
#define REDIR_ACTIVE_LOW (1u << 13)

#define IRQ_CASCADE     2       /* the 8259 cascade: no device */
#define IRQ_COM1        4       /* the kernel's console */

static word_t ioapic_base;
static unsigned npins;
static volatile uint32_t ioapic_lock;
/* Protected by ioapic_lock. */
static uint32_t redir_low[IOAPIC_MAX_IRQS];     /* the entry without the mask bit */
static uint8_t irq_pin[IOAPIC_MAX_IRQS];

static void lock(void)
{
    /* Acquire: pairs with the release in unlock(). */
    while (__atomic_exchange_n(&ioapic_lock, 1, __ATOMIC_ACQUIRE))
        x86_pause();
}

static void unlock(void)
{
    __atomic_store_n(&ioapic_lock, 0, __ATOMIC_RELEASE);
}

static uint32_t ioapic_read(unsigned reg)
{
    mmio_write32(ioapic_base + IOREGSEL, reg);
    return mmio_read32(ioapic_base + IOWIN);
}

static void ioapic_write(unsigned reg, uint32_t v)
{
    mmio_write32(ioapic_base + IOREGSEL, reg);
    mmio_write32(ioapic_base + IOWIN, v);
}

static void set_masked(unsigned irq, bool masked)
{
    ioapic_write(IOAPIC_REDIR(irq_pin[irq]), redir_low[irq] | (masked ? REDIR_MASKED : 0));
}

unsigned arch_irq_count(void)
{
    return npins < IOAPIC_MAX_IRQS ? npins : IOAPIC_MAX_IRQS;
}

bool arch_irq_reserved(unsigned irq)
{
    return irq >= arch_irq_count() || irq == IRQ_CASCADE || irq == IRQ_COM1 ||
           irq_pin[irq] >= npins;
}

void ioapic_init(void)
{
    const struct acpi_info *a = &acpi_info;
    if (!a->ioapic_paddr) {
        npins = 0;
        return;
    }
    memory_map_uncached(a->ioapic_paddr);
    ioapic_base = (word_t)arch_phys_to_virt(a->ioapic_paddr);
    npins = ((ioapic_read(IOAPIC_VER) >> 16) & 0xff) + 1;

    for (unsigned pin = 0; pin < npins; pin++)
        ioapic_write(IOAPIC_REDIR(pin), REDIR_MASKED);

    for (unsigned irq = 0; irq < arch_irq_count(); irq++) {
        uint32_t low = VEC_IRQ_BASE + irq;      /* fixed delivery, physical destination */
        unsigned gsi = irq;
        if (irq < 16) {
            /* ISA: edge, active high unless the MADT says otherwise. */
            gsi = a->isa_gsi[irq];
            unsigned polarity = a->isa_flags[irq] & 3, trigger = (a->isa_flags[irq] >> 2) & 3;
            if (polarity == 3)
                low |= REDIR_ACTIVE_LOW;
            if (trigger == 3)
                low |= REDIR_LEVEL;
        } else {
            low |= REDIR_LEVEL | REDIR_ACTIVE_LOW;  /* PCI */
        }
        irq_pin[irq] = (uint8_t)(gsi - a->ioapic_gsi_base);
        redir_low[irq] = low;
        if (arch_irq_reserved(irq))
            continue;
        ioapic_write(IOAPIC_REDIR(irq_pin[irq]) + 1, a->apic_ids[0] << 24);
        set_masked(irq, true);
    }
}

/* Called by the interrupt entry (idt.c) before it sends the EOI. */
void ioapic_mask_on_delivery(unsigned irq)
{
    lock();
    set_masked(irq, true);
    unlock();
}

void arch_irq_follow(unsigned irq, const bool *open)
{
    if (arch_irq_reserved(irq))
        return;     /* the timer and IPI pseudo-IRQs were acknowledged at entry */
    lock();
    set_masked(irq, !__atomic_load_n(open, __ATOMIC_RELAXED));
    unlock();
}
