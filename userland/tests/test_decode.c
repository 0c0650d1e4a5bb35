/*
 * Decode, then invoke: an invocation that fails has changed nothing.
 * Each test sets up a call that the kernel once rejected only after it had
 * deleted something, and checks that the caller's state survives the error.
 */
#include "test.h"

/*
 * ---- SetSpace of a thread on itself, from a CSpace that only its own TCB slot holds: the
 * deletion would empty the CSpace the call was looked up in (and a restart after a preemption
 * could not look it up again), so the decoder refuses it and the thread keeps its CSpace.
 */

#define OWN_RADIX   4
#define OWN_SELF    1   /* slots of the thread's own CNode */
#define OWN_VSPACE  2
#define OWN_CNODE   3

static volatile word_t own_status, own_after, own_done;

static void replace_own_cspace(void *arg)
{
    (void)arg;
    /* The new caps live in the CNode the old CSpace cap (the last one to it) names. */
    own_status = tcb_set_space(OWN_SELF, 0, OWN_CNODE, 0, OWN_VSPACE);
    /* Its CSpace still resolves: its own TCB cap is where it was. */
    own_after = tcb_set_name(OWN_SELF, "still-here");
    own_done = 1;
}

/*
 * A thread t whose CSpace is c, holding its own TCB, its VSpace and a cap to `other` (the new
 * CSpace of the calls below).  c's cap in the root CNode is kept.
 */
static bool make_own_space_thread(struct thread *t, cptr_t *c, cptr_t *other)
{
    *c = obj_new(OBJ_CNODE, OWN_RADIX);
    *other = obj_new(OBJ_CNODE, OWN_RADIX);
    struct thread_opts o = { .prio = TEST_PRIO, .core = 0, .cspace = *c,
                             .cspace_data = WORD_BITS - OWN_RADIX, .self_in_cspace = OWN_SELF };

    own_status = own_after = own_done = 0;
    return *c && *other && thread_create_space(t, &o) == E_OK &&
           cnode_copy(*c, OWN_SELF, OWN_RADIX, ROOT_SLOT_CNODE, t->tcb, ROOT_DEPTH, RIGHTS_ALL) == E_OK &&
           cnode_copy(*c, OWN_VSPACE, OWN_RADIX, ROOT_SLOT_CNODE, t->vspace, ROOT_DEPTH, RIGHTS_ALL) == E_OK &&
           cnode_copy(*c, OWN_CNODE, OWN_RADIX, ROOT_SLOT_CNODE, *other, ROOT_DEPTH, RIGHTS_ALL) == E_OK;
}

TEST(decode_set_space_keeps_cspace)
{
    cptr_t c, other;
    struct thread t;

    CHECK(make_own_space_thread(&t, &c, &other));
    /* Now the thread's CSpace slot holds the only cap to c. */
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, c, ROOT_DEPTH));
    CHECK_OK(thread_start(&t, replace_own_cspace, NULL));
    CHECK(wait_eq(&own_done, 1, WAIT_MS));
    CHECK_ST(own_status, E_ILLEGAL_OPERATION);
    CHECK_ST(own_after, E_OK);
}

/* ---- The same call when another cap to the thread's CSpace is kept: allowed, and it switches. */

#define NEW_SELF    5   /* its TCB cap in the new CSpace only */

static void switch_own_cspace(void *arg)
{
    (void)arg;
    own_status = tcb_set_space(OWN_SELF, 0, OWN_CNODE, WORD_BITS - OWN_RADIX, OWN_VSPACE);
    own_after = tcb_set_name(NEW_SELF, "switched");
    own_done = 1;
}

TEST(decode_set_space_own_cspace_kept_elsewhere)
{
    cptr_t c, other;
    struct thread t;

    CHECK(make_own_space_thread(&t, &c, &other));
    CHECK_OK(cnode_copy(other, NEW_SELF, OWN_RADIX, ROOT_SLOT_CNODE, t.tcb, ROOT_DEPTH, RIGHTS_ALL));
    /* The root task keeps its cap to c: the thread's is not the last. */
    CHECK_OK(thread_start(&t, switch_own_cspace, NULL));
    CHECK(wait_eq(&own_done, 1, WAIT_MS));
    CHECK_ST(own_status, E_OK);
    CHECK_ST(own_after, E_OK);
}

/* ---- SetIPCBuffer rejected: the thread keeps the buffer it had. */

struct buffer_user {
    volatile word_t go;
    volatile word_t status;
    volatile word_t done;
    cptr_t dest;
    cptr_t src;
};

/* An invocation with an extra cap, which the kernel reads from the caller's IPC buffer. */
static void copy_through_buffer(void *arg)
{
    struct buffer_user *u = arg;

    while (!u->go)
        sys_yield();
    u->status = cnode_copy(ROOT_SLOT_CNODE, u->dest, ROOT_DEPTH, ROOT_SLOT_CNODE, u->src, ROOT_DEPTH,
                           RIGHTS_ALL);
    u->done = 1;
}

TEST(decode_set_ipc_buffer_keeps_buffer)
{
    static struct buffer_user u;
    cptr_t frame = obj_new(OBJ_FRAME, 0), ep = ep_new();

    CHECK(frame && ep);
    u.go = u.status = u.done = 0;
    u.src = ep;
    u.dest = slot_alloc();
    CHECK(u.dest);
    struct thread *t = spawn(copy_through_buffer, &u, TEST_PRIO, 0, 0);
    CHECK(t);
    cptr_t read_only = copy_cap(frame, RIGHT_READ);
    CHECK(read_only);
    CHECK_ST(tcb_set_ipc_buffer(t->tcb, 0x50000004, frame), E_ALIGNMENT);
    CHECK_ST(tcb_set_ipc_buffer(t->tcb, 0x50000ff8, frame), E_INVALID_ARGUMENT);
    CHECK_ST(tcb_set_ipc_buffer(t->tcb, 0x50000000, read_only), E_INVALID_CAPABILITY);
    CHECK_ST(tcb_set_ipc_buffer(t->tcb, 0x50000000, ep), E_INVALID_CAPABILITY);
    u.go = 1;
    CHECK(wait_eq(&u.done, 1, WAIT_MS));
    CHECK_ST(u.status, E_OK);
    /* The copy arrived: the new slot holds a cap that badges like the endpoint. */
    CHECK(mint(u.dest, RIGHTS_ALL, 7));
}
