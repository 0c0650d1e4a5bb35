/*
 * Machine constants and the few hooks that must be inline (kernel/arch.h),
 * for the i.MX6 Quad's Cortex-A9 MPCore.
 */
#ifndef ARCH_MACHINE_H
#define ARCH_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <abi/types.h>
#include <arch/memlayout.h>

#define PAGE_BITS           12      /* small page */
#define LARGE_PAGE_BITS     20      /* section */
#define CACHE_LINE_SIZE     32      /* Cortex-A9 L1 and the L2C-310 */
#define ARCH_MSG_REGISTERS  4       /* MR0..MR3 in r2..r5 (docs/arm-imx6.md) */
#define USER_TOP            0x80000000UL
#define ARCH_ASID_BITS      8       /* CONTEXTIDR.ASID */

/*
 * A thread's saved user registers, in the order TCB Read/WriteRegisters
 * use (docs/arm-imx6.md): r0..r12, sp, lr, pc, cpsr.  The entry code in
 * vectors.S stores straight into it: SRS writes pc and cpsr at the end,
 * then STM^ writes r0..r14 of the user bank below them, so the field order
 * and the absence of padding are part of the entry code.  After them, the
 * thread's TLS base, which the exit loads into TPIDRURO (CTX_TLS_BASE,
 * <arch/exception.h>).  There is no VFP state: user code is soft-float,
 * and with CPACR left at its reset value a VFP instruction is undefined.
 */
struct arch_context {
    word_t r[13];
    word_t sp;
    word_t lr;
    word_t pc;
    word_t cpsr;
    word_t tls_base;
};

#define ARCH_USER_REGS 17
#define CTX_SIZE       (ARCH_USER_REGS * 4)
_Static_assert(offsetof(struct arch_context, tls_base) == CTX_SIZE, "vectors.S stores the registers as 17 words");

/* MPIDR.Aff0 is the core's number within the A9 cluster (0..3); core 0 boots. */
static inline unsigned arch_core_id(void)
{
    uint32_t mpidr;
    __asm__("mrc p15, 0, %0, c0, c0, 5" : "=r"(mpidr));
    return mpidr & 3;
}

/*
 * TPIDRPRW holds this core's kernel stack top for the entry code; the
 * KSTACK_RESERVED bytes below it are not stack but per-core words the
 * kernel reads on every entry, so that finding them is an MRC and a load,
 * not MPIDR, a multiplication and an address (smp.c sets them).
 */
struct arm_stack_top_words {
    word_t unused;          /* keeps the stack below 8-byte aligned (KSTACK_RESERVED) */
    uint32_t *asid_owner;   /* arch_vspace_load(): this core's arm_core.asid_owner */
    void *lock_data;        /* arch_lock_data() */
    void *core;             /* arch_this_core() (<arch/this_core.h>): &cores[core] */
};
_Static_assert(sizeof(struct arm_stack_top_words) == KSTACK_RESERVED, "the words above the kernel stack");

static inline uintptr_t arm_kernel_stack_top(void)
{
    uintptr_t top;
    /* Constant while the kernel runs on this core: not volatile, so it may be reused. */
    __asm__("mrc p15, 0, %0, c13, c0, 4" : "=r"(top));
    return top;
}

static inline struct arm_stack_top_words *arm_stack_top_words(void)
{
    return (struct arm_stack_top_words *)arm_kernel_stack_top() - 1;
}

/*
 * The lock layer's per-core pointer (lock_core_data(), kernel/lock_env.h).
 * Set once at boot before any core takes a lock, then constant: loaded by
 * an asm that is neither volatile nor said to read memory, so the
 * compiler may reuse the value across the critical section (the IPC
 * fastpath keeps it from the acquire to the release) instead of loading
 * it again after every store.
 */
static inline void *arch_lock_data(void)
{
    void *p;
    __asm__("ldr %0, [%1, %2]" : "=r"(p)
            : "r"(arm_kernel_stack_top()),
              "i"((int)offsetof(struct arm_stack_top_words, lock_data) - (int)KSTACK_RESERVED));
    return p;
}

/* Boot: record core's lock_core_data() before any core takes the kernel lock. */
void arch_set_lock_data(unsigned core, void *data);

/*
 * The MPCore global timer: one 64-bit counter shared by all cores, clocked
 * by PERIPHCLK (half the core clock on the board).  QEMU's A9 has no PMU
 * cycle counter, so this is the cycle counter; under -icount it advances
 * with executed instructions (QEMU: one tick per 10 ns of virtual time,
 * i.e. per 10 instructions at shift=0).  The low word suffices for the
 * intervals the kernel measures; callers subtract modulo 2^32.
 */
static inline word_t arch_cycles(void)
{
    return *(volatile uint32_t *)DEVICE_VA(MPCORE_PBASE + GTIMER_OFFSET);
}

static inline void *arch_phys_to_virt(word_t paddr)
{
    return (void *)(paddr + PHYS_OFFSET);
}

static inline word_t arch_virt_to_phys(const void *vaddr)
{
    return (word_t)vaddr - PHYS_OFFSET;
}

#endif
