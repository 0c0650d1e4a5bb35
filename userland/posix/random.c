/*
 * The process's pseudo-random numbers: /dev/urandom, getrandom and lwIP's
 * LWIP_RAND (ports, sequence numbers) draw from one xorshift64* stream
 * (xorshift.h) seeded from the clock.  Not a cryptographic source: enough
 * for Redis's seeds and hash salts, not for keys.  Any thread may draw
 * (getrandom), so the state is under px_lock.
 */
#include <string.h>
#include <xorshift.h>
#include "personality.h"

#define SEED_SCRAMBLE 0x9e3779b97f4a7c15ULL     /* 2^64 / golden ratio: spreads a small seed */

static uint64_t state;

uint64_t px_random64(void)
{
    px_lock();
    if (!state)
        state = px_now_ns() * SEED_SCRAMBLE | 1;
    uint64_t r = xorshift64(&state);
    px_unlock();
    return r;
}

void px_random_fill(void *out, size_t len)
{
    for (size_t done = 0; done < len; done += sizeof(uint64_t)) {
        uint64_t r = px_random64();
        size_t n = len - done < sizeof r ? len - done : sizeof r;
        memcpy((unsigned char *)out + done, &r, n);
    }
}
