/*
 * The user state a core loads on the way out to a thread besides its
 * general registers: the FS base (the thread's TLS base) and the x87/SSE
 * registers, which are switched lazily, as seL4 does.
 *
 * Lazy FPU.  Each core's FPU holds the registers of one thread at most,
 * its owner (struct x86_core.fpu_owner); the others' are in their contexts.
 * The invariant: CR0.TS is clear exactly while this core runs its owner in
 * user mode (struct x86_core.ts_clear mirrors the bit), so any other
 * thread's first x87/SSE instruction raises #NM, and x86_fpu_trap() then
 * saves the owner's registers into the owner's context, loads the running
 * thread's and makes it the owner.  A thread that never touches the FPU
 * never costs a save or a restore.  An owner that is deleted, or moves to
 * another core, gives its registers back first (arch_core_release_context(),
 * by a request to its core), so fpu_owner never points at a freed context,
 * and a thread's registers are never in two places.
 *
 * The exit key.  Every exit to a user thread compares the thread's TLS base
 * with the core's exit key (struct x86_core.exit_key), and only when they
 * differ goes through x86_load_user_state():
 *   - while no thread owns this core's FPU, the key is the FS base the core
 *     last wrote, so the threads that do not use the FPU pay one compare,
 *     and TS, set, is already right for them;
 *   - while a thread owns it, the key is EXIT_KEY_FPU_OWNED, which no TLS
 *     base equals (TLS bases are canonical), so every exit sets TS (or
 *     clears it for the owner) as the invariant needs.
 *
 * The FS base is what the kernel last wrote only while user code leaves it
 * alone: a thread that loads a segment selector into FS sets the base from
 * the descriptor (0) without the kernel knowing, and a later thread on the
 * core with the same TLS base then runs with that base too (docs/x86_64.md).
 *
 * Everything here runs on the core it concerns, with interrupts off.
 * x86_fpu_trap() takes no lock: it touches only this core's fields and the
 * contexts of its running thread and of its owner, which runs on no core
 * (a thread runs on its own core only), and the one other core that may
 * touch the owner's context, one deleting or moving that thread, asks this
 * core through its mailbox and waits (kernel/core.c).
 */
#include <arch/cpu.h>
#include <arch/x86.h>

/* Non-canonical, so that no TLS base (arch_tls_base_valid()) equals it. */
#define EXIT_KEY_FPU_OWNED (1ul << 63)

_Static_assert(offsetof(struct arch_context, fpu) % 16 == 0, "FXSAVE needs a 16-byte aligned area");

static void fxsave(struct arch_context *ctx)
{
    __asm__ volatile("fxsave64 %0" : "=m"(*(uint8_t(*)[FXSAVE_BYTES])ctx->fpu));
}

static void fxrstor(const struct arch_context *ctx)
{
    __asm__ volatile("fxrstor64 %0" : : "m"(*(const uint8_t(*)[FXSAVE_BYTES])ctx->fpu));
}

static void clts(void)
{
    __asm__ volatile("clts" : : : "memory");
}

static void set_ts(void)
{
    write_cr0(read_cr0() | CR0_TS);
}

static void update_exit_key(struct x86_core *pc)
{
    pc->exit_key = pc->fpu_owner ? EXIT_KEY_FPU_OWNED : pc->fs_base;
}

/* Relaxed: arch_core_held_context() says why other cores may read it so. */
static void set_owner(struct x86_core *pc, struct arch_context *ctx)
{
    __atomic_store_n(&pc->fpu_owner, ctx, __ATOMIC_RELAXED);
    update_exit_key(pc);
}

void x86_load_user_state(struct arch_context *ctx)
{
    struct x86_core *pc = this_core();
    bool owner = pc->fpu_owner == ctx;
    word_t base = ctx->tls_base;

    if (owner != pc->ts_clear) {
        if (owner)
            clts();
        else
            set_ts();
        pc->ts_clear = owner;
    }
    if (base != pc->fs_base) {
        wrmsr(MSR_FS_BASE, base);
        pc->fs_base = base;
    }
    update_exit_key(pc);
}

/*
 * #NM from user mode: the running thread used the FPU with TS set, so it
 * is not the owner.  The thread resumes at the same instruction.
 */
void x86_fpu_trap(void)
{
    struct x86_core *pc = this_core();
    struct arch_context *ctx = pc->current;

    clts();
    pc->ts_clear = true;
    if (pc->fpu_owner)
        fxsave(pc->fpu_owner);
    fxrstor(ctx);
    set_owner(pc, ctx);
}

/*
 * Another core reads fpu_owner here only with the kernel lock held
 * exclusively (kernel/arch.h).  For a thread T that runs nowhere, this
 * core's writes that made T the owner are then ordered before the read:
 * each happened while T ran here, which ended by a kernel entry whose lock
 * release, or acknowledgement of a request to leave T (kernel/core.c), the
 * reader acquired since.  A later write can only replace T by the thread
 * running here, and a request the reader sends about T then finds nothing
 * to do.
 */
const struct arch_context *arch_core_held_context(unsigned core)
{
    return __atomic_load_n(&x86_cores[core].fpu_owner, __ATOMIC_RELAXED);
}

void arch_core_release_context(struct arch_context *ctx)
{
    struct x86_core *pc = this_core();

    if (pc->fpu_owner != ctx)
        return;
    if (!pc->ts_clear)
        clts();
    fxsave(ctx);
    set_ts();
    pc->ts_clear = false;
    set_owner(pc, NULL);
}
