/*
 * How many full-barrier instructions each kind of __atomic operation used in
 * lock/ costs on x86_64 (gcc 12, checked with -S).  Used only to count
 * barriers for LOCKSTATS; lock/armv7/barrier_cost.h is the ARM twin.
 *
 * x86 is TSO: plain MOV already gives acquire loads and release stores, so
 * they cost nothing.  Every LOCK-prefixed instruction (and XCHG with a
 * memory operand, implicitly locked) is a full barrier, whatever C11 order
 * was asked for.  A seq_cst fence is emitted as `lock orq $0,(%rsp)`.
 */
#ifndef LOCK_ARCH_BARRIER_COST_H
#define LOCK_ARCH_BARRIER_COST_H

#define LOCK_ARCH_BARRIERS_RMW_RELAXED   1   /* lock xadd */
#define LOCK_ARCH_BARRIERS_RMW_ACQ_REL   1   /* xchg */
#define LOCK_ARCH_BARRIERS_LOAD_ACQUIRE  0   /* mov */
#define LOCK_ARCH_BARRIERS_STORE_RELEASE 0   /* mov */
#define LOCK_ARCH_BARRIERS_FENCE_SEQ_CST 1   /* lock orq $0,(%rsp) */

#endif
