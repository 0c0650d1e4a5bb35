/*
 * Preemption points (docs/kernel.md): a long Retype, Revoke or Delete must
 * stop when an interrupt is pending, let it be handled, restart, and still
 * finish with the right result.
 *
 * How long such a call takes depends on the host, so the interrupts are not
 * left to a timer: SYS_DEBUG_PREEMPT makes each of the next PREEMPT_POINTS
 * preemption points on this core raise a real interrupt (an IPI to itself)
 * before it polls.  The kernel counts the system calls that stopped at a
 * preemption point and restarted.  The call must use every armed point and
 * restart at least once per point, on any host, with or without -icount:
 * fewer restarts mean a pending interrupt was not noticed or not acted on.
 * Each restart resumes where the last one stopped; a call that started over
 * would reach its armed points again and again and never finish.
 */
#include "test.h"

#define PREEMPT_POINTS  1000    /* fewer than any call below reaches */

struct preempted {
    word_t restarts_before;
};

static void preempt_arm(struct preempted *p)
{
    word_t unused;
    p->restarts_before = sys_debug_preempt(PREEMPT_POINTS, &unused);
}

/* Disarm, and judge the call made since preempt_arm(). */
static bool preempt_judge(const struct preempted *p, const char *what)
{
    word_t unused;
    word_t restarts = sys_debug_preempt(0, &unused) - p->restarts_before;
    test_note("%s: %lu restarts, %lu of %u armed preemption points unused", what,
              (unsigned long)restarts, (unsigned long)unused, PREEMPT_POINTS);
    if (unused != 0) {
        test_fail(__FILE__, __LINE__, "%s: reached only %lu of %u preemption points", what,
                  (unsigned long)(PREEMPT_POINTS - unused), PREEMPT_POINTS);
        return false;
    }
    if (restarts < PREEMPT_POINTS) {
        test_fail(__FILE__, __LINE__, "%s: %lu restarts for %u pending interrupts", what,
                  (unsigned long)restarts, PREEMPT_POINTS);
        return false;
    }
    return true;
}

/*
 * A fresh untyped of 2^bits from a boot untyped, not from the test's arena
 * (too small).  The last boot untypeds are tried first: the allocator of
 * the root task fills them from the first.
 */
static cptr_t big_untyped(word_t bits)
{
    cptr_t s = slot_alloc();
    if (!s)
        return 0;
    word_t n = bootinfo->untyped.end - bootinfo->untyped.start;
    for (word_t i = n; i-- > 0;) {
        const struct untyped_desc *d = &bootinfo->untyped_list[i];
        if (d->is_device || d->size_bits < bits)
            continue;
        if (untyped_retype(bootinfo->untyped.start + i, OBJ_UNTYPED, bits, ROOT_SLOT_CNODE, 0, 0, s,
                           1) == E_OK)
            return s;
    }
    return 0;
}

/* Move n caps from cnode[0..n) (radix bits) into fresh root slots, recorded in out[]. */
static bool move_out(cptr_t cnode, word_t bits, word_t n, cptr_t *out)
{
    for (word_t i = 0; i < n; i++) {
        out[i] = slot_alloc();
        if (!out[i] || cnode_move(ROOT_SLOT_CNODE, out[i], ROOT_DEPTH, cnode, i, bits) != E_OK)
            return false;
    }
    return true;
}

#define BIG_BITS    27                          /* 128 MiB to clear */
#define BIG_SIZE    (1UL << BIG_BITS)
#define NLARGE      (BIG_SIZE / ARCH_LARGE_PAGE_SIZE)
#define DIRT        0x5A5A5A5AUL

/*
 * Retype of 128 MiB of dirty memory into large frames: one call, preempted
 * while it clears.  Afterwards every frame is where the watermark says,
 * none is handed out twice, the memory is zero, and the next object comes
 * right after the last frame.
 */
