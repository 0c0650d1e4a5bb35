/* CNode invocations, rights, badges and the derivation tree. */
#include "test.h"

#define ROOT ROOT_SLOT_CNODE

static bool cap_present(cptr_t s)
{
    /* A zero-length NBSend on an endpoint returns E_OK; an empty slot fails lookup. */
    struct msg m = { .info = 0 };
    return sys_nbsend(s, &m) == E_OK;
}

TEST(cnode_copy_basic)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t c = slot_alloc();
    CHECK_OK(cnode_copy(ROOT, c, ROOT_DEPTH, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL));
    CHECK(cap_present(c));
    CHECK(cap_present(ep));
}

TEST(cnode_copy_dest_occupied)
{
    cptr_t a = ep_new(), b = ep_new();
    CHECK(a && b);
    CHECK_ST(cnode_copy(ROOT, b, ROOT_DEPTH, ROOT, a, ROOT_DEPTH, RIGHTS_ALL), E_DELETE_FIRST);
}

TEST(cnode_copy_source_empty)
{
    cptr_t s = slot_alloc(), d = slot_alloc();
    CHECK_ST(cnode_copy(ROOT, d, ROOT_DEPTH, ROOT, s, ROOT_DEPTH, RIGHTS_ALL), E_FAILED_LOOKUP);
}

TEST(cnode_bad_depth)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    word_t st = cnode_copy(ROOT, slot_alloc(), ROOT_DEPTH + 1, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL);
    CHECK(st == E_RANGE || st == E_FAILED_LOOKUP);
    st = cnode_copy(ROOT, slot_alloc(), 3, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL);
    CHECK(st == E_FAILED_LOOKUP || st == E_RANGE);
}

TEST(cnode_guard_mismatch)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    /* Bits above the radix must match the guard (0): a set high bit fails the lookup. */
    struct msg m = { 0 };
    CHECK_ST(sys_nbsend(ep | ((word_t)1 << (WORD_BITS - 1)), &m), E_FAILED_LOOKUP);
    CHECK_ST(sys_nbsend(ep | ((word_t)1 << ROOT_CNODE_BITS), &m), E_FAILED_LOOKUP);
}

TEST(cnode_invoke_empty_slot)
{
    cptr_t s = slot_alloc();
    struct msg m = { .info = msginfo_new(TCB_SUSPEND, 0, 0, 0) };
    CHECK_ST(sys_call(s, &m), E_FAILED_LOOKUP);
    CHECK_ST(sys_send(s, &m), E_FAILED_LOOKUP);
    CHECK_ST(sys_nbrecv(s, &m), E_FAILED_LOOKUP);
}

static volatile word_t badge_seen, label_seen, mr_seen;

static void recv_once(void *arg)
{
    cptr_t ep = (cptr_t)arg;
    struct msg m = { 0 };
    if (sys_recv(ep, &m) == E_OK) {
        label_seen = msginfo_label(m.info);
        mr_seen = m.mr[0];
        badge_seen = m.badge;
    }
}

TEST(cnode_mint_badge_delivered)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t b = mint(ep, RIGHTS_ALL, 0x1234);
    CHECK(b);
    badge_seen = label_seen = 0;
    CHECK(spawn(recv_once, (void *)ep, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(7, 0, 0, 1), .mr = { 99 } };
    CHECK_OK(sys_send(b, &m));
    CHECK(wait_eq(&label_seen, 7, WAIT_MS));
    CHECK_EQ(badge_seen, 0x1234);
    CHECK_EQ(mr_seen, 99);
}

TEST(cnode_mint_rebadge_refused)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t b = mint(ep, RIGHTS_ALL, 5);
    CHECK(b);
    cptr_t s = slot_alloc();
    CHECK_ST(cnode_mint(ROOT, s, ROOT_DEPTH, ROOT, b, ROOT_DEPTH, RIGHTS_ALL, 6), E_ILLEGAL_OPERATION);
}

