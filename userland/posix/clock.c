/*
 * Clocks, on the port's cycle counter (arch_cycles(), at the start page's
 * cycle_hz; under -icount it counts instructions, at 1 GHz of virtual time).
 *
 * CLOCK_MONOTONIC (and the boot-time and CPU-time clocks, which a single
 * process on its own core may take as the same) counts from boot.
 * CLOCK_REALTIME is the monotonic clock plus the Unix time at which the
 * counter read 0, which the boot command line gives to the millisecond (the
 * start page's realtime_ms, taken before QEMU starts, so no later than the
 * counter's 0: the clock starts behind the host's, never ahead, and then
 * keeps cycle_hz's rate, docs/posix.md); the
 * guest has no battery clock it reads itself.  Without it, a fixed instant,
 * REALTIME_AT_BOOT_MS, keeps wall-clock times plausible.
 */
#include <errno.h>
#include <time.h>
#include <arch_user.h>
#include "personality.h"

#define REALTIME_AT_BOOT_MS 1767225600000ULL  /* 2026-01-01T00:00:00Z */
#define FALLBACK_HZ         1000000000ULL     /* when the kernel could not tell the counter's rate */
#define NS                  1000000000ULL
#define NS_PER_MS           1000000ULL

uint64_t px_now_ns(void)
{
    uint64_t hz = posix_start_page->cycle_hz ? posix_start_page->cycle_hz : FALLBACK_HZ;
    uint64_t c = arch_cycles();
    return c / hz * NS + c % hz * NS / hz;
}

static bool known_clock(int clock)
{
    switch (clock) {
    case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW: case CLOCK_BOOTTIME:
    case CLOCK_REALTIME_COARSE: case CLOCK_MONOTONIC_COARSE:
    case CLOCK_PROCESS_CPUTIME_ID: case CLOCK_THREAD_CPUTIME_ID:
        return true;
    default:
        return false;
    }
}

long px_clock_now(int clock, uint64_t *ns)
{
    if (!known_clock(clock))
        return -EINVAL;
    *ns = px_now_ns();
    if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) {
        uint64_t boot_ms = posix_start_page->realtime_ms ? posix_start_page->realtime_ms : REALTIME_AT_BOOT_MS;
        *ns += boot_ms * NS_PER_MS;
    }
    return 0;
}

long px_clock_resolution(int clock, uint64_t *ns)
{
    if (!known_clock(clock))
        return -EINVAL;
    uint64_t hz = posix_start_page->cycle_hz ? posix_start_page->cycle_hz : FALLBACK_HZ;
    *ns = hz >= NS ? 1 : NS / hz;
    return 0;
}

static bool never_ready(void *ctx)
{
    (void)ctx;
    return false;
}

long px_sleep(int clock, bool absolute, uint64_t ns)
{
    uint64_t now;
    long err = px_clock_now(clock, &now);
    if (err)
        return err;
    uint64_t left = !absolute ? ns : ns > now ? ns - now : 0;
    px_block_until(never_ready, NULL, px_now_ns() + left);
    return 0;
}
