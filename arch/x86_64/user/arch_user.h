/*
 * Architecture-specific helpers for user code (x86_64) beyond the system
 * call primitive: the cycle counter, a spin-wait hint, the layout of the
 * register set of TCB Read/WriteRegisters, and the instructions the test
 * suite uses to raise each kind of fault.  docs/userland.md lists what a
 * port must provide here.
 */
#ifndef ARCH_USER_H
#define ARCH_USER_H

#include <abi/types.h>

#define ARCH_NAME_USER "x86_64"

/* The cycle counter.  Under QEMU -icount the TSC counts instructions. */
static inline uint64_t arch_cycles(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Under -icount the TSC counts single instructions: nothing to dither (bench.h). */
#define ARCH_COUNTER_STEP 1

static inline void arch_extra_instructions(unsigned k)
{
    (void)k;
}

/* Spin-wait hint. */
static inline void arch_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

/* A full memory barrier for flags shared between threads on different cores. */
static inline void arch_mb(void)
{
    __asm__ volatile("mfence" ::: "memory");
}

/*
 * Between a driver's accesses to DMA memory and to its device's registers,
 * either way round.  x86 DMA is cache-coherent and keeps stores in order for
 * RAM and uncached MMIO alike; the fence also keeps a later load from
 * passing an earlier store.
 */
static inline void arch_dma_barrier(void)
{
    __asm__ volatile("mfence" ::: "memory");
}

/*
 * The register set of TCB Read/Write/CopyRegisters, in the order docs/x86_64.md
 * gives: rip, rsp, rflags, rax, rbx, rcx, rdx, rsi, rdi, rbp, r8 .. r15.
 * Only the indices user code needs are named.
 */
#define ARCH_USER_REGS  18
#define ARCH_REG_IP     0
#define ARCH_REG_SP     1
#define ARCH_REG_FLAGS  2
#define ARCH_REG_RAX    3
#define ARCH_REG_STATUS ARCH_REG_RAX    /* where a system call's status comes back */
#define ARCH_REG_RBX    4
#define ARCH_REG_RCX    5
#define ARCH_REG_RDX    6
#define ARCH_REG_RSI    7
#define ARCH_REG_RDI    8
#define ARCH_REG_RBP    9
#define ARCH_REG_R8     10
#define ARCH_REG_R12    14
#define ARCH_REG_R13    15
#define ARCH_REG_R14    16
#define ARCH_REG_R15    17

/* The first argument register of the C calling convention, by purpose (generic tests use it). */
#define ARCH_REG_ARG0   ARCH_REG_RDI

/* The flags a fresh thread gets: interrupts on (bit 9) and the reserved bit 1. */
#define ARCH_INITIAL_FLAGS 0x202

/*
 * Registers that carry the start arguments of a new thread into
 * _thread_start (crt0.S): callee-saved ones, which neither SYSRET nor the
 * C calling convention touches.
 */
#define ARCH_REG_START_FN     ARCH_REG_R12
#define ARCH_REG_START_ARG    ARCH_REG_R13
#define ARCH_REG_START_IPCBUF ARCH_REG_R14
#define ARCH_REG_START_SELF   ARCH_REG_RBX

/* A value user code may leave in a general register and read back (TCB register tests). */
#define ARCH_REG_SCRATCH      ARCH_REG_RBP

/*
 * Addresses for the address-space tests (test_vspace.c), which must not
 * assume a word size:
 *   ARCH_LARGE_PAGE_SIZE  the size of an OBJ_LARGE_FRAME
 *   ARCH_KERNEL_VADDR     an address in the kernel's half (above USER_TOP)
 *   ARCH_FAR_VADDR        user space far from the image, heap, stacks and
 *                         the fixed thread addresses: no table below the
 *                         root (PML4) covers it until a test maps one
 *   ARCH_FAR_VADDR_2      another such address under different tables
 *                         (64 GiB further: another page directory)
 */
#define ARCH_LARGE_PAGE_SIZE  (2UL << 20)
#define ARCH_KERNEL_VADDR     0xffff800000000000UL
#define ARCH_FAR_VADDR        0x500000000000UL
#define ARCH_FAR_VADDR_2      (ARCH_FAR_VADDR + (64UL << 30))

/* Length of the system call instruction (SYSCALL, 0f 05): a fault may report the ip after it. */
#define ARCH_SYSCALL_INSN_BYTES 2

/* Exception numbers in FAULT_USER_EXCEPTION messages (MR2). */
#define ARCH_EXC_DIVIDE   0
#define ARCH_EXC_ILLEGAL  6
#define ARCH_EXC_GENERAL  13

/* Fault triggers: this port's faults.S provides <fault_triggers.h>. */
#include <fault_triggers.h>

/* The entry point of new threads (crt0.S); see thread.c. */
void _thread_start(void);

#endif
