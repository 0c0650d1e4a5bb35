/*
 * x86_64 machine definitions required by kernel/arch.h.
 *
 * Virtual memory layout (docs/x86_64.md):
 *   0x0000000000000000 .. USER_TOP          user space (4-level paging, 47 bits)
 *   0xffff800000000000 .. +512 GiB          direct map of physical memory (2 MiB pages)
 *   0xffffffff80000000 .. +1 GiB            the kernel image (-mcmodel=kernel), physical 0 .. 1 GiB
 */
#ifndef ARCH_MACHINE_H
#define ARCH_MACHINE_H

#define PAGE_BITS           12
#define LARGE_PAGE_BITS     21
#define CACHE_LINE_SIZE     64
#define ARCH_MSG_REGISTERS  4
#define ARCH_USER_REGS      18

/* User space ends below the canonical hole; the last page is left unmapped so
 * that no user mapping ends at the non-canonical boundary (SYSRET erratum). */
#define USER_TOP            0x00007ffffffff000UL

#define KERNEL_VMA          0xffffffff80000000UL
#define DIRECT_MAP_BASE     0xffff800000000000UL
#define DIRECT_MAP_SIZE     (512UL << 30)

/* Each core's kernel stack: every kernel entry starts at its top (event-driven kernel). */
#define KERNEL_STACK_SIZE   16384

/* Segment selectors (arch/x86_64/gdt.c).  The order kernel CS, kernel SS,
 * user SS, user CS is what SYSCALL/SYSRET require of STAR. */
#define SEL_KERNEL_CS   0x08
#define SEL_KERNEL_SS   0x10
#define SEL_USER_SS     0x1b    /* 0x18 | RPL 3 */
#define SEL_USER_CS     0x23    /* 0x20 | RPL 3 */
#define SEL_TSS         0x28    /* 16-byte descriptor: slots 5 and 6 */

/* Word offsets into struct arch_context, shared with the entry code. */
#define CTX_RAX     0
#define CTX_RBX     1
#define CTX_RCX     2
#define CTX_RDX     3
#define CTX_RSI     4
#define CTX_RDI     5
#define CTX_RBP     6
#define CTX_R8      7
#define CTX_R9      8
#define CTX_R10     9
#define CTX_R11     10
#define CTX_R12     11
#define CTX_R13     12
#define CTX_R14     13
#define CTX_R15     14
/* RIP, CS, RFLAGS, RSP, SS are in IRETQ frame order so the exit path can IRETQ
 * straight from the context. */
#define CTX_RIP     15
#define CTX_CS      16
#define CTX_RFLAGS  17
#define CTX_RSP     18
#define CTX_SS      19
#define CTX_SYSRET  20      /* nonzero: entered by SYSCALL, rcx/r11 are dead, leave by SYSRET
                               (and RIP is canonical: <arch/exit.h>) */
#define CTX_WORDS   21

/* Per-core data starts with these fields; the rest is in <arch/percore.h>. */
#define PERCORE_SELF        0
#define PERCORE_CONTEXT     8
#define PERCORE_KSTACK      16
#define PERCORE_USER_RSP    24
#define PERCORE_CORE_ID     32
#define PERCORE_LOCK_DATA   64

#ifndef __ASSEMBLY__

#include <stdbool.h>
#include <stdint.h>
#include <abi/types.h>

/* FXSAVE's image of the x87, MMX and SSE registers: 512 bytes, 16-byte aligned. */
#define FXSAVE_BYTES        512
#define FXSAVE_FCW          0       /* x87 control word (uint16_t) */
#define FXSAVE_MXCSR        24      /* SSE control and status (uint32_t) */
#define FCW_DEFAULT         0x037f  /* what FNINIT loads: every x87 exception masked, 64-bit precision */
#define MXCSR_DEFAULT       0x1f80  /* the reset value: every SSE exception masked, round to nearest */

/*
 * A thread's saved user state: the general registers the entry code saves
 * (regs[], by CTX_* index), the TLS base the exit loads into FS base, and
 * the x87/SSE registers, which the kernel switches lazily (arch/x86_64/fpu.c):
 * they are saved here only when another thread on the core needs the FPU,
 * or when the thread leaves the core for good.  `fpu` starts as the state
 * FNINIT and the reset MXCSR give (arch_context_init_user()).
 */
struct arch_context {
    word_t regs[CTX_WORDS];
    word_t tls_base;
    uint8_t fpu[FXSAVE_BYTES] __attribute__((aligned(16)));
};

static inline unsigned arch_core_id(void)
{
    unsigned id;
    /*
     * GS base points at this core's struct x86_core while in the kernel,
     * and a kernel entry never changes cores: the value is constant, so the
     * read is not volatile and the compiler may reuse it within a function.
     */
    __asm__("movl %%gs:%c1, %0" : "=r"(id) : "i"(PERCORE_CORE_ID));
    return id;
}

/*
 * The lock layer's per-core pointer (lock_core_data(), kernel/lock_env.h),
 * one load from the per-core block; constant, like the core number.
 */
static inline void *arch_lock_data(void)
{
    void *p;
    __asm__("movq %%gs:%c1, %0" : "=r"(p) : "i"(PERCORE_LOCK_DATA));
    return p;
}

/* Boot: record core's lock_core_data() before any core takes the kernel lock. */
void arch_set_lock_data(unsigned core, void *data);

static inline word_t arch_cycles(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((word_t)hi << 32) | lo;
}

static inline void *arch_phys_to_virt(word_t paddr)
{
    return (void *)(paddr + DIRECT_MAP_BASE);
}

/* Both the direct map and the kernel image window translate by subtraction. */
static inline word_t arch_virt_to_phys(const void *vaddr)
{
    word_t v = (word_t)vaddr;
    return v >= KERNEL_VMA ? v - KERNEL_VMA : v - DIRECT_MAP_BASE;
}

#endif /* !__ASSEMBLY__ */
#endif
