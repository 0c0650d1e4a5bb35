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

/* ---- TCB SetSpace deletes the caps it replaces with the same walk (docs/kernel.md). */

/*
 * The old CSpace is the last cap to a chain far deeper than the recursive scan the decoder once
 * ran (8 containers, E_REVOKE_FIRST beyond): SetSpace deletes it all, also when preempted at 100
 * of its steps, and installs the new CSpace.
 */
TEST(delete_set_space_deep_chain)
{
    struct arena a;
    cptr_t tcb = obj_new(OBJ_TCB, 0);

    CHECK(tcb);
    CHECK_OK(arena_begin(&a, 16));
    cptr_t c0 = chain_new(DEEP_LEVELS);
    CHECK(c0);
    CHECK_OK(tcb_set_space(tcb, 0, c0, 0, ROOT_SLOT_VSPACE));
    CHECK_OK(cnode_delete(ROOT, c0, ROOT_DEPTH));
    CHECK_OK(tcb_set_space(tcb, 0, ROOT_SLOT_CNODE, 0, ROOT_SLOT_VSPACE));
    CHECK(arena_emptied(&a));

    c0 = chain_new(DEEP_LEVELS);
    CHECK(c0);
    CHECK_OK(tcb_set_space(tcb, 0, c0, 0, ROOT_SLOT_VSPACE));
    CHECK_OK(cnode_delete(ROOT, c0, ROOT_DEPTH));
    word_t before = preempt_arm(100);
    CHECK_OK(tcb_set_space(tcb, 0, ROOT_SLOT_CNODE, 0, ROOT_SLOT_VSPACE));
    CHECK(preempt_all_used(before, 100));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}

/*
 * Sources that the deletion takes away.  The caller's own TCB's last cap is in the target's old
 * CSpace X, and the caller's CSpace R (its TCB slot holds the last cap) holds the caps it names.
 * Deleting X deletes the caller, then R with what it holds alone; the call goes on from there
 * (docs/kernel.md, "Replacing a thread's caps") and leaves nothing behind.
 */
#define VANISH_RADIX    4
#define VANISH_GO       4   /* slot of R */

static volatile word_t vanish_entered, vanish_returned;
static cptr_t vanish_invoked, vanish_cnode, vanish_vspace;  /* cptrs in R */

static void set_space_of_own_killer(void *arg)
{
    cptr_t go = (cptr_t)(word_t)arg;
    word_t unused;

    sys_wait(go, &unused);
    vanish_entered = 1;
    tcb_set_space(vanish_invoked, 0, vanish_cnode, 0, vanish_vspace);
    /* Not reached when the call deletes this thread; else it must not hold its core. */
    vanish_returned = 1;
    for (;;)
        sys_wait(go, &unused);
}

/*
 * Run the caller (CSpace r with guard data r_data, `go` at cptr go_in_r) so that its SetSpace of
 * target deletes it: its last TCB cap goes into a fresh X, the target's CSpace, whose last cap is
 * the target's.  Returns once the caller has run: it outranks this thread on its core.
 */
static void run_own_killer(cptr_t r, word_t r_data, cptr_t go, cptr_t go_in_r, cptr_t target)
{
    struct thread caller;
    cptr_t x = obj_new(OBJ_CNODE, 1);
    struct thread_opts o = { .prio = TEST_PRIO + 10, .core = 0, .cspace = r, .cspace_data = r_data };

    CHECK(x);
    vanish_entered = vanish_returned = 0;
    CHECK_OK(thread_create_space(&caller, &o));
    CHECK_OK(thread_start(&caller, set_space_of_own_killer, (void *)(word_t)go_in_r));
    CHECK_OK(tcb_set_space(target, 0, x, 0, ROOT_SLOT_VSPACE));
    CHECK_OK(cnode_move(x, 0, 1, ROOT, caller.tcb, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, r, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, x, ROOT_DEPTH));
    CHECK_OK(sys_signal(go));
    CHECK_OK(sys_yield());
    CHECK_EQ(vanish_entered, 1);
    CHECK_EQ(vanish_returned, 0);
}

/* What both tests below make in an arena of their own: R, the target, the new CSpace and `go`. */
struct vanish_objects {
    struct arena arena;
    struct slot_mark made;      /* the root CNode's slots before: slot_restore() empties the rest */
    cptr_t r, target, other, go;
};

static bool vanish_begin(struct vanish_objects *v)
{
    if (arena_begin(&v->arena, 20) != E_OK)
        return false;
    slot_checkpoint(&v->made);
    v->r = obj_new(OBJ_CNODE, VANISH_RADIX);
    v->target = obj_new(OBJ_TCB, 0);
    v->other = obj_new(OBJ_CNODE, 1);
    v->go = ntfn_new();
    return v->r && v->target && v->other && v->go;
}

/* The kernel's invariants hold, and nothing made is left once the caps the test holds go. */
static void vanish_end(struct vanish_objects *v)
{
    CHECK_OK(sys_debug_check());
    slot_restore(&v->made);
    CHECK(arena_emptied(&v->arena));
    arena_end(&v->arena);
}

