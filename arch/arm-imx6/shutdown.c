/*
 * Ending a run (kernel/arch.h: arch_shutdown, arch_halt_core).
 *
 * Under QEMU: semihosting SYS_EXIT_EXTENDED with ADP_Stopped_ApplicationExit
 * and the status as subcode; QEMU exits with that status as its own exit
 * code (so status 0 -> exit 0, N -> N & 0xff).  The plain SYS_EXIT of A32
 * cannot carry a status, hence the extended call.
 *
 * Without semihosting (the board, or QEMU without the flag): a board reset
 * through WDOG1.  The SRC cannot reset the whole SoC by itself (its SCR only
 * resets single cores); asserting the watchdog's software reset (WCR.SRS = 0)
 * is how the i.MX6 restarts, and QEMU treats it as a system reset, which
 * ends QEMU (exit code 0) under -no-reboot.  The status is then only in the
 * done record the kernel printed before.
 */
#include <arch/imx6.h>

#define SYS_EXIT_EXTENDED            0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

#define WDOG_WCR      0x00      /* 16-bit */
#define WCR_WDE       (1u << 2) /* enable; SRS (bit 4) and WDA (bit 5) left 0: assert both resets */

_Noreturn void arch_halt_core(void)
{
    for (;;)
        __asm__ volatile("cpsid aif\n dsb\n wfi" ::: "memory");
}

_Noreturn void arch_shutdown(int status)
{
    static word_t block[2];

    __asm__ volatile("cpsid aif" ::: "memory");
    block[0] = ADP_STOPPED_APPLICATION_EXIT;
    block[1] = (word_t)status;
    semihost_call(SYS_EXIT_EXTENDED, (word_t)block);

    /* Still here: no semihosting.  Reset the board (twice, as the reset may be missed). */
    volatile uint16_t *wdog = (volatile uint16_t *)DEVICE_VA(WDOG1_PBASE);
    wdog[WDOG_WCR / 2] = WCR_WDE;
    wdog[WDOG_WCR / 2] = WCR_WDE;
    arch_halt_core();
}
