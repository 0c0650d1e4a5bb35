/*
 * The console: a 16550 UART at COM1 (I/O port 0x3F8), polled, 115200 8N1.
 * QEMU wires it to -serial; on a real PC it is the first serial port, which
 * docs/booting.md sets GRUB to use as well.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define COM1        0x3f8
#define UART_DATA   0       /* DLAB=0: transmit/receive; DLAB=1: divisor low */
#define UART_IER    1       /* DLAB=1: divisor high */
#define UART_FCR    2
#define UART_LCR    3
#define UART_MCR    4
#define UART_LSR    5
#define LSR_THRE    0x20    /* transmit holding register empty */

void serial_init(void)
{
    outb(COM1 + UART_IER, 0x00);    /* no UART interrupts: the kernel polls */
    outb(COM1 + UART_LCR, 0x80);    /* DLAB: the next two writes set the divisor */
    outb(COM1 + UART_DATA, 1);      /* 115200 / 1 */
    outb(COM1 + UART_IER, 0);
    outb(COM1 + UART_LCR, 0x03);    /* 8 data bits, no parity, 1 stop bit */
    outb(COM1 + UART_FCR, 0xc7);    /* enable and clear the FIFOs */
    outb(COM1 + UART_MCR, 0x03);    /* DTR, RTS: some terminals wait for them */
}

void arch_console_putc(char c)
{
    /* A real UART drops characters written while the holding register is full. */
    while (!(inb(COM1 + UART_LSR) & LSR_THRE))
        x86_pause();
    outb(COM1 + UART_DATA, (uint8_t)c);
}

/*
 * The port's own messages (boot progress, panics).  The generic kernel
 * serialises its lines itself; these lines take a lock of their own so that
 * two cores' port messages never mix within a line.
 */
static volatile uint32_t console_lock_word;

void x86_console_lock(void)
{
    /* Acquire: pairs with the release in x86_console_unlock(). */
    while (__atomic_exchange_n(&console_lock_word, 1, __ATOMIC_ACQUIRE))
        x86_pause();
}

void x86_console_unlock(void)
{
    __atomic_store_n(&console_lock_word, 0, __ATOMIC_RELEASE);
}

void x86_puts(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            arch_console_putc('\r');
        arch_console_putc(*s);
    }
}

void x86_put_hex(word_t v)
{
    x86_puts("0x");
    for (int shift = 60; shift >= 0; shift -= 4)
        arch_console_putc("0123456789abcdef"[(v >> shift) & 0xf]);
}

void x86_put_dec(word_t v)
{
    char buf[24];
    int i = 0;
    do {
        buf[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (i)
        arch_console_putc(buf[--i]);
}
