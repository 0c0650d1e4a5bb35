/*
 * The platform hooks lwIP calls (NO_SYS): the millisecond clock of its
 * timers, its random numbers (initial sequence numbers, local ports) and
 * its assertion handler.
 */
#include <arch_user.h>
#include <root.h>
#include <sys.h>
#include "lwip/sys.h"

/* When the kernel could not tell the counter's rate, 1 GHz: timers then run at a plausible pace. */
#define FALLBACK_CYCLE_HZ 1000000000ULL

u32_t sys_now(void)
{
    uint64_t hz = bootinfo->cycle_hz ? bootinfo->cycle_hz : FALLBACK_CYCLE_HZ;
    return (u32_t)(arch_cycles() / (hz / 1000));
}

/*
 * Not a cryptographic generator: lwIP uses it for initial sequence numbers
 * and ephemeral ports.  Seeded from the cycle counter on first use so that
 * two boots do not reuse the same numbers.
 */
uint32_t lwip_port_rand(void)
{
    static uint64_t state;
    if (!state)
        state = arch_cycles() | 1;
    return (uint32_t)(xorshift64(&state) >> 32);
}

_Noreturn void lwip_port_assert_failed(const char *msg, const char *file, int line)
{
    printf("lwIP assertion failed: %s at %s:%d\n", msg, file, line);
    sys_debug_halt(3);
}
