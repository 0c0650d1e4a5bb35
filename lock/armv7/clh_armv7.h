/*
 * The CLH acquire and release on ARMv7-A, by hand (included by lock/clh.h
 * when built for ARM; x86 and the host tests use the C11 version there).
 * They run on every kernel entry of the `bkl` variant, and C11's mapping of
 * the acq_rel swap and the acquire load costs three DMBs where the ARMv7
 * memory model needs one (docs/locking.md, "The CLH lock on ARMv7").
 *
 *   1: ldr n, [c, #mine]       the node to enqueue: its word is already
 *                              nonzero (below)
 *   ldr    tail, [c, #tail]    &lock->tail, kept in the same line
 *   ldrex  pred, [tail]        swap it into the tail, no barrier before
 *   strex  s, n, [tail]
 *   ldr    w, [pred]           address-dependent on the swap's result
 *   orrs   w, w, s             one test for both: the swap took and the
 *   bne    slow                predecessor's word reads 0
 *   dmb    ish                 acquire: the critical section after the 0
 *   ...
 *   slow: s != 0, the STREX failed: back to 1 (the load of w read a
 *   node's word through a pointer the tail held, harmless); else
 *   clh_wait() polls pred, ending with its own acquire load, then the DMB.
 *   str    pred, [pred]        mark the adopted node for our next acquire
 *   strd   pred, n, [c, #mine] mine := pred, held := n
 *
 * Why this is enough (ARM ARM DDI 0406C A3.8, the ARMv7 memory model):
 *   - Publishing the node's nonzero word before the swap makes it findable:
 *     that word was written when the node was adopted, in an earlier
 *     acquire on this core, and this core's release (DMB; STR 0) has run
 *     since; its DMB orders every access before it, the marking store
 *     among them, before every access after it, the STREX among them.  So
 *     no DMB before the swap.  (C11's release store promises less, which is
 *     why the C version keeps the swap acq_rel.)
 *   - Reading the predecessor's word: the LDR's address is the LDREX's
 *     result, an address dependency, which orders the two reads; with the
 *     predecessor's DMB between its marking store and its STREX this is the
 *     message-passing pattern MP+dmb+addr, which ARMv7 forbids to see the
 *     stale value: we see its mark or the 0 of its release, never an older
 *     0 from the node's previous use.
 *   - Seeing 0: it pairs with the DMB before the predecessor's releasing
 *     store (clh_release_as()); the DMB after our load orders the critical
 *     section after it (a control dependency would order only stores).
 *   - The marking store goes to a node nobody else reads: its previous
 *     owner wrote its last 0 there and we were its only spinner (clh.c).
 * Nodes hold any nonzero value while held or queued and 0 once released;
 * the C paths (clh_wait(), clh_is_locked()) test only for 0.  clh_init()
 * marks every core's first node.
 */
#ifndef LOCK_ARCH_CLH_ARMV7_H
#define LOCK_ARCH_CLH_ARMV7_H

#include <stddef.h>

_Static_assert(offsetof(struct clh_core, held) == offsetof(struct clh_core, mine) + 4,
               "one STRD writes mine and held");
_Static_assert(offsetof(struct clh_core, mine) % 8 == 0, "STRD needs an 8-byte aligned pair");

/* Barrier instructions per operation, for LOCKSTATS: one DMB each. */
#define CLH_ACQUIRE_BARRIERS 1
#define CLH_RELEASE_BARRIERS 1

/* lock is c's lock (clh_init() recorded &lock->tail in c): unused here. */
static LOCK_INLINE bool clh_acquire_as(struct clh_lock *lock, struct clh_core *c, lock_wait_fn hook)
{
    /* The low half is pred, the high half n: an even/odd register pair for STRD. */
    uint64_t pair;
    uint32_t s, word;
    struct clh_node **t;
    bool retry_or_wait;
    bool waited = false;

    (void)lock;
    /* The loop runs again only when the STREX failed. */
    for (;;) {
        __asm__ volatile("ldr    %R[pair], [%[c], %[mine]]\n"
                         "ldr    %[t], [%[c], %[tail]]\n"
                         "ldrex  %Q[pair], [%[t]]\n"
                         "strex  %[s], %R[pair], [%[t]]\n"
                         "ldr    %[word], [%Q[pair]]\n"
                         "orrs   %[word], %[word], %[s]"
                         : [pair] "=&r"(pair), [t] "=&r"(t), [s] "=&r"(s), [word] "=&r"(word),
                           "=@ccne"(retry_or_wait)
                         : [c] "r"(c), [mine] "i"(offsetof(struct clh_core, mine)),
                           [tail] "i"(offsetof(struct clh_core, tail))
                         : "memory");
        if (__builtin_expect(!retry_or_wait, 1))
            break;
        if (s == 0) {
            waited = true;
            clh_wait((const struct clh_node *)(uintptr_t)pair, hook);
            break;
        }
    }
    __asm__ volatile("dmb    ish\n"
                     "str    %Q[pair], [%Q[pair]]\n"
                     "strd   %Q[pair], %R[pair], [%[c], %[mine]]"
                     :
                     : [pair] "r"(pair), [c] "r"(c), [mine] "i"(offsetof(struct clh_core, mine))
                     : "memory");
    return waited;
}

/*
 * Caller, whose entry of the lock's storage is c, must hold the lock.  The
 * DMB pairs with the successor's DMB after it reads the 0, and it is the
 * barrier the next acquire's swap relies on (above): written here rather
 * than left to the compiler's mapping of a C11 release store, which would
 * promise only the first.
 */
static LOCK_INLINE void clh_release_as(struct clh_core *c)
{
    __asm__ volatile("dmb    ish\n"
                     "str    %[zero], [%[held]]"
                     :
                     : [zero] "r"(0), [held] "r"(c->held)
                     : "memory");
}

#endif
