/*
 * The ABI registers of kernel/arch.h in a saved arm-imx6 context
 * (docs/arm-imx6.md): inline, so that a constant `reg` costs one load or
 * store.
 *
 *   r7   syscall number in, status out       r0   cptr in, badge out
 *   r1   message info                        r2..r5  MR0..MR3
 */
#ifndef ARCH_ABI_REGS_H
#define ARCH_ABI_REGS_H

static inline word_t *arch_reg_slot(struct arch_context *ctx, enum abi_reg reg)
{
    switch (reg) {
    case ABI_SYSNO:
    case ABI_STATUS:  return &ctx->r[7];
    case ABI_CPTR:
    case ABI_BADGE:   return &ctx->r[0];
    case ABI_MSGINFO: return &ctx->r[1];
    case ABI_MR0:     return &ctx->r[2];
    case ABI_MR1:     return &ctx->r[3];
    case ABI_MR2:     return &ctx->r[4];
    case ABI_MR3:     return &ctx->r[5];
    case ABI_IP:      return &ctx->pc;
    case ABI_SP:      return &ctx->sp;
    }
    return &ctx->r[12];     /* not reached: every enum value is listed */
}

static inline word_t arch_get_reg(const struct arch_context *ctx, enum abi_reg reg)
{
    return *arch_reg_slot((struct arch_context *)ctx, reg);
}

static inline void arch_set_reg(struct arch_context *ctx, enum abi_reg reg, word_t value)
{
    *arch_reg_slot(ctx, reg) = value;
}

#endif