/*
 * Everything in R, the invoked TCB cap too: the call sets and inserts nothing.  With
 * `armed_points`, that many preemption points are armed for the caller's call: it restarts at
 * each while its thread lives, and runs to the end once its deletion took the thread (nobody is
 * left to restart it).  Stopped there instead, it would leave X's zombie in the target's slot, in
 * a cycle (R holds the target's cap) that the test's own deletions never finish.
 */
static void sources_vanish(word_t armed_points)
{
    static struct vanish_objects v;
    word_t unused;

    CHECK(vanish_begin(&v));
    /* R resolves the whole word: slot n is cptr n. */
    vanish_invoked = 1;
    vanish_vspace = 2;
    vanish_cnode = 3;
    CHECK_OK(cnode_copy(v.r, vanish_invoked, VANISH_RADIX, ROOT, v.target, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(v.r, vanish_vspace, VANISH_RADIX, ROOT, ROOT_SLOT_VSPACE, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(v.r, vanish_cnode, VANISH_RADIX, ROOT, v.other, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(v.r, VANISH_GO, VANISH_RADIX, ROOT, v.go, ROOT_DEPTH, RIGHTS_ALL));
    if (armed_points)
        preempt_arm(armed_points);
    run_own_killer(v.r, WORD_BITS - VANISH_RADIX, v.go, VANISH_GO, v.target);
    if (armed_points)
        sys_debug_preempt(0, &unused);
    if (test_failed())
        return;
    /* The target has no CSpace: Resume needs one. */
    CHECK_ST(tcb_resume(v.target), E_ILLEGAL_OPERATION);
    vanish_end(&v);
}

TEST(delete_set_space_sources_vanish)
{
    sources_vanish(0);
}

TEST(delete_set_space_sources_vanish_while_preempted)
{
    sources_vanish(1000);
}

/*
 * The invoked TCB cap and the new CSpace are in a CNode Q that R holds a copy of (the root task
 * keeps another), the VSpace is in R itself: the call installs the CSpace and leaves the VSpace
 * slot empty.  R resolves all bits but one, Q the last one (guard 0, radix 1).
 */
#define Q_IN_R  5

TEST(delete_set_space_some_sources_vanish)
{
    static struct vanish_objects v;

    CHECK(vanish_begin(&v));
    cptr_t q = obj_new(OBJ_CNODE, 1), probe = slot_alloc();
    CHECK(q && probe);
    vanish_invoked = Q_IN_R << 1 | 0;
    vanish_cnode = Q_IN_R << 1 | 1;
    vanish_vspace = 2 << 1;
    CHECK_OK(cnode_copy(q, 0, 1, ROOT, v.target, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(q, 1, 1, ROOT, v.other, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(v.r, Q_IN_R, VANISH_RADIX, ROOT, q, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(v.r, 2, VANISH_RADIX, ROOT, ROOT_SLOT_VSPACE, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(cnode_copy(v.r, VANISH_GO, VANISH_RADIX, ROOT, v.go, ROOT_DEPTH, RIGHTS_ALL));
    run_own_killer(v.r, WORD_BITS - VANISH_RADIX - 1, v.go, VANISH_GO << 1, v.target);
    if (test_failed())
        return;
    /* Q and its caps are still there; the target has the new CSpace (Resume accepts it). */
    CHECK_OK(cnode_copy(ROOT, probe, ROOT_DEPTH, q, 1, 1, RIGHTS_ALL));
    /* Priority 0, below this thread on its core: resumed, it does not run before the Suspend. */
    CHECK_OK(tcb_resume(v.target));
    CHECK_OK(tcb_suspend(v.target));
    vanish_end(&v);
}

/*
 * ---- A zombie left visible by a stopped walk.  A thread below the test thread's priority
 * deletes the last cap to X, which sits in Y and holds the only cap to an endpoint the test
 * thread waits on.  The walk's first step deletes the endpoint, which wakes the test thread;
 * the preemption point armed right after it stops the walk, and the test thread runs before the
 * deleter can restart.  It suspends the deleter (the walk is abandoned) and acts on X's zombie.
 */
static volatile word_t deleter_status, deleter_done;

struct zombie_maker {
    cptr_t y, ep;
};

static void delete_x_in_y(void *arg)
{
    const struct zombie_maker *z = arg;

    /* Y slot 0 holds X; (0b01, depth 2) is X's slot 1. */
    if (cnode_move(z->y, 1, 2, ROOT, z->ep, ROOT_DEPTH) != E_OK)
        return;
    preempt_arm(1);
    deleter_status = cnode_delete(z->y, 0, 1);
    deleter_done = 1;
}

/*
 * Begin the arena `a` and leave X's zombie in Y slot 0 (X's slot 0 holds a CNode of its own, so
 * part of X is left), its walk abandoned: returns the suspended deleter, or NULL (test failed).
 * The deleter is made outside the arena, which holds only what the walk deletes.
 */
static struct thread *stop_walk_in_y(struct zombie_maker *z, struct arena *a)
{
    struct msg m = { 0 };
    word_t unused;

    deleter_status = deleter_done = 0;
    struct thread *d = spawn_unstarted(TEST_PRIO - 10, 0, 0);
    if (!d || arena_begin(a, 16) != E_OK)
        return NULL;
    cptr_t x = obj_new(OBJ_CNODE, 1), inner = obj_new(OBJ_CNODE, 1);
    z->y = obj_new(OBJ_CNODE, 1);
    z->ep = ep_new();
    if (!x || !inner || !z->y || !z->ep || cnode_move(x, 0, 1, ROOT, inner, ROOT_DEPTH) != E_OK ||
        cnode_move(z->y, 0, 1, ROOT, x, ROOT_DEPTH) != E_OK || thread_start(d, delete_x_in_y, z) != E_OK) {
        test_fail(__FILE__, __LINE__, "setting up the containers or the deleter failed");
        return NULL;
    }
    /* Runs the deleter; the endpoint's deletion cancels this Recv, which then finds no cap. */
    word_t st = sys_recv(z->ep, &m);
    tcb_suspend(d->tcb);
    sys_debug_preempt(0, &unused);
    if (st != E_FAILED_LOOKUP || deleter_done) {
        test_fail(__FILE__, __LINE__, "the walk did not stop at its first step: Recv %s, deleter %s",
                  status_name(st), deleter_done ? "done" : "stopped");
        return NULL;
    }
    return d;
}

TEST(delete_zombie_left_by_stopped_walk)
{
    static struct zombie_maker z;
    struct arena a;
    struct thread *d = stop_walk_in_y(&z, &a);

    CHECK(d);
    cptr_t tcb = obj_new(OBJ_TCB, 0), moved = slot_alloc(), probe = slot_alloc();
    CHECK(tcb && moved && probe);
    /* Y slot 0 is X's zombie: a lookup through it fails, Copy and Mint refuse it. */
    CHECK_ST(cnode_copy(ROOT, probe, ROOT_DEPTH, z.y, 0, 2, RIGHTS_ALL), E_FAILED_LOOKUP);
    CHECK_ST(cnode_copy(ROOT, probe, ROOT_DEPTH, z.y, 0, 1, RIGHTS_ALL), E_ILLEGAL_OPERATION);
    CHECK_ST(cnode_mint(ROOT, probe, ROOT_DEPTH, z.y, 0, 1, RIGHTS_ALL, 0), E_ILLEGAL_OPERATION);
    /* Move takes it, as it is (it stays its object's only cap). */
    CHECK_OK(cnode_move(ROOT, moved, ROOT_DEPTH, z.y, 0, 1));
    CHECK_ST(cnode_copy(ROOT, probe, ROOT_DEPTH, z.y, 0, 1, RIGHTS_ALL), E_FAILED_LOOKUP);
    /* Invoking it, or giving it to SetSpace as the CSpace, is refused. */
    CHECK_ST(cnode_copy(moved, 0, 1, ROOT, z.ep, ROOT_DEPTH, RIGHTS_ALL), E_INVALID_CAPABILITY);
    CHECK_ST(tcb_set_space(tcb, 0, moved, 0, ROOT_SLOT_VSPACE), E_INVALID_CAPABILITY);
    /* Revoke of it deletes its children (none): it stays.  Delete finishes it. */
    CHECK_OK(cnode_revoke(ROOT, moved, ROOT_DEPTH));
    CHECK(!slot_empty(moved));
    CHECK_OK(sys_debug_check());
    CHECK_OK(cnode_delete(ROOT, moved, ROOT_DEPTH));
    CHECK(slot_empty(moved));

    /* The deleter, resumed, restarts its Delete: Y's slot is empty now, which is no error. */
    CHECK_OK(tcb_set_priority(d->tcb, TEST_PRIO));
    CHECK_OK(tcb_resume(d->tcb));
    CHECK(wait_eq(&deleter_done, 1, WAIT_MS));
    CHECK_OK(deleter_status);
    CHECK_OK(cnode_delete(ROOT, z.y, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT, tcb, ROOT_DEPTH));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}

/* The same stopped walk, and then a Delete of the container holding the zombie takes it over. */
TEST(delete_zombie_taken_over_by_outer_delete)
{
    static struct zombie_maker z;
    struct arena a;

    CHECK(stop_walk_in_y(&z, &a));
    /* Y's last cap goes: the walk meets X's zombie in Y and finishes it, preempted on the way. */
    word_t before = preempt_arm(2);
    CHECK_OK(cnode_delete(ROOT, z.y, ROOT_DEPTH));
    CHECK(preempt_all_used(before, 2));
    CHECK(slot_empty(z.y));
    CHECK(arena_emptied(&a));
    arena_end(&a);
}
