/*
 * Deleting the last cap of a container (docs/kernel.md, "Deleting containers"): whatever the
 * containers hold (two caps to one inner CNode, a cycle, a chain of any depth), Delete and Revoke
 * finish and return E_OK, and afterwards nothing made for the test is left: each test makes its
 * objects in an arena of its own, and an untyped may be copied only when it has no children.
 * The runner's invariant check after each test sees any half-deleted state left behind.
 */
#include "test.h"

#define ROOT ROOT_SLOT_CNODE

/* Whether every object made from the arena is gone (its untyped has no children left). */
static bool arena_emptied(const struct arena *a)
{
    cptr_t probe = slot_alloc();
    word_t st = cnode_copy(ROOT, probe, ROOT_DEPTH, ROOT, a->untyped, ROOT_DEPTH, RIGHTS_ALL);

    if (st == E_OK)
        cnode_delete(ROOT, probe, ROOT_DEPTH);
    return st == E_OK;
}

/*
 * A chain of `levels` CNodes of two slots: slot 1 of c[i] holds the only cap to c[i+1], slot 0 of
 * the innermost the only cap to an endpoint.  Returns the slot of the only cap to c[0], or 0.
 */
static cptr_t chain_new(unsigned levels)
{
    cptr_t inner = ep_new(), c = 0;

    if (!inner)
        return 0;
    for (unsigned i = 0; i < levels; i++) {
        c = obj_new(OBJ_CNODE, 1);
        if (!c || cnode_move(c, i == 0 ? 0 : 1, 1, ROOT, inner, ROOT_DEPTH) != E_OK)
            return 0;
        inner = c;
    }
    return c;
}

/* Whether slot s (in the root CNode) is empty: a copy from it finds nothing. */
static bool slot_empty(cptr_t s)
{
    cptr_t probe = slot_alloc();
    word_t st = cnode_copy(ROOT, probe, ROOT_DEPTH, ROOT, s, ROOT_DEPTH, RIGHTS_ALL);

    if (st == E_OK)
        cnode_delete(ROOT, probe, ROOT_DEPTH);
    return st == E_FAILED_LOOKUP;
}

/* Arm `points` preemption points on this core; returns the restarts counted so far. */
static word_t preempt_arm(word_t points)
{
    word_t unused;
    return sys_debug_preempt(points, &unused);
}

/* Disarm; true when every armed point was reached and each made the call restart. */
static bool preempt_all_used(word_t restarts_before, word_t points)
{
    word_t unused, restarts = sys_debug_preempt(0, &unused) - restarts_before;

    test_note("%lu restarts, %lu of %lu armed points unused", (unsigned long)restarts,
              (unsigned long)unused, (unsigned long)points);
    return unused == 0 && restarts >= points;
}

/*
 * The shape that once failed after part of the work: a container whose two slots hold the only
 * two caps to one inner CNode, behind which a chain nests.  The first cap is not the last; the
 * second then is, and the deletion goes on through the chain.  (Before zombies, Delete returned
 * E_REVOKE_FIRST here with the first slot already deleted.)
 */
