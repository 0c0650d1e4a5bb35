/*
 * x86_64 spin-wait hint.  Selected by -Ilock/x86_64; the ARMv7 twin is
 * lock/armv7/cpu_relax.h.
 *
 * PAUSE tells the core it is in a spin loop: it avoids the memory-order
 * machine clear when the awaited line finally changes and lets the sibling
 * hyper-thread run.  It is not a barrier; the "memory" clobber only stops
 * the compiler from caching the polled word in a register across it.
 */
#ifndef LOCK_ARCH_CPU_RELAX_H
#define LOCK_ARCH_CPU_RELAX_H

static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

#endif
