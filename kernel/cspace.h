/*
 * Capability spaces: addressing slots through a tree of CNodes by guards
 * and radices (kernel/cspace.c), and the CNode invocations (kernel/cnode.c).
 */
#ifndef KERNEL_CSPACE_H
#define KERNEL_CSPACE_H

#include "types.h"
#include "cap.h"
#include "tcb.h"
#include <abi/cnode_guard.h>

enum lookup_failure {
    LOOKUP_OK = 0,
    LOOKUP_INVALID_ROOT,        /* the CSpace root is not a CNode */
    LOOKUP_MISSING_CAPABILITY,  /* the slot found is empty (for lookups that need a cap) */
    LOOKUP_DEPTH_MISMATCH,      /* bits left over or too few bits */
    LOOKUP_GUARD_MISMATCH,      /* a guard did not match */
};

struct lookup_result {
    struct cte *slot;
    enum lookup_failure failure;
    unsigned bits_left;
};

/*
 * Lookups: either side of the kernel lock (under LOCK=fine CNode contents
 * change only under the write side).
 */

/* Resolve `depth` bits of cptr starting at the CNode cap `root`. */
struct lookup_result cspace_resolve(const struct cap *root, cptr_t cptr, unsigned depth);

/* Resolve a whole-word cptr in the thread's CSpace to a slot holding a cap. */
struct lookup_result cspace_lookup_cap(struct tcb *t, cptr_t cptr);

/* Resolve (index, depth) in the CNode cap `root` to a slot (may be empty). */
struct lookup_result cspace_lookup_slot(const struct cap *root, cptr_t index, unsigned depth);

/*
 * Give the CNode cap `cnode` the guard of `guard_data` (abi/cnode_guard.h);
 * false, the cap unchanged, when the guard does not fit its length or the
 * word.
 */
bool cspace_set_guard(struct cap *cnode, word_t guard_data);

/* Number of slots of a CNode cap and its slot array. */
static inline struct cte *cnode_slots(const struct cap *c)
{
    return (struct cte *)c->obj;
}

/* kernel/cnode.c: slot operations used by other objects too.  Caller holds the write side. */
void cte_insert_child(struct cte *parent, struct cte *dest, struct cap cap);
void cte_insert_root(struct cte *dest, struct cap cap);
void cte_move(struct cte *src, struct cte *dest);
void cte_swap(struct cte *a, struct cte *b);

/*
 * The cap a new child of `src` receives (CNode Copy and Mint, a cap
 * granted in a message), or E_REVOKE_FIRST or E_ILLEGAL_OPERATION when
 * the cap in `src` may have no child.  Caller holds the write side.
 */
enum status cap_derive(const struct cte *src, struct cap *out);

#endif