TEST(delete_two_caps_to_one_inner_cnode)
{
    struct arena a;

    CHECK_OK(arena_begin(&a, 16));
    cptr_t outer = obj_new(OBJ_CNODE, 1), c0 = chain_new(8);
    CHECK(outer && c0);
    CHECK_OK(cnode_copy(outer, 0, 1, ROOT, c0, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_move(outer, 1, 1, ROOT, c0, ROOT_DEPTH));

    CHECK_OK(cnode_delete(ROOT, outer, ROOT_DEPTH));
    CHECK(slot_empty(outer));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}

/*
 * The same shape under Revoke: the container is the only object made from an untyped of its own,
 * and revoking that untyped deletes it.
 */
TEST(revoke_two_caps_to_one_inner_cnode)
{
    struct arena a;

    CHECK_OK(arena_begin(&a, 16));
    cptr_t ut = obj_new(OBJ_UNTYPED, 12), outer = slot_alloc(), c0 = chain_new(8);
    CHECK(ut && outer && c0);
    CHECK_OK(untyped_retype(ut, OBJ_CNODE, 1, ROOT, 0, 0, outer, 1));
    CHECK_OK(cnode_copy(outer, 0, 1, ROOT, c0, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_move(outer, 1, 1, ROOT, c0, ROOT_DEPTH));

    CHECK_OK(cnode_revoke(ROOT, ut, ROOT_DEPTH));
    CHECK(slot_empty(outer));
    CHECK_OK(cnode_delete(ROOT, ut, ROOT_DEPTH));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}

#define DEEP_LEVELS 200     /* far deeper than a recursion on the kernel stack could go */

/* A deep chain goes in one Delete, and resumes where it stopped after each preemption. */
TEST(delete_deep_chain)
{
    struct arena a;

    CHECK_OK(arena_begin(&a, 16));
    cptr_t c0 = chain_new(DEEP_LEVELS);
    CHECK(c0);
    CHECK_OK(cnode_delete(ROOT, c0, ROOT_DEPTH));
    CHECK(arena_emptied(&a));

    /* Again, with an interrupt pending at 100 of its (about 2 x DEEP_LEVELS) preemption points. */
    c0 = chain_new(DEEP_LEVELS);
    CHECK(c0);
    word_t before = preempt_arm(100);
    CHECK_OK(cnode_delete(ROOT, c0, ROOT_DEPTH));
    CHECK(preempt_all_used(before, 100));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}

/*
 * A TCB among the containers: its CSpace slot holds the last cap to a chain, and its own last
 * cap sits in a CNode.  Deleting the CNode stops the thread, empties the TCB (all but its master
 * reply cap, part of the TCB) and the chain behind it, preempted at every step on the way.
 */
TEST(delete_tcb_in_containers)
{
    struct arena a;

    CHECK_OK(arena_begin(&a, 16));
    cptr_t outer = obj_new(OBJ_CNODE, 1), tcb = obj_new(OBJ_TCB, 0), c0 = chain_new(8);
    CHECK(outer && tcb && c0);
    CHECK_OK(tcb_set_space(tcb, 0, c0, 0, ROOT_SLOT_VSPACE));
    CHECK_OK(cnode_delete(ROOT, c0, ROOT_DEPTH));
    CHECK_OK(cnode_move(outer, 0, 1, ROOT, tcb, ROOT_DEPTH));

    word_t before = preempt_arm(8);
    CHECK_OK(cnode_delete(ROOT, outer, ROOT_DEPTH));
    CHECK(preempt_all_used(before, 8));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}

/*
 * Cycles: A holds a cap to B and B one to A (and C one to itself); once the caps outside are
 * deleted nothing reaches them but the derivation tree, and revoking their untyped deletes
 * them, each container's deletion meeting the one that started it.
 */
static void make_cycles(cptr_t *outside_a, cptr_t *outside_b, cptr_t *outside_c)
{
    cptr_t a = obj_new(OBJ_CNODE, 1), b = obj_new(OBJ_CNODE, 1), c = obj_new(OBJ_CNODE, 1);
    cptr_t ep = ep_new();

    CHECK(a && b && c && ep);
    CHECK_OK(cnode_copy(a, 0, 1, ROOT, b, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(b, 0, 1, ROOT, a, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(c, 0, 1, ROOT, c, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_move(b, 1, 1, ROOT, ep, ROOT_DEPTH));
    *outside_a = a;
    *outside_b = b;
    *outside_c = c;
}

TEST(delete_cycle_then_revoke)
{
    struct arena ar;
    cptr_t a, b, c;

    CHECK_OK(arena_begin(&ar, 16));
    make_cycles(&a, &b, &c);
    /* The last caps outside: none is its object's last, so each goes alone. */
    CHECK_OK(cnode_delete(ROOT, a, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, b, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, c, ROOT_DEPTH));
    CHECK(!arena_emptied(&ar));
    CHECK_OK(cnode_revoke(ROOT, ar.untyped, ROOT_DEPTH));
    CHECK(arena_emptied(&ar));

    /* Again, preempted at every step. */
    make_cycles(&a, &b, &c);
    CHECK_OK(cnode_delete(ROOT, a, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, b, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, c, ROOT_DEPTH));
    word_t before = preempt_arm(4);
    CHECK_OK(cnode_revoke(ROOT, ar.untyped, ROOT_DEPTH));
    CHECK(preempt_all_used(before, 4));
    CHECK(arena_emptied(&ar));
    arena_end(&ar);
}

/*
 * A cycle reached from outside: A holds the only cap to B, and B a copy of the one cap to A that
 * is outside.  Deleting A's slot 0 (through the outside cap) deletes B, whose deletion meets
 * the copy of A: not A's last, so it goes alone.  Then the outside cap is A's last.
 */
TEST(delete_cycle_from_outside)
{
    struct arena ar;

    CHECK_OK(arena_begin(&ar, 16));
    cptr_t a = obj_new(OBJ_CNODE, 1), b = obj_new(OBJ_CNODE, 1);
    CHECK(a && b);
    CHECK_OK(cnode_copy(b, 0, 1, ROOT, a, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_move(a, 0, 1, ROOT, b, ROOT_DEPTH));
    CHECK_OK(cnode_delete(a, 0, 1));
    CHECK(!slot_empty(a));
    CHECK(!arena_emptied(&ar));
    CHECK_OK(cnode_delete(ROOT, a, ROOT_DEPTH));
    CHECK(arena_emptied(&ar));
    arena_end(&ar);
}

/*
 * The errors Delete and Revoke have left are those of the lookup of their slot; after one the
 * container and what it holds are exactly as they were.
 */
TEST(delete_lookup_error_changes_nothing)
{
    struct arena a;

    CHECK_OK(arena_begin(&a, 16));
    cptr_t outer = obj_new(OBJ_CNODE, 1), c0 = chain_new(3), probe = slot_alloc();
    CHECK(outer && c0 && probe);
    CHECK_OK(cnode_copy(outer, 0, 1, ROOT, c0, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_move(outer, 1, 1, ROOT, c0, ROOT_DEPTH));

    /* Depth 0 and a depth past the word name no slot. */
    CHECK_ST(cnode_delete(ROOT, outer, 0), E_FAILED_LOOKUP);
    CHECK_ST(cnode_revoke(ROOT, outer, ROOT_DEPTH + 1), E_FAILED_LOOKUP);
    CHECK(!slot_empty(outer));
    /* Both caps in the container, and the endpoint at the end of the chain, are still there. */
    CHECK_OK(cnode_copy(ROOT, probe, ROOT_DEPTH, outer, 0, 1, RIGHTS_ALL));
    CHECK_OK(cnode_delete(ROOT, probe, ROOT_DEPTH));
    CHECK_OK(cnode_copy(ROOT, probe, ROOT_DEPTH, outer, 1, 1, RIGHTS_ALL));
    CHECK_OK(cnode_delete(ROOT, probe, ROOT_DEPTH));
    CHECK_OK(cnode_copy(ROOT, probe, ROOT_DEPTH, outer, 0x6, 4, RIGHTS_ALL));
    CHECK_OK(cnode_delete(ROOT, probe, ROOT_DEPTH));

    CHECK_OK(cnode_delete(ROOT, outer, ROOT_DEPTH));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}
