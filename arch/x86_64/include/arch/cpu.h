/*
 * x86_64 instructions and registers used by the port (not by generic code).
 */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <abi/types.h>

#define MSR_APIC_BASE       0x1b
#define MSR_EFER            0xc0000080
#define MSR_STAR            0xc0000081
#define MSR_LSTAR           0xc0000082
#define MSR_FMASK           0xc0000084
#define MSR_FS_BASE         0xc0000100
#define MSR_GS_BASE         0xc0000101
#define MSR_KERNEL_GS_BASE  0xc0000102

#define EFER_SCE    (1u << 0)
#define EFER_LME    (1u << 8)
#define EFER_NXE    (1u << 11)

#define CR0_PE      (1ul << 0)
#define CR0_MP      (1ul << 1)
#define CR0_EM      (1ul << 2)
#define CR0_TS      (1ul << 3)
#define CR0_NE      (1ul << 5)
#define CR0_WP      (1ul << 16)
#define CR0_PG      (1ul << 31)

#define CR4_TSD     (1ul << 2)
#define CR4_PAE     (1ul << 5)
#define CR4_PGE     (1ul << 7)
#define CR4_OSFXSR  (1ul << 9)
#define CR4_OSXMMEXCPT (1ul << 10)
#define CR4_PCIDE   (1ul << 17)

#define RFLAGS_CF   (1ul << 0)
#define RFLAGS_FIXED (1ul << 1)     /* reads as 1 */
#define RFLAGS_PF   (1ul << 2)
#define RFLAGS_AF   (1ul << 4)
#define RFLAGS_ZF   (1ul << 6)
#define RFLAGS_SF   (1ul << 7)
#define RFLAGS_TF   (1ul << 8)
#define RFLAGS_IF   (1ul << 9)
#define RFLAGS_DF   (1ul << 10)
#define RFLAGS_OF   (1ul << 11)
#define RFLAGS_AC   (1ul << 18)
/* Flags a user may set through TCB WriteRegisters: arithmetic, direction and trap. */
#define RFLAGS_USER (RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | \
                     RFLAGS_TF | RFLAGS_DF | RFLAGS_OF)

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

struct cpuid_regs {
    uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
    struct cpuid_regs r;
    __asm__ volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                     : "a"(leaf), "c"(subleaf));
    return r;
}

#define DEFINE_CR(n)                                                        \
    static inline word_t read_cr##n(void)                                   \
    {                                                                       \
        word_t v;                                                           \
        __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));                   \
        return v;                                                           \
    }                                                                       \
    static inline void write_cr##n(word_t v)                                \
    {                                                                       \
        __asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory");          \
    }
DEFINE_CR(0)
DEFINE_CR(2)
DEFINE_CR(3)
DEFINE_CR(4)
#undef DEFINE_CR

/* Whether v is a canonical address (bits 63..47 all equal): what RIP, FS base and GS base must be. */
static inline bool x86_canonical(word_t v)
{
    return (word_t)((int64_t)(v << 16) >> 16) == v;
}

static inline void x86_pause(void)
{
    __asm__ volatile("pause" ::: "memory");
}

static inline void invlpg(word_t vaddr)
{
    __asm__ volatile("invlpg (%0)" : : "r"(vaddr) : "memory");
}

/* MMIO accessors: volatile so that each access happens once, in order. */
static inline uint32_t mmio_read32(word_t addr)
{
    return *(volatile uint32_t *)addr;
}

static inline void mmio_write32(word_t addr, uint32_t v)
{
    *(volatile uint32_t *)addr = v;
}

#endif
