/*
 * The capability derivation tree as a preorder list with depths (cap.h).
 *
 * Caller holds the write side (LOCK=fine) or the big lock for every
 * function here: the list links the slots of every object.  (Reply caps
 * linked to their masters outside the list are kernel/reply.c's.)
 */
#ifndef KERNEL_CDT_H
#define KERNEL_CDT_H

#include "cap.h"

/* Link `child` right after `parent`, one level deeper. */
void cdt_insert_child(struct cte *parent, struct cte *child);
/* Link `slot` after `after` at the same depth (a sibling), or as a root when after is NULL. */
void cdt_insert_sibling(struct cte *after, struct cte *slot);
/* Unlink a slot; its children become children of its parent. */
void cdt_remove(struct cte *slot);
/* Move the links of `src` to `dest` (dest takes src's place in the tree). */
void cdt_move(struct cte *src, struct cte *dest);
/* Exchange the tree positions of two slots. */
void cdt_swap(struct cte *a, struct cte *b);
/* Whether the slot has at least one descendant. */
bool cdt_has_children(const struct cte *slot);
/* The first descendant of slot, or NULL. */
struct cte *cdt_first_child(const struct cte *slot);
/* Whether this is the last capability to its object. */
bool cdt_is_final(const struct cte *slot);

/* The first slot of the whole list, for the invariant checker. */
struct cte *cdt_first(void);
/* Debug: check the list (links, depths, object ranges); count of slots or -1 and a reason. */
long cdt_check(const char **why);

#endif
