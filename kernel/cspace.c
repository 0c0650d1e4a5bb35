/*
 * Capability addressing: a capability address (cptr) is resolved from the
 * most significant of `depth` bits down, each CNode consuming its guard
 * and then radix bits (seL4 semantics).  A lookup may end early at a slot
 * holding something other than a CNode.
 */
#include "cspace.h"

struct lookup_result cspace_resolve(const struct cap *root, cptr_t cptr, unsigned depth)
{
    struct lookup_result r = { NULL, LOOKUP_OK, depth };
    const struct cap *node = root;
    unsigned n = depth;

    if (node->type != CAP_CNODE) {
        r.failure = LOOKUP_INVALID_ROOT;
        return r;
    }
    for (;;) {
        unsigned radix = node->size_bits, guard_bits = node->guard_bits;
        unsigned level = radix + guard_bits;

        /* A CNode that resolves no bits would loop for ever. */
        if (unlikely(level == 0 || level > n)) {
            r.failure = LOOKUP_DEPTH_MISMATCH;
            return r;
        }
        /*
         * The `level` bits below bit n: guard above, index below.  Shifts
         * stay under WORD_BITS: n <= WORD_BITS and level >= 1, and a CNode's
         * radix is far below WORD_BITS.
         */
        word_t bits = cptr >> (n - level);
        if (level < WORD_BITS)
            bits &= MASK(level);
        if (guard_bits && bits >> radix != node->guard) {
            r.failure = LOOKUP_GUARD_MISMATCH;
            return r;
        }
        struct cte *slot = &cnode_slots(node)[bits & MASK(radix)];
        n -= level;
        r.slot = slot;
        r.bits_left = n;
        if (n == 0 || slot->cap.type != CAP_CNODE)
            return r;
        node = &slot->cap;
    }
}

struct lookup_result cspace_lookup_cap(struct tcb *t, cptr_t cptr)
{
    struct lookup_result r = cspace_resolve(&t->slots[TCB_SLOT_CSPACE].cap, cptr, WORD_BITS);
    if (r.failure == LOOKUP_OK && cap_is_null(&r.slot->cap))
        r.failure = LOOKUP_MISSING_CAPABILITY;
    return r;
}

struct lookup_result cspace_lookup_slot(const struct cap *root, cptr_t index, unsigned depth)
{
    struct lookup_result r = { NULL, LOOKUP_DEPTH_MISMATCH, depth };

    if (depth < 1 || depth > WORD_BITS)
        return r;
    r = cspace_resolve(root, index, depth);
    if (r.failure == LOOKUP_OK && r.bits_left != 0)
        r.failure = LOOKUP_DEPTH_MISMATCH;
    return r;
}

bool cspace_set_guard(struct cap *cnode, word_t guard_data)
{
    word_t length = guard_data_length(guard_data), guard = guard_data_guard(guard_data);

    /* The second test shifts by the length only below WORD_BITS, where a shift is defined. */
    if (length + cnode->size_bits > WORD_BITS || (length < WORD_BITS && guard >> length))
        return false;
    cnode->guard_bits = (uint8_t)length;
    cnode->guard = guard;
    return true;
}
