/*
 * Legacy ISA timing and interrupt chips: the 8259 PIC pair, which the port
 * masks for good (interrupts come through the I/O APIC), and the 8254 PIT,
 * whose channel 2 measures time at boot (gated through port 0x61, no IRQ) and
 * whose channel 0 ticks on IRQ 0 as the user-level device timer.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define PIC1_CMD    0x20
#define PIC1_DATA   0x21
#define PIC2_CMD    0xa0
#define PIC2_DATA   0xa1

#define PIT_CH0     0x40
#define PIT_CH2     0x42
#define PIT_CMD     0x43
#define PIT_GATE    0x61        /* bit 0: channel 2 gate, bit 1: speaker, bit 5: channel 2 output */
#define PIT_HZ      1193182u

void pic_disable(void)
{
    /* Re-initialise so that even a spurious IRQ cannot land on an exception vector. */
    outb(PIC1_CMD, 0x11);               /* ICW1: edge, cascade, ICW4 follows */
    outb(PIC2_CMD, 0x11);
    outb(PIC1_DATA, VEC_PIC_BASE);   /* ICW2: vector base */
    outb(PIC2_DATA, VEC_PIC_BASE + 8);
    outb(PIC1_DATA, 0x04);              /* ICW3: slave on IRQ 2 */
    outb(PIC2_DATA, 0x02);
    outb(PIC1_DATA, 0x01);              /* ICW4: 8086 mode */
    outb(PIC2_DATA, 0x01);
    outb(PIC1_DATA, 0xff);              /* mask everything */
    outb(PIC2_DATA, 0xff);
}

void pit_start_periodic(unsigned hz)
{
    unsigned divisor = PIT_HZ / hz;
    outb(PIT_CMD, 0x34);                /* channel 0, low then high byte, mode 2 (rate generator) */
    outb(PIT_CH0, (uint8_t)divisor);
    outb(PIT_CH0, (uint8_t)(divisor >> 8));
}

/* Start a one-shot count of `ms` (at most 54) on channel 2; returns the TSC at the start. */
uint64_t pit_measure_start(unsigned ms)
{
    unsigned count = PIT_HZ / 1000 * ms;
    /* Gate low while programming, speaker off. */
    outb(PIT_GATE, inb(PIT_GATE) & ~0x03);
    outb(PIT_CMD, 0xb0);                /* channel 2, low then high byte, mode 0 (count down once) */
    outb(PIT_CH2, (uint8_t)count);
    outb(PIT_CH2, (uint8_t)(count >> 8));
    /* A rising gate starts the count in mode 0. */
    outb(PIT_GATE, (inb(PIT_GATE) & ~0x02) | 0x01);
    return arch_cycles();
}

/* Channel 2's output goes high when the count reaches zero. */
bool pit_measure_done(void)
{
    return (inb(PIT_GATE) & 0x20) != 0;
}

void pit_delay_us(unsigned us)
{
    while (us) {
        unsigned step = us > 50000 ? 50000 : us;
        unsigned count = (unsigned)((uint64_t)PIT_HZ * step / 1000000);
        if (count < 2)
            count = 2;
        outb(PIT_GATE, inb(PIT_GATE) & ~0x03);
        outb(PIT_CMD, 0xb0);
        outb(PIT_CH2, (uint8_t)count);
        outb(PIT_CH2, (uint8_t)(count >> 8));
        outb(PIT_GATE, (inb(PIT_GATE) & ~0x02) | 0x01);
        while (!pit_measure_done())
            x86_pause();
        us -= step;
    }
}
