/*
 * The console: UART2 of the i.MX6, the Sabre Lite's serial port (115200 8N1,
 * set up by U-Boot; QEMU needs no set-up).  Polled, never interrupt-driven.
 */
#include <arch/imx6.h>

#define UTXD        0x40    /* transmit data */
#define UTS         0xB4    /* test register */
#define UTS_TXFULL  (1u << 4)

static void uart_put(char c)
{
    volatile uint32_t *uart = mmio32(UART2_PBASE);
    while (uart[UTS / 4] & UTS_TXFULL)
        ;
    uart[UTXD / 4] = (uint8_t)c;
}

/* Serial terminals want CR LF; tools strip the CR. */
void arch_console_putc(char c)
{
    if (c == '\n')
        uart_put('\r');
    uart_put(c);
}
