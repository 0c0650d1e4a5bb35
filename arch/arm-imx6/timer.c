/*
 * Time on the Cortex-A9 MPCore:
 *   the global timer (one 64-bit up-counter for all cores) is the cycle
 *   counter, arch_cycles() (arch/machine.h): QEMU's A9 has no PMU;
 *   each core's private timer gives the timeslice tick (PPI 29).
 * Both count PERIPHCLK: half the core clock on the board (396 MHz on a
 * 792 MHz i.MX6Q); QEMU runs them at 100 MHz of virtual time (one tick per
 * 10 ns; under -icount shift=0 one tick per 10 instructions).
 */
#include <arch/imx6.h>
#include <arch/boot.h>

#define GT_COUNT_LO   0x00
#define GT_COUNT_HI   0x04
#define GT_CONTROL    0x08
#define GT_ENABLE     (1u << 0)

#define PT_LOAD       0x00
#define PT_CONTROL    0x08
#define PT_STATUS     0x0C
#define PT_ENABLE     (1u << 0)
#define PT_AUTO_RELOAD (1u << 1)
#define PT_IRQ_ENABLE (1u << 2)
#define PT_EVENT      (1u << 0)

#define QEMU_TIMER_HZ  100000000u
#define TICK_HZ        100u      /* timer interrupts per second (kernel/tcb.h: TIMESLICE_TICKS a slice) */

static uint32_t ticks_per_interrupt;    /* written once at boot */

static volatile uint32_t *gtimer(unsigned off) { return mmio32(MPCORE_PBASE + GTIMER_OFFSET + off); }
static volatile uint32_t *ptimer(unsigned off) { return mmio32(MPCORE_PBASE + PTIMER_OFFSET + off); }

/*
 * The board's PERIPHCLK is half the ARM PLL: CCM_ANALOG_PLL_ARM DIV_SELECT
 * gives 24 MHz * div / 2 for the core.  QEMU's timers ignore the clock
 * tree, so under QEMU (no L2C-310, init.c) the rate is its fixed 100 MHz.
 */
#define CCM_ANALOG_PBASE   0x020C8000
word_t arch_cycle_hz(void)
{
    if (arm_is_qemu)
        return QEMU_TIMER_HZ;
    uint32_t div = *(volatile uint32_t *)DEVICE_VA(CCM_ANALOG_PBASE) & 0x7F;
    return (word_t)(24000000u / 2 * div) / 2;
}

/* Start the global timer once, on the boot core; it is shared. */
void global_timer_init(void)
{
    if (!(*gtimer(GT_CONTROL) & GT_ENABLE))
        *gtimer(GT_CONTROL) = GT_ENABLE;       /* prescaler 0, no comparator */
    word_t hz = arch_cycle_hz();
    ticks_per_interrupt = (hz ? hz : QEMU_TIMER_HZ) / TICK_HZ;
}

/* The hi word can carry between the two reads: read until it is stable. */
uint64_t global_timer_read64(void)
{
    uint32_t hi, lo;
    do {
        hi = *gtimer(GT_COUNT_HI);
        lo = *gtimer(GT_COUNT_LO);
    } while (*gtimer(GT_COUNT_HI) != hi);
    return (uint64_t)hi << 32 | lo;
}

void private_timer_clear(void)
{
    *ptimer(PT_STATUS) = PT_EVENT;
}

unsigned arch_timer_irq(void)
{
    return PPI_PTIMER;
}

/*
 * This core's timeslice tick: periodic, auto-reloading.  Writing the load
 * register restarts the count: the next thread gets a whole period.  The
 * control write starts a stopped timer (and the timer at boot).
 */
void arch_timer_rearm(void)
{
    *ptimer(PT_STATUS) = PT_EVENT;
    *ptimer(PT_LOAD) = ticks_per_interrupt;
    *ptimer(PT_CONTROL) = PT_ENABLE | PT_AUTO_RELOAD | PT_IRQ_ENABLE;
}

/* Clearing the event flag too withdraws an interrupt that was about to be raised. */
void arch_timer_stop(void)
{
    *ptimer(PT_CONTROL) = 0;
    *ptimer(PT_STATUS) = PT_EVENT;
}
