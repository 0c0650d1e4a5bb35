/*
 * Thread contexts (arm-imx6): the idle and fresh user contexts, and the way
 * back to user mode.  The ABI register mapping is <arch/abi_regs.h>.
 */
#include <arch/imx6.h>
#include <tcb.h>

/* Only the condition flags (N Z C V Q, GE) of a CPSR are the thread's to set. */
#define CPSR_USER_FLAGS 0xF80F0000u
#define CPSR_USER       (MODE_USR | PSR_F)          /* ARM state, IRQs on; FIQs are never used */
#define CPSR_IDLE       (MODE_SYS | PSR_F | PSR_A)  /* kernel mode (System), IRQs on */

/* SVC is 4 bytes in ARM state, and the saved pc is the instruction after it. */
void arch_context_restart_syscall(struct arch_context *ctx)
{
    ctx->pc -= 4;
}

void arch_context_read_all(const struct arch_context *ctx, word_t *regs)
{
    memcpy(regs, ctx, CTX_SIZE);
}

/* A thread may set any register and the flags, never its mode, state or masks. */
void arch_context_write_all(struct arch_context *ctx, const word_t *regs)
{
    memcpy(ctx, regs, CTX_SIZE);
    ctx->cpsr = (ctx->cpsr & CPSR_USER_FLAGS) | CPSR_USER;
}

/* TPIDRURO takes any word: a pointer or whatever else the thread keeps there. */
bool arch_tls_base_valid(word_t base)
{
    (void)base;
    return true;
}

/* No register is switched lazily: every exit loads the whole user state. */
const struct arch_context *arch_core_held_context(unsigned core)
{
    (void)core;
    return NULL;
}

void arch_core_release_context(struct arch_context *ctx)
{
    (void)ctx;
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

/* arch_return_to_user() is arch_restore_context() (vectors.S). */
_Static_assert(offsetof(struct tcb, context) == 0, "a TCB's address is its context's");
_Static_assert(offsetof(struct arch_context, tls_base) == CTX_TLS_BASE, "vectors.S loads TPIDRURO from here");
