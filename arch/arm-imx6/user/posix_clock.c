/*
 * The cycle counter of a POSIX process (arm-imx6): arch_cycles()
 * (arch_user.h) reads the global timer through arm_global_timer, which the
 * root task's copy sets at start-up (cycles.c).  In a POSIX process the
 * root task mapped the timer's page at the start page's clock_vaddr
 * (posix_start.h); the first reading finds it there.  The counter is read
 * unscaled: the personality divides by cycle_hz, the timer's own rate, so
 * times are right with and without -icount.
 */
#include <arch_user.h>
#include <posix_start.h>

#define GTIMER_OFFSET 0x200

volatile const uint32_t *arm_global_timer;
uint32_t arm_cycles_scale = 1;

uint64_t arm_cycles_fallback(void)
{
    const struct posix_start *start = (const struct posix_start *)POSIX_START_VADDR;
    if (start->clock_vaddr) {
        arm_global_timer = (volatile const uint32_t *)(start->clock_vaddr + GTIMER_OFFSET);
        return arch_cycles();
    }
    /* No timer: a count of readings, so that time still moves forward. */
    static uint64_t readings;
    return __atomic_add_fetch(&readings, 1, __ATOMIC_RELAXED);
}