TEST(preempt_retype_clear)
{
    cptr_t big = big_untyped(BIG_BITS);
    CHECK(big);
    cptr_t holder = obj_new(OBJ_CNODE, 8);
    CHECK(holder);
    cptr_t f[NLARGE];
    word_t base = ~0UL;
    word_t window = vaddr_alloc(BIG_SIZE, ARCH_LARGE_PAGE_SIZE);

    /* Dirty one word in every page of it. */
    CHECK_OK(untyped_retype(big, OBJ_LARGE_FRAME, 0, holder, 0, 0, 0, NLARGE));
    CHECK(move_out(holder, 8, NLARGE, f));
    for (word_t i = 0; i < NLARGE; i++) {
        word_t pa;
        CHECK_OK(frame_get_address(f[i], &pa));
        if (i == 0)
            base = pa;
        CHECK_EQ(pa, base + i * ARCH_LARGE_PAGE_SIZE);
        CHECK_OK(map_frame(f[i], ROOT_SLOT_VSPACE, window + i * ARCH_LARGE_PAGE_SIZE,
                           RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
    }
    for (word_t off = 0; off < BIG_SIZE; off += PAGE_SIZE)
        *(volatile word_t *)(window + off + (off / PAGE_SIZE % (PAGE_SIZE / sizeof(word_t))) * sizeof(word_t)) = DIRT;
    /* Gone with their mappings; the untyped starts over and its memory is not known to be zero. */
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, big, ROOT_DEPTH));
    for (word_t i = 0; i < NLARGE; i++)
        slot_free(f[i]);

    /* All but the last large frame, so the watermark can be checked with one more object. */
    struct preempted armed;
    preempt_arm(&armed);
    word_t st = untyped_retype(big, OBJ_LARGE_FRAME, 0, holder, 0, 0, 0, NLARGE - 1);
    bool preempted = preempt_judge(&armed, "retype");
    CHECK_OK(st);
    if (!preempted)
        return;

    CHECK(move_out(holder, 8, NLARGE - 1, f));
    for (word_t i = 0; i + 1 < NLARGE; i++) {
        word_t pa;
        CHECK_OK(frame_get_address(f[i], &pa));
        CHECK_EQ(pa, base + i * ARCH_LARGE_PAGE_SIZE);
        CHECK_OK(map_frame(f[i], ROOT_SLOT_VSPACE, window + i * ARCH_LARGE_PAGE_SIZE,
                           RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
    }
    for (word_t off = 0; off < BIG_SIZE - ARCH_LARGE_PAGE_SIZE; off += PAGE_SIZE) {
        word_t w = off / PAGE_SIZE % (PAGE_SIZE / sizeof(word_t));
        volatile word_t *p = (volatile word_t *)(window + off);
        if (p[w] != 0 || p[0] != 0) {
            test_fail(__FILE__, __LINE__, "not cleared at offset 0x%lx", (unsigned long)off);
            return;
        }
    }
    /* The watermark: the next frame is the first page of the last large frame's place. */
    cptr_t next = slot_alloc();
    word_t pa;
    CHECK_OK(untyped_retype(big, OBJ_FRAME, 0, ROOT_SLOT_CNODE, 0, 0, next, 1));
    CHECK_OK(frame_get_address(next, &pa));
    CHECK_EQ(pa, base + (NLARGE - 1) * ARCH_LARGE_PAGE_SIZE);
    CHECK_OK(sys_debug_check());
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, big, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, big, ROOT_DEPTH));
}

#define OBJS_RADIX  15                          /* 32768 notifications */
#define OBJS        (1UL << OBJS_RADIX)
#define NTFN_BITS   6                           /* a notification's size (docs/abi.md) */
#define RETYPE_MAX  256

struct objects {
    cptr_t ut;          /* exactly big enough for the notifications */
    cptr_t cnode_ut;    /* exactly big enough for the CNode */
    cptr_t cn;          /* the CNode holding their caps, its only cap */
};

/* Fill cn with notifications from ut, RETYPE_MAX per call. */
static word_t fill(cptr_t ut, cptr_t cn)
{
    word_t st = E_OK;
    for (word_t i = 0; st == E_OK && i < OBJS; i += RETYPE_MAX)
        st = untyped_retype(ut, OBJ_NOTIFICATION, 0, cn, 0, 0, i, RETYPE_MAX);
    return st;
}

