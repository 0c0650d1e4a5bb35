/*
 * Interfaces between the arm-imx6 port's own files (not used by generic code).
 */
#ifndef ARCH_IMX6_H
#define ARCH_IMX6_H

#include <stdbool.h>
#include <stdint.h>
#include <types.h>
#include <arch.h>
#include <arch/exception.h>

/* Device registers through the kernel's device window (arch/memlayout.h). */
static inline volatile uint32_t *mmio32(word_t paddr)
{
    return (volatile uint32_t *)DEVICE_VA(paddr);
}

/* ---- Interrupt numbers (GIC interrupt IDs, which are also the IRQ numbers generic code sees). */
#define SGI_IPI          0      /* arch_send_ipi() */
#define SGI_BOOT_PING    1      /* the boot-time IPI round only (smp.c) */
#define PPI_GTIMER       27     /* the global timer's comparator (unused) */
#define PPI_PTIMER       29     /* this core's private timer: the timeslice */
#define GIC_FIRST_SPI    32     /* the first shared (device) interrupt */
#define GIC_SPURIOUS     1023

/* Per-core state of the port, written by its own core except where noted. */
struct arm_core {
    volatile uint32_t arrived;      /* set once by the core itself when its arch state is up */
    volatile uint32_t pings_from;   /* boot IPI round: bit c = a ping from core c arrived */
    uint32_t asid_owner[1u << ARCH_ASID_BITS];  /* kernel ASID last run under each hardware ASID
                                                   (machine.h); words, for a scaled-index load */
} CACHE_ALIGNED;
_Static_assert(sizeof(struct arm_core) % CACHE_LINE_SIZE == 0, "per-core state fills whole cache lines");

extern struct arm_core arm_cores[NCPUS];

static inline struct arm_core *this_arm_core(void)
{
    return &arm_cores[arch_core_id()];
}

/* First thing on each core: make my_core() (<arch/this_core.h>) and arch_vspace_load() work. */
void arm_set_this_core(unsigned core);

/* Entry points from boot.S and vectors.S. */
_Noreturn void arch_init_boot_core(void);
_Noreturn void arch_init_secondary(unsigned core);
_Noreturn void arch_handle_irq(void);
_Noreturn void arch_user_exception(unsigned kind);
void arch_kernel_exception(struct kernel_frame *f, unsigned kind, word_t svc_sp, word_t svc_lr);
_Noreturn void arch_unexpected_exception(struct kernel_frame *f, unsigned kind);

/* smp.c */
void scu_enable(void);
unsigned scu_core_count(void);

/* gic.c */
void gic_init_distributor(void);
void gic_init_core(void);
void gic_send_sgi(unsigned core, unsigned sgi);
uint32_t gic_acknowledge(void);
void gic_end_of_interrupt(uint32_t iar);

/* timer.c */
void global_timer_init(void);
void private_timer_clear(void);
uint64_t global_timer_read64(void);

/* gpt.c: the user-level timer. */
void gpt_init(void);
unsigned gpt_irq(void);
void gpt_event_clear(void);

/* l2c.c: true when an L2C-310 was found and enabled. */
bool l2c_init(void);

/* mmu.c */
extern uint32_t kernel_l1[4096];
extern uint32_t empty_l1[2048];
void mmu_clean_dcache_range(word_t vaddr, word_t size);
void mmu_sync_icache_range(word_t vaddr, word_t size);

/* semihosting.c: a semihosting call; returns ~0 when no debugger or QEMU answers. */
word_t semihost_call(word_t op, word_t arg);
extern const char semihost_insn[];

/* l2c.c: the probe load that may abort when no L2C-310 is there. */
extern const char l2c_probe_insn[];

/* init.c */
extern bool arm_is_qemu;

#endif
