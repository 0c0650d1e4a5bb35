/*
 * Shared pieces of the benchmarks: statistics in integer arithmetic (user
 * code has no FPU: -mgeneral-regs-only), the timing overhead, and the
 * exponential delay generator of mcpingpong.
 */
#ifndef BENCH_H
#define BENCH_H

#include <arch_user.h>
#include <thread.h>

struct stats {
    uint64_t mean_x100;     /* mean, hundredths */
    uint64_t stddev_x100;
    uint64_t median, min, max;
};

/* Statistics of n samples (sorts them in place). */
void stats_of(uint64_t *v, unsigned n, struct stats *out);

/* "{"mean": .., "stddev": .., "median": .., "min": .., "max": ..}" into buf. */
void stats_json(char *buf, size_t size, const struct stats *s);

/*
 * Exact means from a counter that steps by ARCH_COUNTER_STEP instructions
 * (arm-imx6 under -icount: 10).  One reading of an interval of D
 * instructions gives D rounded down or up to a step, depending on where in
 * a step the interval began (its phase).  A loop whose iterations all run
 * the same N instructions starts each one N later than the last, so with N
 * prime to the step the phases of ARCH_COUNTER_STEP consecutive iterations
 * are every phase once, and the mean over them is D exactly.  The loop
 * runs arch_extra_instructions(d) once an iteration, outside the intervals
 * it times, to make N + d prime to the step: counter_dither() chooses d
 * from a timing of n iterations of the loop run with d = 0 (`elapsed`
 * counts, without what the loop costs besides its iterations).  Then run
 * the loop a multiple of ARCH_COUNTER_STEP times (COUNTER_STEP_ROUND()).
 * With a step of 1 (x86_64) d is 0 and nothing changes.
 */
unsigned counter_dither(uint64_t elapsed, uint64_t n);
#define COUNTER_STEP_ROUND(n) (((n) + ARCH_COUNTER_STEP - 1) / ARCH_COUNTER_STEP * ARCH_COUNTER_STEP)

/*
 * The cost of reading the cycle counter back to back: the minimum of many
 * tries where the counter counts single instructions or cycles, the
 * dithered mean where it steps by more (above).
 */
uint64_t timing_overhead(void);

/* -ln(u) for u = x / 2^32, x in 1..2^32-1, as a Q16 fixed-point number. */
uint64_t neg_ln_q16(uint32_t x);

/* An exponentially distributed delay with the given mean, from the generator state. */
uint64_t exp_delay(uint64_t *state, uint64_t mean);

/* Whether the cycle counter counts instructions (-icount: the host says icount=1). */
bool bench_icount(void);

/*
 * A window for tools/insn_profile.py (bench/window.c): the counter at the entry
 * of each marker, and the `window` record that gives the counted
 * difference and the operations done in between.
 */
uint64_t bench_window_begin(void);
uint64_t bench_window_end(void);
void bench_window_record(const char *bench, const char *config_json, uint64_t begin, uint64_t end,
                         uint64_t operations);

#endif
