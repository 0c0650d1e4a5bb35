/*
 * Untyped memory: retyped into kernel objects and frames; revoking an
 * untyped cap deletes everything made from it and resets its watermark.
 */
#ifndef KERNEL_UNTYPED_H
#define KERNEL_UNTYPED_H

#include "types.h"
#include "cap.h"

#define UNTYPED_MIN_BITS 4
#define UNTYPED_MAX_BITS (WORD_BITS - 2)

/* log2 bytes of an object of `type` and size argument `user_bits`; 0 when invalid. */
unsigned object_size_bits(unsigned type, unsigned user_bits);

/* Make the object's memory into a fresh object and return its cap (boot and Retype). */
struct cap object_create(unsigned type, word_t paddr, unsigned user_bits, bool device);

/* Called before an untyped cap leaves the CDT (kernel/delete.c): a copy's marks go to its parent.
 * Caller holds the write side. */
void untyped_hand_over_marks(struct cte *slot);

#endif
