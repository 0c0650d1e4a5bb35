/*
 * Sorted-set scores: IEEE 754 doubles held as their 64-bit pattern and
 * handled with integer arithmetic only, because the guest is built without
 * floating-point registers (x86_64 -mgeneral-regs-only).  Parsing rounds
 * correctly to nearest like strtod(); formatting gives printf's "%.17g",
 * which is how Redis 7.0 writes a score; addition (ZADD INCR) rounds as the
 * FPU would.
 */
#ifndef REDIS_SCORE_H
#define REDIS_SCORE_H

#include "redis_env.h"

#define SCORE_MAX_CHARS 32      /* "-1.2345678901234567e-308" and a NUL, with room */

enum score_parse {
    SCORE_OK,
    SCORE_INVALID,      /* not a number in the accepted syntax */
    SCORE_OVERFLOW,     /* beyond the largest double: strtod gives +-inf with ERANGE */
    SCORE_UNDERFLOW,    /* nonzero but rounding to 0: strtod gives +-0 with ERANGE */
};

/* Decimal text ([sign] digits [. digits] [e [sign] digits], or [sign] inf or
 * infinity in any case) to a double's bits; *bits holds +-inf on overflow
 * and +-0 on underflow.  At most 60 significant digits are accepted. */
enum score_parse score_parse(const char *s, size_t len, uint64_t *bits);

/* "%.17g" of the double into buf (SCORE_MAX_CHARS bytes); "inf"/"-inf" for
 * infinities as Redis writes them.  Returns the length. */
size_t score_format(char *buf, uint64_t bits);

/* a + b rounded to nearest, ties to even, as IEEE 754 adds; false when the
 * sum is not a number (infinities of opposite signs). */
bool score_add(uint64_t a, uint64_t b, uint64_t *sum);

/* An integer that orders doubles as < does, with -0 equal to +0. */
uint64_t score_order(uint64_t bits);

#define SCORE_POS_INF 0x7ff0000000000000ULL
#define SCORE_NEG_INF 0xfff0000000000000ULL
#define SCORE_NEG_ZERO 0x8000000000000000ULL

#endif
