/*
 * The way out of the kernel that every IPC pays, inline (kernel/arch.h):
 * loading an address space and returning to a user thread.
 *
 * CTX_SYSRET's invariant: a context whose SYSRET word is nonzero may leave
 * by SYSRET at once.  Its RIP came from SYSCALL (or is the SYSCALL
 * instruction's own address, arch_context_restart_syscall()), so it is
 * canonical and its CS is the user's; every other write of RIP clears the
 * word (arch_set_reg(ABI_IP), arch_context_write_all()).  The fast return
 * relies on it and so needs none of arch_return_to_user()'s checks.
 */
#ifndef ARCH_EXIT_H
#define ARCH_EXIT_H

#include <arch/cpu.h>
#include <arch/machine.h>
#include <arch/percore.h>

/* syscall.S and context.c */
_Noreturn void x86_exit_sysret(struct arch_context *ctx);
_Noreturn void x86_return_to_context(struct arch_context *ctx);

/* fpu.c: make FS base and CR0.TS what ctx needs, and the exit key say so. */
void x86_load_user_state(struct arch_context *ctx);

/* memory.c: the boot tables, which map only the kernel: the kernel-only space. */
extern uint64_t x86_boot_pml4[512];

static inline word_t arch_kernel_vspace_paddr(void)
{
    return arch_virt_to_phys(x86_boot_pml4);
}

/*
 * CR3 for an address space: its root, tagged with its ASID as the PCID
 * when this core runs with CR4.PCIDE (the per-core mask is 0xfff then,
 * else 0).  Each load also flushes that PCID (bit 63 clear), so no entry
 * survives an unmap that another core's shootdown missed; what PCIDs save
 * is the other spaces' entries.  Global kernel mappings stay (CR4.PGE).
 * The callers load only a space other than the loaded one (vspace_switch()
 * compares ASIDs), so there is no comparison with CR3 here.  The
 * kernel-only space is no special case: its root is the boot table and
 * its ASID 0, the PCID the boot tables have always run under.
 */
static inline __attribute__((always_inline)) void arch_vspace_load(word_t vspace_root_paddr, unsigned asid)
{
    word_t mask;

    __asm__("movq %%gs:%c1, %0" : "=r"(mask) : "i"(PERCORE_CR3_ASID_MASK));
    write_cr3(vspace_root_paddr | (asid & mask));
}

/*
 * arch_return_to_user() for a thread that is not the idle thread (the IPC
 * fastpath's partner).  One comparison decides whether the thread needs
 * anything of the core's user state changed (its TLS base loaded, CR0.TS
 * set or cleared): fpu.c says how the exit key makes that so.  When it
 * does, the general exit does it.
 */
static inline __attribute__((always_inline)) _Noreturn void arch_return_to_user_thread(struct arch_context *ctx)
{
    word_t exit_key;

    /* Volatile: the key changes under the kernel (fpu.c); read it here, after the lock release. */
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(exit_key) : "i"(PERCORE_EXIT_KEY));
    if (__builtin_expect(ctx->tls_base != exit_key, 0))
        x86_return_to_context(ctx);
    if (__builtin_expect(ctx->regs[CTX_SYSRET] != 0, 1)) {
        __asm__ volatile("movq %0, %%gs:%c1" : : "r"(ctx), "i"(PERCORE_CONTEXT) : "memory");
        x86_exit_sysret(ctx);
    }
    x86_return_to_context(ctx);
}

#endif
