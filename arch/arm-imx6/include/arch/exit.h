/*
 * The way out of the kernel that every IPC pays (kernel/arch.h): loading an
 * address space (mmu.c) and returning to a user thread.
 */
#ifndef ARCH_EXIT_H
#define ARCH_EXIT_H

#include <arch/exception.h>
#include <arch/machine.h>

void arch_vspace_load(word_t vspace_root_paddr, unsigned asid);

/* arch_return_to_user() for a thread that is not the idle thread (the IPC fastpath's partner). */
static inline __attribute__((always_inline)) _Noreturn void arch_return_to_user_thread(struct arch_context *ctx)
{
    arch_restore_context(ctx);
}

#endif