TEST(cnode_mint_removes_rights)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t ro = mint(ep, RIGHT_READ, 0);
    CHECK(ro);
    struct msg m = { 0 };
    CHECK_ST(sys_nbsend(ro, &m), E_INVALID_CAPABILITY);
    CHECK_ST(sys_nbrecv(ro, &m), E_WOULD_BLOCK);
    cptr_t wo = mint(ep, RIGHT_WRITE, 0);
    CHECK(wo);
    CHECK_ST(sys_nbrecv(wo, &m), E_INVALID_CAPABILITY);
    /* Rights can only shrink: a copy of the read-only cap asking for all rights stays read-only. */
    cptr_t c = copy_cap(ro, RIGHTS_ALL);
    CHECK(c);
    CHECK_ST(sys_nbsend(c, &m), E_INVALID_CAPABILITY);
}

TEST(cnode_move)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t d = slot_alloc();
    CHECK_OK(cnode_move(ROOT, d, ROOT_DEPTH, ROOT, ep, ROOT_DEPTH));
    CHECK(cap_present(d));
    CHECK(!cap_present(ep));
    CHECK_ST(cnode_move(ROOT, slot_alloc(), ROOT_DEPTH, ROOT, ep, ROOT_DEPTH), E_FAILED_LOOKUP);
}

TEST(cnode_mutate_badge)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t c = copy_cap(ep, RIGHTS_ALL);
    CHECK(c);
    cptr_t d = slot_alloc();
    CHECK_OK(cnode_mutate(ROOT, d, ROOT_DEPTH, ROOT, c, ROOT_DEPTH, 0x77));
    CHECK(!cap_present(c));
    badge_seen = label_seen = 0;
    CHECK(spawn(recv_once, (void *)ep, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(3, 0, 0, 0) };
    CHECK_OK(sys_send(d, &m));
    CHECK(wait_eq(&label_seen, 3, WAIT_MS));
    CHECK_EQ(badge_seen, 0x77);
}

TEST(cnode_delete)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    CHECK_OK(cnode_delete(ROOT, ep, ROOT_DEPTH));
    CHECK(!cap_present(ep));
    /* Deleting an empty slot is not an error. */
    CHECK_OK(cnode_delete(ROOT, ep, ROOT_DEPTH));
}

TEST(cnode_revoke_children)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t c1 = copy_cap(ep, RIGHTS_ALL), c2 = mint(ep, RIGHTS_ALL, 9);
    CHECK(c1 && c2);
    cptr_t gc = copy_cap(c2, RIGHTS_ALL);
    CHECK(gc);
    CHECK_OK(cnode_revoke(ROOT, ep, ROOT_DEPTH));
    CHECK(cap_present(ep));
    CHECK(!cap_present(c1));
    CHECK(!cap_present(c2));
    CHECK(!cap_present(gc));
}

TEST(cnode_revoke_subtree_only)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t a = mint(ep, RIGHTS_ALL, 1), b = mint(ep, RIGHTS_ALL, 2);
    CHECK(a && b);
    cptr_t a1 = copy_cap(a, RIGHTS_ALL);
    CHECK(a1);
    CHECK_OK(cnode_revoke(ROOT, a, ROOT_DEPTH));
    CHECK(cap_present(a));
    CHECK(!cap_present(a1));
    CHECK(cap_present(b));
}

static volatile word_t blocked_status;

static void recv_status(void *arg)
{
    struct msg m = { 0 };
    blocked_status = 1000 + sys_recv((cptr_t)arg, &m);
}

TEST(cnode_delete_last_cap_wakes_waiter)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t c = copy_cap(ep, RIGHTS_ALL);
    CHECK(c);
    blocked_status = 0;
    struct thread *t = spawn(recv_status, (void *)c, TEST_PRIO + 1, 0, 0);
    CHECK(t);
    /* It ran first (higher priority) and blocks on the endpoint. */
    CHECK_EQ(blocked_status, 0);
    CHECK_OK(cnode_delete(ROOT, c, ROOT_DEPTH));
    CHECK_EQ(blocked_status, 0);        /* another cap remains: still blocked */
    CHECK_OK(cnode_delete(ROOT, ep, ROOT_DEPTH));
    CHECK(wait_ge(&blocked_status, 1000, WAIT_MS));
    test_note("waiter woke with %s", status_name(blocked_status - 1000));
}

