/* Benchmark statistics and random delays in integer arithmetic (bench.h). */
#include "bench.h"

static void sort_u64(uint64_t *v, unsigned n)
{
    /* Insertion sort: n is a few dozen. */
    for (unsigned i = 1; i < n; i++) {
        uint64_t x = v[i];
        unsigned j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static uint64_t isqrt(uint64_t x)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

void stats_of(uint64_t *v, unsigned n, struct stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!n)
        return;
    sort_u64(v, n);
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += v[i];
    out->mean_x100 = sum * 100 / n;
    /* Variance in hundredths squared: sum of (100 v - mean_x100)^2 / n. */
    uint64_t var = 0;
    for (unsigned i = 0; i < n; i++) {
        int64_t d = (int64_t)(v[i] * 100) - (int64_t)out->mean_x100;
        var += (uint64_t)(d * d) / n;
    }
    out->stddev_x100 = isqrt(var);
    out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    out->min = v[0];
    out->max = v[n - 1];
}

void stats_json(char *buf, size_t size, const struct stats *s)
{
    snprintf(buf, size,
             "{\"mean\": %llu.%02llu, \"stddev\": %llu.%02llu, \"median\": %llu, \"min\": %llu, "
             "\"max\": %llu}",
             (unsigned long long)(s->mean_x100 / 100), (unsigned long long)(s->mean_x100 % 100),
             (unsigned long long)(s->stddev_x100 / 100), (unsigned long long)(s->stddev_x100 % 100),
             (unsigned long long)s->median, (unsigned long long)s->min, (unsigned long long)s->max);
}

static unsigned gcd(uint64_t a, unsigned b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = (unsigned)r;
    }
    return (unsigned)a;
}

unsigned counter_dither(uint64_t elapsed, uint64_t n)
{
    uint64_t per_iteration = n ? (elapsed + n / 2) / n : 0;

    for (unsigned d = 0; d < ARCH_COUNTER_STEP; d++) {
        if (gcd(per_iteration + d, ARCH_COUNTER_STEP) == 1)
            return d;
    }
    return 0;
}

/* Sum of n back-to-back read pairs.  Not inlined or cloned: the timing with
 * dither 0 and the run with the chosen one must be the same code. */
static __attribute__((noinline, noclone)) uint64_t read_pairs(unsigned n, unsigned dither)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        arch_extra_instructions(dither);
        uint64_t a = arch_cycles();
        uint64_t b = arch_cycles();
        sum += b - a;
    }
    return sum;
}

uint64_t timing_overhead(void)
{
    if (ARCH_COUNTER_STEP > 1) {
        const unsigned n = 100 * ARCH_COUNTER_STEP;
        uint64_t t = arch_cycles();
        read_pairs(n, 0);
        t = arch_cycles() - t;
        return (read_pairs(n, counter_dither(t, n)) + n / 2) / n;
    }
    uint64_t best = ~(uint64_t)0;
    for (int i = 0; i < 64; i++) {
        uint64_t a = arch_cycles();
        uint64_t b = arch_cycles();
        if (b - a < best)
            best = b - a;
    }
    return best;
}

/*
 * log2(x) in Q16 for x >= 1: the integer part from the highest set bit, the
 * fraction by repeated squaring of the mantissa (each squaring yields one
 * bit).  Then -ln(x / 2^32) = (32 - log2 x) * ln 2.
 */
static uint64_t log2_q16(uint32_t x)
{
    unsigned ip = 31 - (unsigned)__builtin_clz(x);
    /* Mantissa m in [1, 2) as Q31. */
    uint64_t m = ((uint64_t)x << 31) >> ip;
    uint64_t frac = 0;
    for (int i = 15; i >= 0; i--) {
        m = (m * m) >> 31;
        if (m >= ((uint64_t)2 << 31)) {
            m >>= 1;
            frac |= (uint64_t)1 << i;
        }
    }
    return ((uint64_t)ip << 16) | frac;
}

#define LN2_Q16 45426   /* ln 2 = 0.693147 */

uint64_t neg_ln_q16(uint32_t x)
{
    return (((uint64_t)32 << 16) - log2_q16(x)) * LN2_Q16 >> 16;
}

uint64_t exp_delay(uint64_t *state, uint64_t mean)
{
    if (!mean)
        return 0;
    uint32_t x;
    do
        x = (uint32_t)(xorshift64(state) >> 32);
    while (!x);
    return mean * neg_ln_q16(x) >> 16;
}

bool bench_icount(void)
{
    return arg_word("icount", 0) != 0;
}
