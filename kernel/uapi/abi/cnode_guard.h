/*
 * CNode guard data: the word that gives a CNode cap its guard.  It is the
 * badge argument of CNode Mint, Mutate and Rotate when the cap is a CNode
 * cap, and the CSpace data of TCB Configure and SetSpace (docs/abi.md).
 *
 *   bits 0..5   guard length in bits: guard length + the CNode's radix <= WORD_BITS
 *   bits 6..    guard value, below 2^(guard length)
 *
 * Guard data 0 leaves the cap's guard as it is.  Data that breaks either
 * bound is refused with E_INVALID_ARGUMENT.
 */
#ifndef ABI_CNODE_GUARD_H
#define ABI_CNODE_GUARD_H

#include "types.h"

#define GUARD_DATA_LENGTH_BITS 6

static inline word_t guard_data_new(word_t length, word_t guard)
{
    return (guard << GUARD_DATA_LENGTH_BITS) | length;
}

static inline word_t guard_data_length(word_t data)
{
    return data & (((word_t)1 << GUARD_DATA_LENGTH_BITS) - 1);
}

static inline word_t guard_data_guard(word_t data)
{
    return data >> GUARD_DATA_LENGTH_BITS;
}

_Static_assert(((word_t)1 << GUARD_DATA_LENGTH_BITS) >= WORD_BITS,
               "every guard length a CNode can have (below WORD_BITS, its radix being 1 or more) fits");

#endif
