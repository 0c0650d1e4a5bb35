/*
 * Ending a run.  QEMU's isa-debug-exit device (-device
 * isa-debug-exit,iobase=0xf4,iosize=0x04) ends QEMU when a value is written
 * to port 0xf4, with exit code (value << 1) | 1.  We write the status itself,
 * so QEMU exits with 2 * status + 1 (status 0 -> 1, 1 -> 3, ...; a process exit
 * code keeps 8 bits, so statuses 0..127 are recoverable as (code - 1) / 2).
 * tools/qemu_run.py reads the status from the done record instead; the exit
 * code is a second witness.  Without the device (a real PC) the write does
 * nothing, and the core says so and halts.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define DEBUG_EXIT_PORT 0xf4

_Noreturn void arch_halt_core(void)
{
    for (;;)
        __asm__ volatile("cli; hlt");
}

_Noreturn void arch_shutdown(int status)
{
    outl(DEBUG_EXIT_PORT, (uint32_t)status);
    x86_console_lock();
    x86_puts("x86_64: run ended with status ");
    x86_put_dec((word_t)(unsigned)status);
    x86_puts("; no QEMU exit device, halting (reset the machine to run again)\n");
    x86_console_unlock();
    arch_halt_core();
}
