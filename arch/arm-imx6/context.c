/*
 * Thread contexts (arm-imx6): the ABI register mapping (docs/arm-imx6.md),
 * the idle and fresh user contexts, and the way back to user mode.
 *
 *   r7   syscall number in, status out       r0   cptr in, badge out
 *   r1   message info                        r2..r5  MR0..MR3
 */
#include <arch/imx6.h>
#include <tcb.h>

/* Only the condition flags (N Z C V Q, GE) of a CPSR are the thread's to set. */
#define CPSR_USER_FLAGS 0xF80F0000u
#define CPSR_USER       (MODE_USR | PSR_F)          /* ARM state, IRQs on; FIQs are never used */
#define CPSR_IDLE       (MODE_SYS | PSR_F | PSR_A)  /* kernel mode (System), IRQs on */

static word_t *reg_slot(struct arch_context *ctx, enum abi_reg reg)
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

word_t arch_get_reg(const struct arch_context *ctx, enum abi_reg reg)
{
    return *reg_slot((struct arch_context *)ctx, reg);
}

void arch_set_reg(struct arch_context *ctx, enum abi_reg reg, word_t value)
{
    *reg_slot(ctx, reg) = value;
}

/* SVC is 4 bytes in ARM state, and the saved pc is the instruction after it. */
void arch_context_restart_syscall(struct arch_context *ctx)
{
    ctx->pc -= 4;
}

void arch_context_read_all(const struct arch_context *ctx, word_t *regs)
{
    memcpy(regs, ctx, sizeof(*ctx));
}

/* A thread may set any register and the flags, never its mode, state or masks. */
void arch_context_write_all(struct arch_context *ctx, const word_t *regs)
{
    memcpy(ctx, regs, sizeof(*ctx));
    ctx->cpsr = (ctx->cpsr & CPSR_USER_FLAGS) | CPSR_USER;
}

void arch_context_init_user(struct arch_context *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->cpsr = CPSR_USER;
}

/*
 * The idle loop needs no stack (vectors.S), so kernel_stack_top is unused:
 * an interrupt saves its context like a user thread's and it restarts at
 * the loop.
 */
void arch_context_init_idle(struct arch_context *ctx, word_t kernel_stack_top)
{
    (void)kernel_stack_top;
    memset(ctx, 0, sizeof(*ctx));
    ctx->pc = (word_t)arch_idle_loop;
    ctx->cpsr = CPSR_IDLE;
}

bool arch_context_is_idle(const struct arch_context *ctx)
{
    return (ctx->cpsr & MODE_MASK) == MODE_SYS;
}

_Noreturn void arch_return_to_user(struct tcb *thread)
{
    arch_restore_context(tcb_context(thread));
}
