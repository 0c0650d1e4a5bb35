/*
 * The ABI registers of kernel/arch.h in a saved x86_64 context
 * (docs/x86_64.md): inline, so that a constant `reg` costs one move.
 */
#ifndef ARCH_ABI_REGS_H
#define ARCH_ABI_REGS_H

static inline unsigned arch_abi_slot(enum abi_reg reg)
{
    switch (reg) {
    case ABI_SYSNO:
    case ABI_STATUS:
        return CTX_RAX;
    case ABI_CPTR:
    case ABI_BADGE:
        return CTX_RDI;
    case ABI_MSGINFO:
        return CTX_RSI;
    case ABI_MR0:
        return CTX_R10;
    case ABI_MR1:
        return CTX_R8;
    case ABI_MR2:
        return CTX_R9;
    case ABI_MR3:
        return CTX_R15;
    case ABI_IP:
        return CTX_RIP;
    case ABI_SP:
        return CTX_RSP;
    }
    return CTX_RAX;     /* not reached: every enum value is listed */
}

static inline word_t arch_get_reg(const struct arch_context *ctx, enum abi_reg reg)
{
    return ctx->regs[arch_abi_slot(reg)];
}

/* A new RIP may be anything: the thread then leaves by IRETQ, whose checks
 * arch_return_to_user() makes (CTX_SYSRET's invariant, <arch/exit.h>). */
static inline void arch_set_reg(struct arch_context *ctx, enum abi_reg reg, word_t value)
{
    ctx->regs[arch_abi_slot(reg)] = value;
    if (reg == ABI_IP)
        ctx->regs[CTX_SYSRET] = 0;
}

#endif
