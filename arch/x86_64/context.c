/*
 * Thread contexts: the idle context, SYSCALL set-up, and the way back to
 * user mode.  The ABI register mapping (docs/x86_64.md) is <arch/abi_regs.h>.
 */
#include <abi/faults.h>
#include <arch/cpu.h>
#include <arch/x86.h>
#include <tcb.h>

#define VEC_GP 13

_Static_assert(offsetof(struct arch_context, regs) == 0, "entry code layout: the context's address is regs[0]'s");
_Static_assert(CTX_CS == CTX_RIP + 1 && CTX_RFLAGS == CTX_RIP + 2 && CTX_RSP == CTX_RIP + 3 &&
               CTX_SS == CTX_RIP + 4, "RIP..SS form an IRETQ frame");

/* The idle loop: STI's one-instruction shadow makes STI; HLT race-free. */
void x86_idle_loop(void);
__asm__(".text\n"
        ".global x86_idle_loop\n"
        "x86_idle_loop:\n"
        "1: sti\n"
        "   hlt\n"
        "   jmp 1b\n");

void syscall_init_core(void)
{
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
    /* SYSCALL: CS = STAR[47:32], SS = +8.  SYSRET: SS = STAR[63:48] + 8, CS = +16. */
    wrmsr(MSR_STAR, ((uint64_t)SEL_KERNEL_SS << 48) | ((uint64_t)SEL_KERNEL_CS << 32));
    wrmsr(MSR_LSTAR, (word_t)x86_syscall_entry);
    /* Enter with interrupts off, DF clear (C ABI), no single-step, no AC. */
    wrmsr(MSR_FMASK, RFLAGS_IF | RFLAGS_DF | RFLAGS_TF | RFLAGS_AC);
}

void x86_save_trap_frame(struct arch_context *ctx, const struct trap_frame *f)
{
    word_t *r = ctx->regs;
    r[CTX_RAX] = f->rax;
    r[CTX_RBX] = f->rbx;
    r[CTX_RCX] = f->rcx;
    r[CTX_RDX] = f->rdx;
    r[CTX_RSI] = f->rsi;
    r[CTX_RDI] = f->rdi;
    r[CTX_RBP] = f->rbp;
    r[CTX_R8] = f->r8;
    r[CTX_R9] = f->r9;
    r[CTX_R10] = f->r10;
    r[CTX_R11] = f->r11;
    r[CTX_R12] = f->r12;
    r[CTX_R13] = f->r13;
    r[CTX_R14] = f->r14;
    r[CTX_R15] = f->r15;
    r[CTX_RIP] = f->rip;
    r[CTX_CS] = f->cs;
    r[CTX_RFLAGS] = f->rflags;
    r[CTX_RSP] = f->rsp;
    r[CTX_SS] = f->ss;
    /* RCX and R11 are live: this thread must go back by IRETQ. */
    r[CTX_SYSRET] = 0;
}

_Noreturn void arch_return_to_user(struct tcb *thread)
{
    x86_return_to_context(tcb_context(thread));
}

_Noreturn void x86_return_to_context(struct arch_context *ctx)
{
    this_core()->current = ctx;

    if (ctx->regs[CTX_CS] == SEL_KERNEL_CS)
        x86_exit_iret(ctx);     /* the idle loop */
    /*
     * Neither SYSRET nor IRETQ may go to a non-canonical RIP: both would
     * fault in ring 0.  Deliver what the jump would have caused, a #GP in
     * the thread, instead.
     */
    if (!x86_canonical(ctx->regs[CTX_RIP]))
        x86_fault_on_fresh_stack(FAULT_USER_EXCEPTION, ctx->regs[CTX_RIP], VEC_GP, 0);
    if (ctx->tls_base != this_core()->exit_key)
        x86_load_user_state(ctx);
    if (ctx->regs[CTX_SYSRET])
        x86_exit_sysret(ctx);
    x86_exit_iret(ctx);
}

void arch_context_init_idle(struct arch_context *ctx, word_t kernel_stack_top)
{
    *ctx = (struct arch_context){ 0 };
    ctx->regs[CTX_RIP] = (word_t)x86_idle_loop;
    ctx->regs[CTX_CS] = SEL_KERNEL_CS;
    ctx->regs[CTX_RFLAGS] = RFLAGS_FIXED | RFLAGS_IF;
    ctx->regs[CTX_RSP] = kernel_stack_top;
    ctx->regs[CTX_SS] = SEL_KERNEL_SS;
}

bool arch_context_is_idle(const struct arch_context *ctx)
{
    return ctx->regs[CTX_CS] == SEL_KERNEL_CS;
}

void arch_context_init_user(struct arch_context *ctx)
{
    uint16_t fcw = FCW_DEFAULT;
    uint32_t mxcsr = MXCSR_DEFAULT;

    *ctx = (struct arch_context){ 0 };
    ctx->regs[CTX_CS] = SEL_USER_CS;
    ctx->regs[CTX_RFLAGS] = RFLAGS_FIXED | RFLAGS_IF;
    ctx->regs[CTX_SS] = SEL_USER_SS;
    /* FNINIT's state (tag word 0: every register empty) and the reset MXCSR. */
    memcpy(&ctx->fpu[FXSAVE_FCW], &fcw, sizeof(fcw));
    memcpy(&ctx->fpu[FXSAVE_MXCSR], &mxcsr, sizeof(mxcsr));
}

/* A TLS base becomes the FS base, which must be canonical (WRMSR faults otherwise). */
bool arch_tls_base_valid(word_t base)
{
    return x86_canonical(base);
}

/* SYSCALL is two bytes (0f 05); RCX/R11 need not be kept, so SYSRET still works. */
void arch_context_restart_syscall(struct arch_context *ctx)
{
    ctx->regs[CTX_RIP] -= 2;
}

/* TCB Read/WriteRegisters order (docs/x86_64.md). */
static const uint8_t user_reg_order[ARCH_USER_REGS] = {
    CTX_RIP, CTX_RSP, CTX_RFLAGS, CTX_RAX, CTX_RBX, CTX_RCX, CTX_RDX, CTX_RSI, CTX_RDI,
    CTX_RBP, CTX_R8, CTX_R9, CTX_R10, CTX_R11, CTX_R12, CTX_R13, CTX_R14, CTX_R15,
};

void arch_context_read_all(const struct arch_context *ctx, word_t *regs)
{
    for (unsigned i = 0; i < ARCH_USER_REGS; i++)
        regs[i] = ctx->regs[user_reg_order[i]];
}

void arch_context_write_all(struct arch_context *ctx, const word_t *regs)
{
    for (unsigned i = 0; i < ARCH_USER_REGS; i++)
        ctx->regs[user_reg_order[i]] = regs[i];
    /* A user may set only the arithmetic, direction and trap flags; IF stays on, IOPL 0. */
    ctx->regs[CTX_RFLAGS] = (ctx->regs[CTX_RFLAGS] & RFLAGS_USER) | RFLAGS_FIXED | RFLAGS_IF;
    /* RCX and R11 now hold values the thread must see: leave by IRETQ. */
    ctx->regs[CTX_SYSRET] = 0;
}
