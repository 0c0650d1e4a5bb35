/*
 * Definitions shared by every lock algorithm in lock/.
 *
 * Freestanding: only compiler-provided headers.  Nothing here depends on the
 * kernel variant or the architecture.
 */
#ifndef LOCK_LOCKDEFS_H
#define LOCK_LOCKDEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Coherence granule on every target (Xeon E5 v3, Cortex-A9 L1 and PL310 L2).
 * Per-core lock state is padded to it so that one core's spinning never
 * shares a line with another core's.
 */
#define LOCK_CACHE_LINE 64

/*
 * The largest core count the per-core arrays of the kernel glue are sized
 * for: the kernel's NCPUS (passed by the top-level Makefile), else 8, unless
 * -DLOCK_MAX_CORES says otherwise.  kernel_lock_init() panics above it.
 */
#ifndef LOCK_MAX_CORES
#ifdef NCPUS
#define LOCK_MAX_CORES NCPUS
#else
#define LOCK_MAX_CORES 8
#endif
#endif
_Static_assert(LOCK_MAX_CORES >= 1 && LOCK_MAX_CORES <= 1024,
               "LOCK_MAX_CORES out of the range the lock layer is sized for");

/*
 * Called on every iteration of every spin loop in lock/, outside any
 * critical section and outside any hardware transaction, so that a waiting
 * core still serves cross-core requests (TLB shoot-downs, "go idle" IPIs)
 * that the lock holder may itself be waiting for.
 */
typedef void (*lock_wait_fn)(void);

/*
 * The per-entry fast paths (acquire, release, the read side, the object
 * locks): always inline.  GCC otherwise leaves some out of line when they
 * are used twice in a file (the fastpath and the slow path), and a call
 * layer costs as many instructions as an uncontended CLH acquire.
 */
#define LOCK_INLINE inline __attribute__((always_inline))

#endif
