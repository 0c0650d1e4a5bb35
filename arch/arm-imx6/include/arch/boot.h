/*
 * Hooks the port offers the generic kernel beyond kernel/arch.h, the same
 * set as arch/x86_64/include/arch/boot.h.
 */
#ifndef ARCH_BOOT_H
#define ARCH_BOOT_H

#include <stdbool.h>
#include <abi/types.h>

/* Result of the boot IPI round run by arch_start_secondary_cores() (true on one core). */
bool arch_ipi_round(void);

/* The IRQ number handle_interrupt() receives for arch_send_ipi(): SGI 0. */
unsigned arch_ipi_irq(void);

/* The cycle counter's (global timer's) frequency; 0 when unknown. */
word_t arch_cycle_hz(void);

/* A device timer user level can wait on: the GPT's 100 Hz tick (gpt.c). */
unsigned arch_user_timer_irq(void);

#endif