TEST(cnode_rotate)
{
    cptr_t a = ep_new(), b = ep_new();
    CHECK(a && b);
    cptr_t ma = mint(a, RIGHTS_ALL, 11), mb = mint(b, RIGHTS_ALL, 22);
    CHECK(ma && mb);
    cptr_t dest = slot_alloc();
    /* The pivot's cap (mb, of b) moves to dest, the source's (ma, of a) to the pivot slot. */
    CHECK_OK(cnode_rotate(ROOT, dest, ROOT_DEPTH, 0, ROOT, mb, ROOT_DEPTH, 0, ROOT, ma, ROOT_DEPTH));
    CHECK(cap_present(dest));
    CHECK(cap_present(mb));
    CHECK(!cap_present(ma));
    badge_seen = label_seen = 0;
    CHECK(spawn(recv_once, (void *)b, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(4, 0, 0, 0) };
    CHECK_OK(sys_send(dest, &m));
    CHECK(wait_eq(&label_seen, 4, WAIT_MS));
    CHECK_EQ(badge_seen, 22);
    badge_seen = label_seen = 0;
    CHECK(spawn(recv_once, (void *)a, TEST_PRIO + 1, 0, 0));
    m.info = msginfo_new(5, 0, 0, 0);
    CHECK_OK(sys_send(mb, &m));
    CHECK(wait_eq(&label_seen, 5, WAIT_MS));
    CHECK_EQ(badge_seen, 11);
    /* The pivot may not be the source or the destination. */
    CHECK_ST(cnode_rotate(ROOT, dest, ROOT_DEPTH, 0, ROOT, dest, ROOT_DEPTH, 0, ROOT, mb, ROOT_DEPTH),
             E_ILLEGAL_OPERATION);
}

TEST(cnode_rotate_badges)
{
    cptr_t a = ep_new(), b = ep_new();
    CHECK(a && b);
    cptr_t ca = copy_cap(a, RIGHTS_ALL), cb = copy_cap(b, RIGHTS_ALL);
    CHECK(ca && cb);
    cptr_t dest = slot_alloc();
    /* Each cap that moves takes its new slot's badge: b's cap to dest with 33, a's to the pivot with 44. */
    CHECK_OK(cnode_rotate(ROOT, dest, ROOT_DEPTH, 33, ROOT, cb, ROOT_DEPTH, 44, ROOT, ca, ROOT_DEPTH));
    badge_seen = label_seen = 0;
    CHECK(spawn(recv_once, (void *)b, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(6, 0, 0, 0) };
    CHECK_OK(sys_send(dest, &m));
    CHECK(wait_eq(&label_seen, 6, WAIT_MS));
    CHECK_EQ(badge_seen, 33);
    badge_seen = label_seen = 0;
    CHECK(spawn(recv_once, (void *)a, TEST_PRIO + 1, 0, 0));
    m.info = msginfo_new(7, 0, 0, 0);
    CHECK_OK(sys_send(cb, &m));
    CHECK(wait_eq(&label_seen, 7, WAIT_MS));
    CHECK_EQ(badge_seen, 44);
    /* A badged cap cannot be badged again, and nothing moves when that is refused. */
    cptr_t other = slot_alloc();
    CHECK_ST(cnode_rotate(ROOT, other, ROOT_DEPTH, 55, ROOT, dest, ROOT_DEPTH, 0, ROOT, cb, ROOT_DEPTH),
             E_ILLEGAL_OPERATION);
    CHECK(cap_present(dest) && cap_present(cb) && !cap_present(other));
}

TEST(cnode_rotate_dest_occupied)
{
    cptr_t a = ep_new(), b = ep_new(), c = ep_new();
    CHECK(a && b && c);
    CHECK_ST(cnode_rotate(ROOT, c, ROOT_DEPTH, 0, ROOT, b, ROOT_DEPTH, 0, ROOT, a, ROOT_DEPTH),
             E_DELETE_FIRST);
}

TEST(cnode_copy_untyped_no_double_use)
{
    /* A copy of an untyped is its child: while it exists the original may not retype, so the
     * two caps never hand out the same memory twice. */
    cptr_t ut = obj_new(OBJ_UNTYPED, 12);
    CHECK(ut);
    cptr_t c = slot_alloc();
    CHECK_OK(cnode_copy(ROOT, c, ROOT_DEPTH, ROOT, ut, ROOT_DEPTH, RIGHTS_ALL));
    cptr_t f1 = slot_alloc(), f2 = slot_alloc();
    CHECK_ST(untyped_retype(ut, OBJ_FRAME, 0, ROOT, 0, 0, f1, 1), E_REVOKE_FIRST);
    CHECK_OK(untyped_retype(c, OBJ_FRAME, 0, ROOT, 0, 0, f2, 1));
    CHECK_ST(untyped_retype(ut, OBJ_FRAME, 0, ROOT, 0, 0, f1, 1), E_REVOKE_FIRST);
    /* And an untyped with children cannot be copied. */
    CHECK_ST(cnode_copy(ROOT, slot_alloc(), ROOT_DEPTH, ROOT, c, ROOT_DEPTH, RIGHTS_ALL), E_REVOKE_FIRST);
}

TEST(cnode_second_level)
{
    /* A CNode of 16 slots as a second level: copy a cap into it and address it through the root. */
    cptr_t cn = obj_new(OBJ_CNODE, 4);
    CHECK(cn);
    cptr_t ep = ep_new();
    CHECK(ep);
    CHECK_OK(cnode_copy(cn, 3, 4, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_ST(cnode_copy(cn, 3, 4, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_DELETE_FIRST);
    /* Only the low `depth` bits of an index count: 19 at depth 4 is slot 3. */
    CHECK_ST(cnode_copy(cn, 19, 4, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_DELETE_FIRST);
    /* A depth the CNode cannot consume exactly fails the lookup. */
    CHECK_ST(cnode_copy(cn, 3, 5, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_FAILED_LOOKUP);
    cptr_t back = slot_alloc();
    CHECK_OK(cnode_move(ROOT, back, ROOT_DEPTH, cn, 3, 4));
    CHECK(cap_present(back));
}

TEST(cnode_guard_data)
{
    /* A CNode of 16 slots minted with a 4-bit guard 0xa resolves 8 bits: the guard, then the index. */
    cptr_t cn = obj_new(OBJ_CNODE, 4), ep = ep_new(), g = slot_alloc(), m = slot_alloc();
    CHECK(cn && ep && g && m);
    CHECK_OK(cnode_mint(ROOT, g, ROOT_DEPTH, ROOT, cn, ROOT_DEPTH, RIGHTS_ALL, guard_data_new(4, 0xa)));
    CHECK_OK(cnode_copy(g, 0xa3, 8, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_ST(cnode_copy(cn, 3, 4, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_DELETE_FIRST);
    CHECK_ST(cnode_copy(g, 0xb3, 8, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_FAILED_LOOKUP);
    /* A guard value wider than its length, and a guard too long for the word beside the radix. */
    CHECK_ST(cnode_mint(ROOT, m, ROOT_DEPTH, ROOT, cn, ROOT_DEPTH, RIGHTS_ALL, guard_data_new(4, 0x1a)),
             E_INVALID_ARGUMENT);
    CHECK_EQ(invoke_last_detail(0), 5);
    CHECK_ST(cnode_mint(ROOT, m, ROOT_DEPTH, ROOT, cn, ROOT_DEPTH, RIGHTS_ALL,
                        guard_data_new(WORD_BITS - 3, 0)), E_INVALID_ARGUMENT);
    /* Mutate takes the same guard data, and refuses it the same way. */
    CHECK_ST(cnode_mutate(ROOT, m, ROOT_DEPTH, ROOT, g, ROOT_DEPTH, guard_data_new(WORD_BITS - 3, 0)),
             E_INVALID_ARGUMENT);
    CHECK_OK(cnode_mutate(ROOT, m, ROOT_DEPTH, ROOT, g, ROOT_DEPTH, guard_data_new(5, 0x15)));
    CHECK_ST(cnode_copy(m, 0x153, 9, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_DELETE_FIRST);
    CHECK_ST(cnode_copy(m, 0xa3, 8, ROOT, ep, ROOT_DEPTH, RIGHTS_ALL), E_FAILED_LOOKUP);
}
