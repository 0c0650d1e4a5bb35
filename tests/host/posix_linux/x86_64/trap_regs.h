/*
 * x86_64 side of the trap's register check (posix_trap_regs.c): the
 * register file trap_regs.S loads and stores, how it is filled, what must
 * hold after the trap, and a personality body that overwrites every
 * register the System V ABI lets a C function change.
 */
#ifndef POSIX_TRAP_REGS_H
#define POSIX_TRAP_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP, R8, R9, R10, R11, R12, R13, R14, R15 };

struct trap_regs {
    uint64_t gp[16];        /* by the enum; rsp: the value at the call */
    uint8_t xmm[16][16];
    uint64_t rflags;
};

/* trap_regs.S addresses the fields by these offsets. */
_Static_assert(offsetof(struct trap_regs, gp) == 0, "gp at 0");
_Static_assert(offsetof(struct trap_regs, xmm) == 128, "xmm at 128");
_Static_assert(offsetof(struct trap_regs, rflags) == 384, "rflags at 384");

/* CF, ZF, SF, DF, OF and the always-set bit 1 */
#define TRAP_REGS_FLAGS 0xcc3UL
#define TRAP_REGS_FLAGS_MASK 0xcd5UL

void trap_regs_call(void);

static inline void fill_trap_regs(struct trap_regs *r, long number, int misalign)
{
    for (int i = 0; i < 16; i++)
        r->gp[i] = 0x0101010101010101ULL * (uint64_t)(i + 1) + (uint64_t)misalign;
    r->gp[RAX] = (uint64_t)number;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            r->xmm[i][j] = (uint8_t)(i * 16 + j + 1 + misalign);
    r->rflags = TRAP_REGS_FLAGS;
}

/* Nonzero, after printing each difference, when the trap broke its contract. */
static inline int compare_trap_regs(const struct trap_regs *before, const struct trap_regs *after,
                                    long result, const long received[7])
{
    static const char *const names[16] = { "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
                                           "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
    static const int arg_regs[7] = { RAX, RDI, RSI, RDX, R10, R8, R9 };
    int bad = 0;
    for (int i = 0; i < 16; i++) {
        if (i == RCX || i == R11)
            continue;
        uint64_t want = i == RAX ? (uint64_t)result : before->gp[i];
        if (after->gp[i] != want) {
            printf("%s: %#llx, want %#llx\n", names[i], (unsigned long long)after->gp[i],
                   (unsigned long long)want);
            bad = 1;
        }
    }
    for (int i = 0; i < 16; i++)
        if (memcmp(after->xmm[i], before->xmm[i], 16)) {
            printf("xmm%d changed\n", i);
            bad = 1;
        }
    if ((after->rflags & TRAP_REGS_FLAGS_MASK) != (before->rflags & TRAP_REGS_FLAGS_MASK)) {
        printf("rflags: %#llx, want %#llx\n", (unsigned long long)after->rflags,
               (unsigned long long)before->rflags);
        bad = 1;
    }
    for (int i = 0; i < 7; i++)
        if ((uint64_t)received[i] != before->gp[arg_regs[i]]) {
            printf("argument %d: %#lx, want %s\n", i, received[i], names[arg_regs[i]]);
            bad = 1;
        }
    return bad;
}

static inline void clobber_caller_saved(void)
{
    __asm__ volatile("mov $-1, %%rax\n\t"
                     "mov %%rax, %%rcx\n\t"
                     "mov %%rax, %%rdx\n\t"
                     "mov %%rax, %%rsi\n\t"
                     "mov %%rax, %%rdi\n\t"
                     "mov %%rax, %%r8\n\t"
                     "mov %%rax, %%r9\n\t"
                     "mov %%rax, %%r10\n\t"
                     "mov %%rax, %%r11\n\t"
                     "pcmpeqd %%xmm0, %%xmm0\n\t"
                     "pcmpeqd %%xmm1, %%xmm1\n\t"
                     "pcmpeqd %%xmm2, %%xmm2\n\t"
                     "pcmpeqd %%xmm3, %%xmm3\n\t"
                     "pcmpeqd %%xmm4, %%xmm4\n\t"
                     "pcmpeqd %%xmm5, %%xmm5\n\t"
                     "pcmpeqd %%xmm6, %%xmm6\n\t"
                     "pcmpeqd %%xmm7, %%xmm7\n\t"
                     "pcmpeqd %%xmm8, %%xmm8\n\t"
                     "pcmpeqd %%xmm9, %%xmm9\n\t"
                     "pcmpeqd %%xmm10, %%xmm10\n\t"
                     "pcmpeqd %%xmm11, %%xmm11\n\t"
                     "pcmpeqd %%xmm12, %%xmm12\n\t"
                     "pcmpeqd %%xmm13, %%xmm13\n\t"
                     "pcmpeqd %%xmm14, %%xmm14\n\t"
                     "pcmpeqd %%xmm15, %%xmm15\n\t"
                     "xor %%eax, %%eax"
                     :
                     :
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
                       "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
}

#endif
