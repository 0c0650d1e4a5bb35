/*
 * Machine constants and the few hooks that must be inline (kernel/arch.h),
 * for the i.MX6 Quad's Cortex-A9 MPCore.
 */
#ifndef ARCH_MACHINE_H
#define ARCH_MACHINE_H

#include <stdint.h>
#include <abi/types.h>
#include <arch/memlayout.h>
#include <arch/pagetable.h>

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
 * and the absence of padding are part of the entry code.
 */
struct arch_context {
    word_t r[13];
    word_t sp;
    word_t lr;
    word_t pc;
    word_t cpsr;
};

#define ARCH_USER_REGS 17
#define CTX_SIZE       (ARCH_USER_REGS * 4)
_Static_assert(sizeof(struct arch_context) == CTX_SIZE, "vectors.S stores the context as 17 words");

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

static inline struct arm_stack_top_words *arm_stack_top_words(void)
{
    uintptr_t top;
    /* Constant while the kernel runs on this core: not volatile, so it may be reused. */
    __asm__("mrc p15, 0, %0, c13, c0, 4" : "=r"(top));
    return (struct arm_stack_top_words *)top - 1;
}

/* The lock layer's per-core pointer (lock_core_data(), kernel/lock_env.h). */
static inline void *arch_lock_data(void)
{
    return arm_stack_top_words()->lock_data;
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

/*
 * Address-space switch (kernel/arch.h), inline: the IPC fastpath switches
 * on every call between two spaces, and the call layer, the frame and the
 * per-core lookups of an out-of-line version cost as much as the switch.
 * Defined before kernel/arch.h declares it, so that declaration refers to
 * this internal definition (C11 6.2.2p4).  mmu.c explains hardware ASIDs.
 *
 * Kernel ASID a runs under hardware ASID a mod 256, or a / 256 when that
 * is 0: never 0 for a valid a, which leaves hardware ASID 0 to the
 * kernel-only space.  asid_owner[0] holds ARM_ASID_OWNER_NONE, which no
 * ASID equals, so ASID 0 (the kernel-only space, kernel/vspace.h) and a
 * hardware ASID last used by another space take the out-of-line path,
 * mmu.c's arm_vspace_load_slow().
 *
 * The switch, ARM ARM (DDI 0406C) B3.10.4, "Synchronization of changes of
 * ASID and TTBR", the method of a table with global mappings only:
 *   TTBR0 := empty_l1, ISB.  No walk through the old table starts after
 *     the ISB, and walks of the empty table create no TLB entry (all its
 *     entries fault, and faults are not cached).
 *   DSB.  Cortex-A9 erratum 754322: a walk that started before a CONTEXTIDR write may complete after it
 *     and put a micro-TLB entry under the new ASID (Cortex-A9 r2 and r3;
 *     the i.MX6Q's A9 is r2p10).  The DSB waits for walks of the old
 *     table still in flight.
 *   CONTEXTIDR := hw, ISB.  No branch in between (B3.10.4: a branch
 *     predicted before the ISB could be tagged with either ASID).
 *   TTBR0 := root.  No ISB: the kernel never accesses user addresses (the
 *     user's memory is reached through the direct map), and the return to
 *     user mode that follows, an exception return, is a context
 *     synchronization operation like an ISB (B3.15, "Synchronization of
 *     changes to system control registers": a CP15 write is guaranteed
 *     to affect later instructions after an ISB, an exception entry or an
 *     exception return).
 */
#define ARM_ASID_OWNER_NONE 0xFFFFFFFFu

extern uint32_t empty_l1[2048];
void arm_vspace_load_slow(word_t vspace_root_paddr, unsigned asid);

static inline unsigned arm_hw_asid(unsigned asid)
{
    unsigned hw = asid & 0xFF;
    return hw ? hw : asid >> 8;
}

static inline __attribute__((always_inline)) void arch_vspace_load(word_t vspace_root_paddr, unsigned asid)
{
    unsigned hw = arm_hw_asid(asid);

    if (__builtin_expect(arm_stack_top_words()->asid_owner[hw] != asid, 0)) {
        arm_vspace_load_slow(vspace_root_paddr, asid);
        return;
    }
    /* empty_l1 is 8 KiB aligned: + TTBR_ATTRS is | TTBR_ATTRS, and folds
     * into the one constant the compiler loads. */
    __asm__ volatile("mcr p15, 0, %[empty], c2, c0, 0\n"   /* TTBR0 */
                     "isb\n"
                     "dsb\n"
                     "mcr p15, 0, %[hw], c13, c0, 1\n"     /* CONTEXTIDR */
                     "isb\n"
                     "mcr p15, 0, %[root], c2, c0, 0"      /* TTBR0 */
                     :
                     : [empty] "r"(arch_virt_to_phys(empty_l1) + TTBR_ATTRS), [hw] "r"(hw),
                       [root] "r"(vspace_root_paddr | TTBR_ATTRS)
                     : "memory");
}

#endif
