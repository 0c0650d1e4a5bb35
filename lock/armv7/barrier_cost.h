/*
 * How many `dmb ish` instructions each kind of __atomic operation used in
 * lock/ costs on ARMv7-A (arm-none-eabi-gcc 12, -mcpu=cortex-a9 -marm,
 * checked with -S).  Used only to count barriers for LOCKSTATS, because
 * these barriers are most of the locking overhead the paper measured on the
 * Sabre Lite (6 to 19 cycles each).
 *
 *   relaxed RMW        ldrex/strex loop                 0
 *   acq_rel RMW        dmb; ldrex/strex loop; dmb       2
 *   acquire load       ldr; dmb                         1
 *   release store      dmb; str                         1
 *   seq_cst fence      dmb                              1
 */
#ifndef LOCK_ARCH_BARRIER_COST_H
#define LOCK_ARCH_BARRIER_COST_H

#define LOCK_ARCH_BARRIERS_RMW_RELAXED   0
#define LOCK_ARCH_BARRIERS_RMW_ACQ_REL   2
#define LOCK_ARCH_BARRIERS_LOAD_ACQUIRE  1
#define LOCK_ARCH_BARRIERS_STORE_RELEASE 1
#define LOCK_ARCH_BARRIERS_FENCE_SEQ_CST 1

#endif
