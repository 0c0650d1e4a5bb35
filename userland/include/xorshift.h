/*
 * The pseudo-random generator every part of userland uses: xorshift64*
 * (Vigna, "An experimental exploration of Marsaglia's xorshift generators,
 * scrambled", 2016).  Fast and statistically fine for seeds, test data and
 * lwIP's ports and sequence numbers; not for secrets.  A header of its own,
 * with nothing but <stdint.h>, so that the root task's library (libc.h) and
 * the POSIX personality, built on another C library, share it.
 */
#ifndef XORSHIFT_H
#define XORSHIFT_H

#include <stdint.h>

/* The next number of the stream whose state is *state, which must be nonzero. */
static inline uint64_t xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#endif
