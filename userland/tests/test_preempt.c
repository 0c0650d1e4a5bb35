/*
 * Preemption points (docs/kernel.md): a long Retype, Revoke or Delete on
 * core 0 must let a pending interrupt through, restart, and still finish
 * with the right result.
 *
 * The observable: a thread of higher priority on the same core waits on a
 * notification bound to the port's user-level timer IRQ
 * (bootinfo->timer_irq) and records the cycle counter at each tick.  The
 * kernel runs with interrupts off, so without preemption points no tick can
 * be handled while the long call is in the kernel: at most one tick that
 * arrived before the call and one that became pending during it fall
 * between the caller's two readings of the counter.  Three or more ticks
 * inside the window mean the call was interrupted and restarted; the
 * largest gap between them bounds the latency the call added.
 */
#include "test.h"

#define MAX_TICKS       1024
#define TICKER_PRIO     (TEST_PRIO + 10)
#define MIN_INSIDE      3       /* ticks strictly inside the long call */
#define PERIOD_TICKS    7       /* ticks after the first that measure the period */

struct ticker {
    cptr_t ntfn;
    cptr_t handler;
    volatile word_t stop;
    volatile word_t n;                  /* ticks seen */
    volatile uint64_t at[MAX_TICKS];    /* cycle counter at each */
};

static struct ticker tk;

static void ticker_main(void *arg)
{
    struct ticker *k = arg;
    while (!k->stop) {
        word_t w;
        if (sys_wait(k->ntfn, &w) != E_OK)
            break;
        uint64_t now = arch_cycles();
        word_t i = k->n;
        if (i < MAX_TICKS)
            k->at[i] = now;
        k->n = i + 1;
        irq_handler_ack(k->handler);
    }
}

/* The timer IRQ's handler bound to a fresh notification, and the ticker thread on core 0. */
static bool ticker_start(struct ticker *k)
{
    if (bootinfo->timer_irq == ~0UL) {
        test_fail(__FILE__, __LINE__, "no user-level timer IRQ on %s: nothing to observe preemption with",
                  bootinfo->arch);
        return false;
    }
    memset((void *)k, 0, sizeof(*k));
    k->handler = slot_alloc();
    k->ntfn = ntfn_new();
    if (!k->handler || !k->ntfn) {
        test_fail(__FILE__, __LINE__, "no slot or notification");
        return false;
    }
    word_t st = irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE,
                                k->handler, ROOT_DEPTH);
    if (st == E_OK)
        st = irq_handler_set_notification(k->handler, k->ntfn);
    if (st == E_OK)
        st = irq_handler_ack(k->handler);
    if (st != E_OK) {
        test_fail(__FILE__, __LINE__, "timer IRQ %lu: %s", (unsigned long)bootinfo->timer_irq,
                  status_name(st));
        return false;
    }
    if (!spawn(ticker_main, k, TICKER_PRIO, 0, 0))
        return false;
    /* It runs whenever a tick comes: wait for a few, to know the period. */
    if (!wait_ge_seconds(&k->n, PERIOD_TICKS + 1, 10)) {
        test_fail(__FILE__, __LINE__, "the timer IRQ ticked %lu times", (unsigned long)k->n);
        return false;
    }
    return true;
}

static void ticker_stop(struct ticker *k)
{
    k->stop = 1;
    irq_handler_clear(k->handler);
}

/* The median of the gaps between the first ticks (one stall of the host does not skew it). */
static uint64_t ticker_period(const struct ticker *k)
{
    uint64_t g[PERIOD_TICKS - 1];
    for (word_t i = 0; i + 1 < PERIOD_TICKS; i++) {
        uint64_t v = k->at[i + 2] - k->at[i + 1];
        word_t j = i;
        for (; j > 0 && g[j - 1] > v; j--)
            g[j] = g[j - 1];
        g[j] = v;
    }
    return g[(PERIOD_TICKS - 1) / 2];
}

static unsigned long us(uint64_t cycles)
{
    uint64_t hz = bootinfo->cycle_hz ? bootinfo->cycle_hz : 1000000000ULL;
    return (unsigned long)(cycles * 1000000 / hz);
}

/*
 * Whether the ticker ran while one call, between the readings t0 and t1,
 * was in the kernel: enough ticks strictly inside (interrupts are off in the
 * kernel, so without a preemption point at most two can land inside one
 * call), and ticks handled at about the timer's rate throughout (the median
 * gap between them at most three periods).  The call's length is noted but
 * not judged against the period: the period is measured from the ticks, and
 * a busy host stretches it.  The largest gap is noted but not judged either:
 * under TCG on a loaded host a vCPU may be descheduled for tens of
 * milliseconds, which looks the same.
 */
static uint64_t gaps[MAX_TICKS + 1];

static bool ticked_during(const struct ticker *k, const char *what, uint64_t t0, uint64_t t1)
{
    uint64_t period = ticker_period(k), last = t0, largest = 0;
    word_t inside = 0, n = k->n < MAX_TICKS ? k->n : MAX_TICKS, ngaps = 0;
    for (word_t i = 0; i < n; i++) {
        if (k->at[i] <= t0 || k->at[i] >= t1)
            continue;
        inside++;
        gaps[ngaps++] = k->at[i] - last;
        last = k->at[i];
    }
    gaps[ngaps++] = t1 - last;
    /* Sorted, for the median (a few dozen entries). */
    for (word_t i = 1; i < ngaps; i++) {
        uint64_t g = gaps[i];
        word_t j = i;
        for (; j > 0 && gaps[j - 1] > g; j--)
            gaps[j] = gaps[j - 1];
        gaps[j] = g;
    }
    largest = gaps[ngaps - 1];
    uint64_t median = gaps[ngaps / 2];
    test_note("%s: %lu us, %lu ticks of %lu us inside, gap median %lu us, largest %lu us", what,
              us(t1 - t0), (unsigned long)inside, us(period), us(median), us(largest));
    if (inside < MIN_INSIDE) {
        test_fail(__FILE__, __LINE__, "%s: only %lu ticks handled during it (not preempted)", what,
                  (unsigned long)inside);
        return false;
    }
    if (median > 3 * period) {
        test_fail(__FILE__, __LINE__, "%s: ticks handled every %lu us (median), period %lu us", what,
                  us(median), us(period));
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
 * Retype of 64 MiB of dirty memory into large frames: one call, preempted
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

    if (!ticker_start(&tk))
        return;
    /* All but the last large frame, so the watermark can be checked with one more object. */
    uint64_t t0 = arch_cycles();
    word_t st = untyped_retype(big, OBJ_LARGE_FRAME, 0, holder, 0, 0, 0, NLARGE - 1);
    uint64_t t1 = arch_cycles();
    ticker_stop(&tk);
    CHECK_OK(st);
    if (!ticked_during(&tk, "retype", t0, t1))
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
    if (!ticker_start(&tk))
        return;
    uint64_t t0 = arch_cycles();
    word_t st = cnode_revoke(ROOT_SLOT_CNODE, o.ut, ROOT_DEPTH);
    uint64_t t1 = arch_cycles();
    ticker_stop(&tk);
    CHECK_OK(st);
    if (!ticked_during(&tk, "revoke", t0, t1))
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
    if (!ticker_start(&tk))
        return;
    uint64_t t0 = arch_cycles();
    word_t st = cnode_delete(ROOT_SLOT_CNODE, o.cn, ROOT_DEPTH);
    uint64_t t1 = arch_cycles();
    ticker_stop(&tk);
    CHECK_OK(st);
    if (!ticked_during(&tk, "delete", t0, t1))
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
