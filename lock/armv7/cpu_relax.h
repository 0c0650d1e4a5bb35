/*
 * ARMv7-A (Cortex-A9 MPCore) spin-wait hint.  Selected by -Ilock/armv7; the
 * x86_64 twin is lock/x86_64/cpu_relax.h.
 *
 * YIELD is a hint only (a NOP on the A9 pipeline, but the architected way
 * to mark a spin loop).  WFE/SEV are deliberately not used: waiting cores
 * must keep calling the wait hook to serve IPIs, and WFE would park them
 * until an event that the lock release does not send.
 *
 * The ordering itself comes from the __atomic builtins: with
 * -mcpu=cortex-a9 -marm, gcc 12 emits LDREX/STREX for read-modify-writes
 * and `dmb ish` for acquire, release and seq_cst orderings (see
 * barrier_cost.h).  No hand-written DMB is needed anywhere in lock/.
 */
#ifndef LOCK_ARCH_CPU_RELAX_H
#define LOCK_ARCH_CPU_RELAX_H

static inline void cpu_relax(void)
{
    __asm__ volatile("yield" ::: "memory");
}

#endif
