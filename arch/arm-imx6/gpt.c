/*
 * The user-level timer: the i.MX6's General Purpose Timer (GPT, at
 * 0x02098000, GIC interrupt ID 87 = SPI 55), which QEMU's sabrelite models
 * too.  It plays the part of x86's PIT: the kernel starts it at boot as a
 * periodic 100 Hz tick and arch_user_timer_irq() names its IRQ, so a root
 * task can take it with IRQControl Get and wait for it on a notification
 * (the IRQ tests of the in-guest suite).  User level never touches the GPT's
 * registers.
 *
 * The GPT's interrupt is a level: it stays asserted while SR.OF1 is set.
 * The PIT's IRQ 0 is an edge the kernel need not acknowledge at the device;
 * to give the GPT the same behaviour, gpt_event_clear() clears OF1 when the
 * interrupt is taken (gic.c), before the SPI is masked for the handler.
 * Ticks that come while the SPI is masked set OF1 again, so the first tick
 * after an Ack pends at once, as a latched PIT edge would.
 */
#include <arch/imx6.h>
#include <arch/boot.h>

#define GPT_PBASE       0x02098000  /* in the device section of SRC and WDOG1 (boot.S) */
#define GPT_SPI         55          /* i.MX6 RM table 3-1: GPT, all its events ORed */

#define GPT_CR          0x00
#define GPT_PR          0x04
#define GPT_SR          0x08
#define GPT_IR          0x0C
#define GPT_OCR1        0x10

#define CR_EN           (1u << 0)
#define CR_ENMOD        (1u << 1)   /* enabling resets the counter to 0 */
#define CR_WAITEN       (1u << 3)   /* keep counting while the core is in WFI */
#define CR_CLKSRC_32K   (4u << 6)   /* ipg_clk_32k: CKIL, 32.768 kHz on the board and in QEMU */
/* CR.FRR = 0: restart mode, the counter goes back to 0 after each compare on channel 1. */
#define SR_ALL          0x3Fu       /* OF1..OF3, IF1, IF2, ROV: write 1 to clear */
#define SR_OF1          (1u << 0)
#define IR_OF1IE        (1u << 0)

#define CKIL_HZ         32768u
#define USER_TIMER_HZ   100u

static volatile uint32_t *gpt(unsigned off) { return mmio32(GPT_PBASE + off); }

/*
 * The reference manual's order for a new clock source: stop the timer and
 * its interrupts, select the clock, clear stale status, then enable.  U-Boot
 * leaves the GPT running as its own timer, so nothing is assumed of its
 * state.  In restart mode a period is OCR1 + 1 counts.
 */
void gpt_init(void)
{
    *gpt(GPT_CR) = 0;
    *gpt(GPT_IR) = 0;
    *gpt(GPT_CR) = CR_CLKSRC_32K | CR_ENMOD | CR_WAITEN;
    *gpt(GPT_PR) = 0;
    *gpt(GPT_OCR1) = CKIL_HZ / USER_TIMER_HZ - 1;
    *gpt(GPT_SR) = SR_ALL;
    *gpt(GPT_CR) = CR_CLKSRC_32K | CR_ENMOD | CR_WAITEN | CR_EN;
    *gpt(GPT_IR) = IR_OF1IE;
}

unsigned gpt_irq(void)
{
    return GIC_FIRST_SPI + GPT_SPI;
}

/*
 * Take down the level of the tick just taken (write 1 to clear).  The read
 * back completes the write at the GPT before the caller's EOI reaches the
 * GIC, a different peripheral, so the line is low when the GIC looks again.
 */
void gpt_event_clear(void)
{
    *gpt(GPT_SR) = SR_OF1;
    (void)*gpt(GPT_SR);
}

unsigned arch_user_timer_irq(void)
{
    return gpt_irq() < arch_irq_count() ? gpt_irq() : ~0u;
}
