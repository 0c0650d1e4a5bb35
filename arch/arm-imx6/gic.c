/*
 * The Cortex-A9 MPCore's interrupt controller (ARM GIC v1, "PL390"-like):
 * one distributor shared by the cores, one CPU interface per core at the
 * same address (banked).  Interrupt IDs are the IRQ numbers generic code
 * sees: SGIs 0..15 (IPIs), PPIs 16..31 (per-core timers), SPIs 32.. (the
 * SoC's devices, 160 IDs in all on the i.MX6 Quad).
 *
 * Device IRQs follow the x86 port's rule: on delivery the SPI is masked in
 * the distributor and its EOI written at once, so the CPU interface is free
 * for further interrupts while a user-level driver works; arch_irq_follow()
 * unmasks it again when the kernel decides so (the driver's Ack).
 */
#include <arch/imx6.h>
#include <core.h>
#include <cpu_relax.h>
#include <irq.h>

#define GICD_CTLR        0x000
#define GICD_TYPER       0x004
#define GICD_ISENABLER   0x100
#define GICD_ICENABLER   0x180
#define GICD_ICPENDR     0x280
#define GICD_IPRIORITYR  0x400
#define GICD_ITARGETSR   0x800
#define GICD_SGIR        0xF00

#define GICC_CTLR        0x00
#define GICC_PMR         0x04
#define GICC_BPR         0x08
#define GICC_IAR         0x0C
#define GICC_EOIR        0x10
#define GICC_HPPIR       0x18

#define IRQ_PRIORITY     0xA0   /* every interrupt the same: no nesting, the kernel runs with IRQs off */
#define PRIORITY_MASK    0xF0   /* let all of them through */

static volatile uint32_t *gicd(unsigned off) { return mmio32(MPCORE_PBASE + GICD_OFFSET + off); }
static volatile uint32_t *gicc(unsigned off) { return mmio32(MPCORE_PBASE + GICC_OFFSET + off); }

static unsigned irq_lines;          /* written once at boot */

/*
 * arch_irq_follow() runs as deferred work after the kernel lock is
 * released, on any core: its read of the kernel's decision and its write of
 * the enable bit are one step under this small lock of its own.
 */
static uint32_t mask_lock;

static void mask_lock_acquire(void)
{
    /* Acquire pairs with the release in mask_lock_release(). */
    while (__atomic_exchange_n(&mask_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&mask_lock, __ATOMIC_RELAXED))
            cpu_relax();
}

static void mask_lock_release(void)
{
    __atomic_store_n(&mask_lock, 0, __ATOMIC_RELEASE);
}

unsigned arch_irq_count(void)
{
    return irq_lines;
}

/* SGIs and PPIs belong to the kernel (IPIs, timers). */
bool arch_irq_reserved(unsigned irq)
{
    return irq < GIC_FIRST_SPI;
}

void gic_init_distributor(void)
{
    *gicd(GICD_CTLR) = 0;
    irq_lines = ((*gicd(GICD_TYPER) & 0x1F) + 1) * 32;
    if (irq_lines > IRQ_MAX)
        irq_lines = IRQ_MAX;
    for (unsigned i = GIC_FIRST_SPI; i < irq_lines; i += 32) {
        *gicd(GICD_ICENABLER + i / 8) = ~0u;
        *gicd(GICD_ICPENDR + i / 8) = ~0u;
    }
    for (unsigned i = GIC_FIRST_SPI; i < irq_lines; i += 4) {
        *gicd(GICD_IPRIORITYR + i) = IRQ_PRIORITY * 0x01010101u;
        /* Device interrupts go to core 0, where the root task's drivers start. */
        *gicd(GICD_ITARGETSR + i) = 0x01010101u;
    }
    *gicd(GICD_CTLR) = 1;
}

/* The banked part: this core's SGIs and PPIs, and its CPU interface. */
void gic_init_core(void)
{
    *gicd(GICD_ICENABLER) = ~0u;
    for (unsigned i = 0; i < GIC_FIRST_SPI; i += 4)
        *gicd(GICD_IPRIORITYR + i) = IRQ_PRIORITY * 0x01010101u;
    *gicd(GICD_ISENABLER) = (1u << SGI_IPI) | (1u << SGI_BOOT_PING) | (1u << PPI_PTIMER);
    *gicc(GICC_PMR) = PRIORITY_MASK;
    *gicc(GICC_BPR) = 0;
    *gicc(GICC_CTLR) = 1;
}

/*
 * SGIR: target list filter 0 (the list in bits 16..23), one bit per core.
 * The DSB orders this core's earlier stores (the mailbox, the reschedule
 * flag) before the interrupt, which the receiver acts on without any other
 * synchronisation with us.
 */
void gic_send_sgi(unsigned core, unsigned sgi)
{
    __asm__ volatile("dsb ish" ::: "memory");
    *gicd(GICD_SGIR) = (1u << (16 + core)) | sgi;
}

void arch_send_ipi(unsigned core)
{
    gic_send_sgi(core, SGI_IPI);
}

unsigned arch_ipi_irq(void)
{
    return SGI_IPI;
}

/* Reading IAR acknowledges the highest-priority pending interrupt (even with CPSR.I set). */
uint32_t gic_acknowledge(void)
{
    return *gicc(GICC_IAR);
}

void gic_end_of_interrupt(uint32_t iar)
{
    *gicc(GICC_EOIR) = iar;
}

bool arch_interrupt_pending(void)
{
    return (*gicc(GICC_HPPIR) & 0x3FF) != GIC_SPURIOUS;
}

static void set_enabled(unsigned irq, bool enabled)
{
    *gicd((enabled ? GICD_ISENABLER : GICD_ICENABLER) + (irq / 32) * 4) = 1u << (irq % 32);
}

void arch_irq_follow(unsigned irq, const bool *open)
{
    if (arch_irq_reserved(irq) || irq >= irq_lines)
        return;     /* timer and IPIs were acknowledged at entry */
    mask_lock_acquire();
    set_enabled(irq, __atomic_load_n(open, __ATOMIC_RELAXED));
    mask_lock_release();
}

/*
 * An interrupt arrived (vectors.S saved the interrupted context).  The
 * private timer's and the GPT's event flags are cleared before their EOI
 * so their level-sensitive lines do not pend again at once (gpt.c).
 */
_Noreturn void arch_handle_irq(void)
{
    uint32_t iar = gic_acknowledge();
    unsigned id = iar & 0x3FF;

    if (id == PPI_PTIMER) {
        private_timer_clear();
        gic_end_of_interrupt(iar);
        handle_interrupt(id);
    }
    if (id == SGI_IPI) {
        gic_end_of_interrupt(iar);
        handle_interrupt(id);
    }
    if (id >= GIC_FIRST_SPI && id < irq_lines) {
        if (id == gpt_irq())
            gpt_event_clear();
        set_enabled(id, false);
        gic_end_of_interrupt(iar);
        handle_interrupt(id);
    }
    /* Spurious (no EOI for 1023, by the GIC's rules), or a late boot ping. */
    if (id != GIC_SPURIOUS)
        gic_end_of_interrupt(iar);
    arch_return_to_user(current_thread());
}
