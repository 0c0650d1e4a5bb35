/*
 * The local APIC of each core: its timer (the timeslice), IPIs, EOI.  Both
 * access modes are supported: xAPIC registers through the (uncached) direct
 * map, or x2APIC MSRs when the firmware handed over in x2APIC mode, as it
 * must on machines with APIC IDs above 254.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define LAPIC_ID        0x020
#define LAPIC_TPR       0x080
#define LAPIC_EOI       0x0b0
#define LAPIC_SVR       0x0f0
#define LAPIC_IRR       0x200
#define LAPIC_ICR_LOW   0x300
#define LAPIC_ICR_HIGH  0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR 0x390
#define LAPIC_TIMER_DIV 0x3e0

#define SVR_ENABLE      (1u << 8)
#define LVT_MASKED      (1u << 16)
#define LVT_PERIODIC    (1u << 17)
#define LVT_NMI         (4u << 8)
#define ICR_INIT        (5u << 8)
#define ICR_STARTUP     (6u << 8)
#define ICR_PENDING     (1u << 12)
#define ICR_ASSERT      (1u << 14)
#define ICR_LEVEL       (1u << 15)
#define APIC_BASE_ENABLE (1u << 11)
#define X2APIC_MSR      0x800

#define TIMESLICE_MS    10
/* 10 ms of PIT time in all, which a boot under -icount spends as instructions. */
#define CALIBRATE_MS    2
#define CALIBRATE_WINDOWS 5

word_t x86_tsc_hz;
static uint32_t ticks_per_slice;
static word_t lapic_base;   /* virtual address of the xAPIC registers */

static uint32_t lapic_read(unsigned reg)
{
    if (x86_features.x2apic)
        return (uint32_t)rdmsr(X2APIC_MSR + (reg >> 4));
    return mmio_read32(lapic_base + reg);
}

static void lapic_write(unsigned reg, uint32_t v)
{
    if (x86_features.x2apic)
        wrmsr(X2APIC_MSR + (reg >> 4), v);
    else
        mmio_write32(lapic_base + reg, v);
}

uint32_t lapic_id(void)
{
    uint32_t id = lapic_read(LAPIC_ID);
    return x86_features.x2apic ? id : id >> 24;
}

void lapic_init_core(void)
{
    if (!lapic_base) {
        word_t paddr = rdmsr(MSR_APIC_BASE) & 0xffffff000ul;
        memory_map_uncached(paddr);
        lapic_base = (word_t)arch_phys_to_virt(paddr);
    }
    wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE);
    lapic_write(LAPIC_SVR, SVR_ENABLE | VEC_SPURIOUS);
    lapic_write(LAPIC_TPR, 0);
    /* LINT0 carries the 8259's ExtINT on the boot core: cut it off.  LINT1 is NMI. */
    lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
    lapic_write(LAPIC_LVT_LINT1, LVT_NMI);
    lapic_write(LAPIC_LVT_ERROR, LVT_MASKED);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED | VEC_TIMER);
    lapic_write(LAPIC_TIMER_DIV, 0x3);      /* divide by 16 */
}

/*
 * Count APIC timer ticks and TSC cycles over CALIBRATE_MS of PIT time.  Under
 * TCG all three run on QEMU's virtual clock, so the ratio holds even when the
 * host is slow, except where the host takes the vCPU away while the count
 * ends: the loop then sees the end late and counts too much.  A delay only
 * ever adds, so the window of CALIBRATE_WINDOWS that counted the fewest TSC
 * cycles is the truest; on a busy host a single window can come out tens of
 * percent fast.  A result of zero ticks is corrected to a usable minimum.
 */
void lapic_calibrate(void)
{
    uint64_t best_tsc = UINT64_MAX;
    uint32_t best_ticks = 0;
    for (int window = 0; window < CALIBRATE_WINDOWS; window++) {
        lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
        uint64_t tsc0 = pit_measure_start(CALIBRATE_MS);
        uint32_t start = lapic_read(LAPIC_TIMER_CUR);
        while (!pit_measure_done())
            x86_pause();
        uint32_t end = lapic_read(LAPIC_TIMER_CUR);
        uint64_t tsc = arch_cycles() - tsc0;
        lapic_write(LAPIC_TIMER_INIT, 0);
        if (tsc < best_tsc) {
            best_tsc = tsc;
            best_ticks = start - end;
        }
    }

    ticks_per_slice = best_ticks / CALIBRATE_MS * TIMESLICE_MS;
    if (ticks_per_slice < 1000)
        ticks_per_slice = 1000;
    x86_tsc_hz = best_tsc * (1000 / CALIBRATE_MS);
}

void lapic_timer_start(void)
{
    lapic_write(LAPIC_LVT_TIMER, LVT_PERIODIC | VEC_TIMER);
    lapic_write(LAPIC_TIMER_INIT, ticks_per_slice);
}

/* Writing the initial count restarts the period: the next thread gets a full slice. */
void arch_timer_rearm(void)
{
    lapic_write(LAPIC_TIMER_INIT, ticks_per_slice);
}

/* An initial count of 0 stops the timer (SDM vol. 3, 11.5.4). */
void arch_timer_stop(void)
{
    lapic_write(LAPIC_TIMER_INIT, 0);
}

unsigned arch_timer_irq(void)
{
    return X86_IRQ_TIMER;
}

void lapic_eoi(void)
{
    lapic_write(LAPIC_EOI, 0);
}

void lapic_set_priority(uint32_t tpr)
{
    lapic_write(LAPIC_TPR, tpr);
}

static void send_icr(uint32_t apic_id, uint32_t low)
{
    if (x86_features.x2apic) {
        wrmsr(X2APIC_MSR + (LAPIC_ICR_LOW >> 4), (uint64_t)apic_id << 32 | low);
        return;
    }
    /* The xAPIC accepts a new command only once the previous one is delivered. */
    while (lapic_read(LAPIC_ICR_LOW) & ICR_PENDING)
        x86_pause();
    lapic_write(LAPIC_ICR_HIGH, apic_id << 24);
    lapic_write(LAPIC_ICR_LOW, low);    /* this write sends */
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
    send_icr(apic_id, ICR_ASSERT | vector);
}

void lapic_send_init(uint32_t apic_id)
{
    send_icr(apic_id, ICR_INIT | ICR_ASSERT | ICR_LEVEL);
}

void lapic_send_sipi(uint32_t apic_id, uint8_t page)
{
    send_icr(apic_id, ICR_STARTUP | page);
}

void arch_send_ipi(unsigned core)
{
    lapic_send_ipi(x86_cores[core].lapic_id, VEC_IPI);
}

/* Device, timer and IPI vectors pending in the IRR (the kernel runs with IF clear). */
bool arch_interrupt_pending(void)
{
    for (unsigned i = VEC_IRQ_BASE / 32; i < 8; i++) {
        uint32_t irr = lapic_read(LAPIC_IRR + i * 0x10);
        if (i == VEC_BOOT_IPI / 32)
            irr &= ~(1u << (VEC_BOOT_IPI % 32) | 1u << (VEC_SPURIOUS % 32));
        if (irr)
            return true;
    }
    return false;
}