static bool many_objects(struct objects *o)
{
    o->ut = big_untyped(OBJS_RADIX + NTFN_BITS);
    o->cnode_ut = big_untyped(OBJS_RADIX + 6);
    o->cn = slot_alloc();
    if (!o->ut || !o->cnode_ut || !o->cn) {
        test_fail(__FILE__, __LINE__, "no untyped for %lu objects", OBJS);
        return false;
    }
    word_t st = untyped_retype(o->cnode_ut, OBJ_CNODE, OBJS_RADIX, ROOT_SLOT_CNODE, 0, 0, o->cn, 1);
    if (st == E_OK)
        st = fill(o->ut, o->cn);
    if (st != E_OK) {
        test_fail(__FILE__, __LINE__, "making the objects: %s", status_name(st));
        return false;
    }
    /* The untyped is full. */
    cptr_t s = slot_alloc();
    st = untyped_retype(o->ut, OBJ_NOTIFICATION, 0, ROOT_SLOT_CNODE, 0, 0, s, 1);
    slot_free(s);
    if (st != E_NOT_ENOUGH_MEMORY) {
        test_fail(__FILE__, __LINE__, "one notification more: %s", status_name(st));
        return false;
    }
    return true;
}

/* Signal (through a badged copy) and poll the notification in slot i of the CNode, moved out and back. */
static bool ntfn_works(cptr_t cn, word_t i)
{
    cptr_t s = slot_alloc(), b = 0;
    word_t w = 0;
    bool ok = s && cnode_move(ROOT_SLOT_CNODE, s, ROOT_DEPTH, cn, i, OBJS_RADIX) == E_OK;
    ok = ok && (b = mint(s, RIGHTS_ALL, 0x5A)) != 0;
    ok = ok && sys_signal(b) == E_OK && sys_poll(s, &w) == E_OK && w == 0x5A;
    ok = ok && cnode_delete(ROOT_SLOT_CNODE, b, ROOT_DEPTH) == E_OK;
    ok = ok && cnode_move(cn, i, OBJS_RADIX, ROOT_SLOT_CNODE, s, ROOT_DEPTH) == E_OK;
    if (b)
        slot_free(b);
    if (s)
        slot_free(s);
    return ok;
}

/*
 * Revoke of an untyped with 2^15 notifications made from it: one call,
 * preempted between children.  Afterwards the CNode that held their caps
 * is empty and the untyped starts over (its watermark is back at 0: it
 * holds exactly as many notifications again).
 */
TEST(preempt_revoke)
{
    struct objects o;
    if (!many_objects(&o))
        return;
    CHECK(ntfn_works(o.cn, 0) && ntfn_works(o.cn, OBJS - 1));
    struct preempted armed;
    preempt_arm(&armed);
    word_t st = cnode_revoke(ROOT_SLOT_CNODE, o.ut, ROOT_DEPTH);
    bool preempted = preempt_judge(&armed, "revoke");
    CHECK_OK(st);
    if (!preempted)
        return;
    CHECK_OK(sys_debug_check());
    CHECK_OK(fill(o.ut, o.cn));
    CHECK(ntfn_works(o.cn, OBJS / 2));
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, o.ut, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, o.cn, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, o.ut, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, o.cnode_ut, ROOT_DEPTH));
}

/*
 * Delete of the only cap to a CNode holding the only caps to 2^15
 * notifications: one call, preempted between the CNode's slots.
 * Afterwards both untypeds have no children: a new CNode from the first
 * and as many notifications from the second fit again.
 */
TEST(preempt_delete_cnode)
{
    struct objects o;
    if (!many_objects(&o))
        return;
    struct preempted armed;
    preempt_arm(&armed);
    word_t st = cnode_delete(ROOT_SLOT_CNODE, o.cn, ROOT_DEPTH);
    bool preempted = preempt_judge(&armed, "delete");
    CHECK_OK(st);
    if (!preempted)
        return;
    CHECK_OK(sys_debug_check());
    CHECK_ST(cnode_copy(ROOT_SLOT_CNODE, slot_alloc(), ROOT_DEPTH, ROOT_SLOT_CNODE, o.cn, ROOT_DEPTH,
                        RIGHTS_ALL), E_FAILED_LOOKUP);
    CHECK_OK(untyped_retype(o.cnode_ut, OBJ_CNODE, OBJS_RADIX, ROOT_SLOT_CNODE, 0, 0, o.cn, 1));
    CHECK_OK(fill(o.ut, o.cn));
    CHECK(ntfn_works(o.cn, OBJS - 1));
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, o.ut, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, o.cn, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, o.ut, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, o.cnode_ut, ROOT_DEPTH));
}
