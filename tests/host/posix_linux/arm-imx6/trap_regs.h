/*
 * arm side of the trap's register check (posix_trap_regs.c): the register
 * file trap_regs.S loads and stores, how it is filled, what must hold
 * after the trap, and a personality body that overwrites every register
 * the AAPCS lets a C function change.
 */
#ifndef POSIX_TRAP_REGS_H
#define POSIX_TRAP_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { R0, R7 = 7, SP = 13, LR = 14 };

struct trap_regs {
    uint32_t r[16];         /* r0-r15; sp: the value at the call; lr: the return address */
    uint32_t apsr;
};

/* trap_regs.S addresses the fields by these offsets. */
_Static_assert(offsetof(struct trap_regs, r) == 0, "r at 0");
_Static_assert(offsetof(struct trap_regs, apsr) == 64, "apsr at 64");

/* N, Z, V and Q set, C clear */
#define TRAP_REGS_FLAGS 0xd8000000U
#define TRAP_REGS_FLAGS_MASK 0xf8000000U

void trap_regs_call(void);
extern const char trap_regs_return[];

static inline void fill_trap_regs(struct trap_regs *r, long number, int misalign)
{
    for (int i = 0; i < 16; i++)
        r->r[i] = 0x01010101U * (uint32_t)(i + 1) + (uint32_t)misalign;
    r->r[R7] = (uint32_t)number;
    r->apsr = TRAP_REGS_FLAGS;
}

/* Nonzero, after printing each difference, when the trap broke its contract. */
static inline int compare_trap_regs(const struct trap_regs *before, const struct trap_regs *after,
                                    long result, const long received[7])
{
    static const int arg_regs[7] = { R7, 0, 1, 2, 3, 4, 5 };
    int bad = 0;
    for (int i = 0; i < 15; i++) {
        uint32_t want = i == R0 ? (uint32_t)result
                      : i == LR ? (uint32_t)(uintptr_t)trap_regs_return : before->r[i];
        if (after->r[i] != want) {
            printf("r%d: %#x, want %#x\n", i, (unsigned)after->r[i], (unsigned)want);
            bad = 1;
        }
    }
    if ((after->apsr & TRAP_REGS_FLAGS_MASK) != (before->apsr & TRAP_REGS_FLAGS_MASK)) {
        printf("apsr: %#x, want %#x\n", (unsigned)after->apsr, (unsigned)before->apsr);
        bad = 1;
    }
    for (int i = 0; i < 7; i++)
        if ((uint32_t)received[i] != before->r[arg_regs[i]]) {
            printf("argument %d: %#lx, want r%d\n", i, (unsigned long)received[i], arg_regs[i]);
            bad = 1;
        }
    return bad;
}

static inline void clobber_caller_saved(void)
{
    __asm__ volatile("mvn r0, #0\n\t"
                     "mvn r1, #0\n\t"
                     "mvn r2, #0\n\t"
                     "mvn r3, #0\n\t"
                     "mvn r12, #0\n\t"
                     "mvn lr, #0\n\t"
                     "msr APSR_nzcvq, #0"
                     :
                     :
                     : "r0", "r1", "r2", "r3", "r12", "lr", "cc", "memory");
}

#endif
