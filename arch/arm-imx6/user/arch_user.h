/*
 * Architecture-specific helpers for user code (arm-imx6), the same set as
 * arch/x86_64/user/arch_user.h: the cycle counter, a spin-wait hint, a
 * barrier, the register set of TCB Read/WriteRegisters, and the
 * instructions the test suite uses to raise each kind of fault.
 */
#ifndef ARCH_USER_H
#define ARCH_USER_H

#include <abi/types.h>

#define ARCH_NAME_USER "arm-imx6"

/*
 * The cycle counter: the MPCore global timer, the counter the kernel uses
 * too.  User code reads it through the page of the A9's private region
 * that cycles.c maps read-only (from the device untyped the kernel hands
 * out for it, docs/arm-imx6.md) before root_entry runs.  Until then, or if
 * that failed, a count of calls stands in, so timeout loops still end.
 * Under -icount the count is scaled to instructions (cycles.c).
 */
extern volatile const uint32_t *arm_global_timer;
extern uint32_t arm_cycles_scale;
uint64_t arm_cycles_fallback(void);

static inline uint64_t arch_cycles(void)
{
    volatile const uint32_t *gt = arm_global_timer;
    if (!gt)
        return arm_cycles_fallback();
    uint32_t hi, lo;
    do {
        hi = gt[1];
        lo = gt[0];
    } while (gt[1] != hi);      /* the low word carried between the two reads */
    return ((uint64_t)hi << 32 | lo) * arm_cycles_scale;
}

/*
 * Under -icount the global timer steps once per 10 instructions (10 ns of
 * virtual time at shift=0), so a single reading is exact only to 10.  The
 * benchmarks dither their loops (bench.h, counter_dither()) to read it at
 * every phase of the step.
 */
#define ARCH_COUNTER_STEP 10

/*
 * Run a fixed number of instructions plus exactly k, for k < ARCH_COUNTER_STEP:
 * ADD pc, pc, r << 2 reads pc as its own address + 8, the first of the
 * nine NOPs after the one it skips, and so lands on the last k of them.
 */
static inline void arch_extra_instructions(unsigned k)
{
    __asm__ volatile("add pc, pc, %0, lsl #2\n"
                     "nop\n"
                     "nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop"
                     : : "r"(9 - k));
}

/* Spin-wait hint. */
static inline void arch_relax(void)
{
    __asm__ volatile("yield" ::: "memory");
}

/* A full memory barrier for flags shared between threads on different cores. */
static inline void arch_mb(void)
{
    __asm__ volatile("dmb ish" ::: "memory");
}

/*
 * Between a driver's accesses to DMA memory (mapped uncached) and to its
 * device's registers, either way round: DSB, because a DMB orders only
 * within a shareability domain, and a device is outside the cores' one.
 */
static inline void arch_dma_barrier(void)
{
    __asm__ volatile("dsb" ::: "memory");
}

/* The register set of TCB Read/Write/CopyRegisters: r0..r12, sp, lr, pc, cpsr. */
#define ARCH_USER_REGS  17
#define ARCH_REG_R0     0
#define ARCH_REG_R6     6
#define ARCH_REG_STATUS 7               /* r7: where a system call's status comes back */
#define ARCH_REG_R8     8
#define ARCH_REG_R9     9
#define ARCH_REG_R10    10
#define ARCH_REG_R11    11
#define ARCH_REG_SP     13
#define ARCH_REG_LR     14
#define ARCH_REG_IP     15
#define ARCH_REG_FLAGS  16

/* The first argument register of the AAPCS, by purpose (generic tests use it). */
#define ARCH_REG_ARG0   ARCH_REG_R0

/* User mode, ARM state; the kernel keeps only the condition flags of what is written. */
#define ARCH_INITIAL_FLAGS 0x10

/* Start arguments of a new thread for _thread_start (crt0.S): registers no ABI role uses. */
#define ARCH_REG_START_FN     ARCH_REG_R8
#define ARCH_REG_START_ARG    ARCH_REG_R9
#define ARCH_REG_START_IPCBUF ARCH_REG_R10
#define ARCH_REG_START_SELF   ARCH_REG_R11

/* A value user code may leave in a general register and read back (TCB register tests). */
#define ARCH_REG_SCRATCH      ARCH_REG_R6

/*
 * Addresses for the address-space tests (test_vspace.c):
 *   ARCH_LARGE_PAGE_SIZE  an OBJ_LARGE_FRAME is a 1 MiB section
 *   ARCH_KERNEL_VADDR     TTBCR.N = 1: from 2 GiB up TTBR1 walks the
 *                         kernel's table, so this is USER_TOP itself
 *   ARCH_FAR_VADDR        user space far from the image (0x400000), the
 *                         heap and vaddr_alloc (from 0x20000000) and the
 *                         fixed thread addresses (0x30000000..): no L2
 *                         table covers it until a test maps one
 *   ARCH_FAR_VADDR_2      another such address under a different L1 entry
 *                         (each covers 1 MiB)
 */
#define ARCH_LARGE_PAGE_SIZE  (1UL << 20)
#define ARCH_KERNEL_VADDR     0x80000000UL
#define ARCH_FAR_VADDR        0x5e000000UL
#define ARCH_FAR_VADDR_2      (ARCH_FAR_VADDR + (16UL << 20))

/* Length of the system call instruction (SVC in ARM state): a fault may report the pc after it. */
#define ARCH_SYSCALL_INSN_BYTES 4

/*
 * Exception numbers in FAULT_USER_EXCEPTION messages (MR2): the vector
 * offset / 4 (kernel: arch/arm-imx6/include/arch/exception.h).
 *   ILLEGAL  undefined instruction (UDF)
 *   GENERAL  a data abort that is not a VM fault: an LDM from an unaligned
 *            address, which always takes an alignment fault
 *   DIVIDE   the A9 has no divide instruction and ARM has no divide-by-zero
 *            trap; UDIV is undefined on the A9, so "the divide faults" is an
 *            undefined-instruction exception here
 */
#define ARCH_EXC_ILLEGAL  1
#define ARCH_EXC_GENERAL  4
#define ARCH_EXC_DIVIDE   1

/* Fault triggers: this port's faults.S provides <fault_triggers.h>. */
#include <fault_triggers.h>

/* The entry point of new threads (crt0.S); see thread.c. */
void _thread_start(void);

#endif
