/*
 * Preemption points of long operations (kernel/preemption.c).
 *
 * Interrupts are off in the kernel, so a Retype that clears megabytes or a
 * Revoke or Delete of thousands of objects polls for a pending interrupt
 * between units of work.  When one is pending the operation stops with
 * STATUS_PREEMPTED, keeping the work done so far; the system call restarts
 * after the interrupt is handled and continues from there.
 *
 * For tests, a debug call (SYS_DEBUG_PREEMPT) can make each of this core's
 * next preemption points raise a real interrupt first (an IPI to itself),
 * so preemption and restart are exercised the same way on every host,
 * whatever its speed, and the restarts are counted.
 */
#ifndef KERNEL_PREEMPTION_H
#define KERNEL_PREEMPTION_H

#include "types.h"

/*
 * What a preemptible invoke_* step returns.  PROGRESS_PREEMPTED is not a
 * failure (invoke_* cannot fail): the work done so far is kept, nothing is
 * reported to the caller, and the system call restarts, decodes again
 * against the state as it now is, and continues.  seL4 treats its
 * preemption exception the same way.
 */
enum progress {
    PROGRESS_DONE,
    PROGRESS_PREEMPTED,
};

/* True when an interrupt is pending and the caller should stop with PROGRESS_PREEMPTED; never
 * once the entry's thread is gone, since nobody could restart the call. */
bool preemption_point(void);

/* The system call of this core's entry was preempted and will restart (counted). */
void preemption_restart_counted(void);

/*
 * SYS_DEBUG_PREEMPT on this core: make the next `points` preemption points
 * raise an interrupt (0 disarms), and return the restarts counted so far
 * and how many armed points were left unused.
 */
void preemption_debug_arm(word_t points, word_t *restarts, word_t *unused);

#endif
