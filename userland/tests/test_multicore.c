/*
 * Concurrency: threads on every core at once.  With one core online each
 * test still runs its whole logic, all on core 0, and says so in its detail.
 */
#include "test.h"

#define MAX_CORES BOOTINFO_MAX_CORES

static void note_cores(void)
{
    if (ncores() == 1)
        test_note("1 core online: all threads ran on core 0");
    else
        test_note("%lu cores", (unsigned long)ncores());
}

/* ---- IPC across cores through one shared endpoint */

struct shared_ep {
    cptr_t ep;
    word_t iters;
    volatile word_t done;
    volatile word_t errors;
    volatile word_t served;
};

static void mc_client(void *arg)
{
    struct shared_ep *s = arg;
    word_t me = sys_debug_core();
    for (word_t i = 0; i < s->iters; i++) {
        struct msg m = { .info = msginfo_new(1, 0, 0, 2), .mr = { me, i } };
        if (sys_call(s->ep, &m) != E_OK || m.mr[0] != me + 1 || m.mr[1] != i * 3)
            __atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&s->done, 1, __ATOMIC_RELEASE);
}

static void mc_server(void *arg)
{
    struct shared_ep *s = arg;
    struct msg m = { 0 };
    word_t st = sys_recv(s->ep, &m);
    for (;;) {
        if (st != E_OK) {
            __atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
            st = sys_recv(s->ep, &m);
            continue;
        }
        __atomic_fetch_add(&s->served, 1, __ATOMIC_RELAXED);
        m.info = msginfo_new(0, 0, 0, 2);
        m.mr[0] = m.mr[0] + 1;
        m.mr[1] = m.mr[1] * 3;
        st = sys_reply_recv(s->ep, &m);
    }
}

TEST(mc_ipc_shared_endpoint)
{
    static struct shared_ep s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    s.iters = 200;
    CHECK(s.ep);
    word_t n = ncores();
    /* A server on every core and a client on every core, all on one endpoint. */
    for (word_t c = 0; c < n; c++)
        CHECK(spawn(mc_server, &s, TEST_PRIO, c, 0));
    for (word_t c = 0; c < n; c++)
        CHECK(spawn(mc_client, &s, TEST_PRIO, c, 0));
    CHECK(wait_eq(&s.done, n, 2 * WAIT_MS));
    CHECK_EQ(s.errors, 0);
    CHECK_EQ(s.served, n * s.iters);
    note_cores();
}

TEST(mc_ipc_disjoint_endpoints)
{
    static struct shared_ep s[MAX_CORES];
    word_t n = ncores();
    for (word_t c = 0; c < n; c++) {
        memset((void *)&s[c], 0, sizeof(s[c]));
        s[c].ep = ep_new();
        s[c].iters = 300;
        CHECK(s[c].ep);
        CHECK(spawn(mc_server, &s[c], TEST_PRIO, c, 0));
        CHECK(spawn(mc_client, &s[c], TEST_PRIO, c, 0));
    }
    for (word_t c = 0; c < n; c++) {
        CHECK(wait_eq(&s[c].done, 1, 2 * WAIT_MS));
        CHECK_EQ(s[c].errors, 0);
        CHECK_EQ(s[c].served, s[c].iters);
    }
    note_cores();
}

TEST(mc_ipc_cross_core_pairs)
{
    /* Client on core c, server on core c+1: every call crosses cores. */
    static struct shared_ep s[MAX_CORES];
    word_t n = ncores();
    for (word_t c = 0; c < n; c++) {
        memset((void *)&s[c], 0, sizeof(s[c]));
        s[c].ep = ep_new();
        s[c].iters = 100;
        CHECK(s[c].ep);
        CHECK(spawn(mc_server, &s[c], TEST_PRIO, (c + 1) % n, 0));
        CHECK(spawn(mc_client, &s[c], TEST_PRIO, c, 0));
    }
    for (word_t c = 0; c < n; c++) {
        CHECK(wait_eq(&s[c].done, 1, 2 * WAIT_MS));
        CHECK_EQ(s[c].errors, 0);
    }
    note_cores();
}

/* ---- notifications from every core */

static volatile word_t sig_done;

static void mc_signaller(void *arg)
{
    cptr_t n = (cptr_t)arg;
    for (int i = 0; i < 100; i++)
        sys_signal(n);
    __atomic_fetch_add(&sig_done, 1, __ATOMIC_RELEASE);
}

TEST(mc_notification_signals)
{
    word_t n = ncores();
    cptr_t nt = ntfn_new();
    CHECK(nt);
    sig_done = 0;
    cptr_t badged[MAX_CORES];
    for (word_t c = 0; c < n; c++) {
        badged[c] = mint(nt, RIGHTS_ALL, (word_t)1 << c);
        CHECK(badged[c]);
        CHECK(spawn(mc_signaller, (void *)badged[c], TEST_PRIO, c, 0));
    }
    word_t all = 0, w;
    for (uint64_t until = deadline_in(WAIT_MS);
         !deadline_passed(until) && (sig_done < n || all != ((word_t)1 << n) - 1);) {
        if (sys_poll(nt, &w) == E_OK)
            all |= w;
        sys_yield();
    }
    CHECK_EQ(sig_done, n);
    CHECK_EQ(all, ((word_t)1 << n) - 1);
    note_cores();
}

/* ---- suspend and delete threads running on other cores */

static volatile word_t run_counts[MAX_CORES];

static void mc_spin_count(void *arg)
{
    volatile word_t *c = arg;
    for (;;)
        (*c)++;
}

TEST(mc_suspend_running_remote)
{
    word_t n = ncores();
    struct thread *t[MAX_CORES];
    for (word_t c = 0; c < n; c++) {
        run_counts[c] = 0;
        /* Below us on core 0, so only the remote ones spin for real; ours runs when we yield. */
        t[c] = spawn(mc_spin_count, (void *)&run_counts[c], c == 0 ? TEST_PRIO : TEST_PRIO + 1, c, 0);
        CHECK(t[c]);
    }
    for (word_t c = 0; c < n; c++)
        CHECK(wait_ge(&run_counts[c], 1000, WAIT_MS));
    for (word_t c = 0; c < n; c++)
        CHECK_OK(tcb_suspend(t[c]->tcb));
    word_t snap[MAX_CORES];
    for (word_t c = 0; c < n; c++)
        snap[c] = run_counts[c];
    spin(2000000);
    for (int i = 0; i < 20; i++)
        sys_yield();
    for (word_t c = 0; c < n; c++)
        CHECK_EQ(run_counts[c], snap[c]);
    /* Resume them all and see them run again, then delete them while they run. */
    for (word_t c = 0; c < n; c++)
        CHECK_OK(tcb_resume(t[c]->tcb));
    for (word_t c = 0; c < n; c++)
        CHECK(wait_ge(&run_counts[c], snap[c] + 1000, WAIT_MS));
    for (word_t c = 0; c < n; c++)
        CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, t[c]->tcb, ROOT_DEPTH));
    for (word_t c = 0; c < n; c++)
        snap[c] = run_counts[c];
    spin(2000000);
    for (word_t c = 0; c < n; c++)
        CHECK_EQ(run_counts[c], snap[c]);
    note_cores();
}

TEST(mc_set_priority_remote)
{
    word_t n = ncores();
    word_t c = n - 1;
    run_counts[c] = 0;
    struct thread *t = spawn(mc_spin_count, (void *)&run_counts[c], TEST_PRIO, c, 0);
    CHECK(t);
    CHECK(wait_ge(&run_counts[c], 100, WAIT_MS));
    /* Above us only when it is on another core, else it would take core 0 from us for good. */
    word_t hi = c ? TEST_PRIO + 3 : TEST_PRIO;
    CHECK_OK(tcb_set_priority(t->tcb, hi));
    word_t before = run_counts[c];
    CHECK(wait_ge(&run_counts[c], before + 100, WAIT_MS));
    CHECK_OK(tcb_set_priority(t->tcb, TEST_PRIO - 3));
    if (c == 0) {
        /* Now below us: it no longer runs while we yield. */
        before = run_counts[c];
        for (int i = 0; i < 20; i++)
            sys_yield();
        CHECK_EQ(run_counts[c], before);
    }
    CHECK_OK(tcb_suspend(t->tcb));
    note_cores();
}

/* ---- an address space unmapped while other cores use it */

struct shared_page {
    volatile word_t *page;
    volatile word_t progress[MAX_CORES];
};

static void mc_touch_page(void *arg)
{
    struct shared_page *sp = arg;
    word_t me = sys_debug_core();
    for (;;) {
        sp->page[me]++;
        sp->progress[me]++;
    }
}

TEST(mc_unmap_while_in_use)
{
    static struct shared_page sp;
    memset((void *)&sp, 0, sizeof(sp));
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t f;
    sp.page = frame_new_mapped(&f);
    CHECK(sp.page);
    word_t n = ncores();
    for (word_t c = 0; c < n; c++)
        CHECK(spawn(mc_touch_page, &sp, TEST_PRIO, c, ep));
    for (word_t c = 0; c < n; c++)
        CHECK(wait_ge(&sp.progress[c], 1000, WAIT_MS));
    /* Unmap: each thread touching the page must fault on its next access (TLB shootdown). */
    CHECK_OK(frame_unmap(f));
    word_t faults = 0;
    struct msg m;
    for (word_t i = 0; i < n; i++) {
        word_t st = recv_timeout(ep, &m, WAIT_MS);
        if (st != E_OK)
            break;
        CHECK_EQ(msginfo_label(m.info), FAULT_VM);
        CHECK_EQ(m.mr[1] & ~(PAGE_SIZE - 1), (word_t)sp.page);
        faults++;
    }
    CHECK_EQ(faults, n);
    /* No thread progressed after its fault was taken. */
    word_t snap[MAX_CORES];
    for (word_t c = 0; c < n; c++)
        snap[c] = sp.progress[c];
    spin(1000000);
    for (word_t c = 0; c < n; c++)
        CHECK_EQ(sp.progress[c], snap[c]);
    note_cores();
}

TEST(mc_vspace_delete_while_in_use)
{
    static volatile word_t cnt[MAX_CORES];
    word_t n = ncores();
    cptr_t ep = ep_new();
    CHECK(ep);
    /* One new space, a thread in it on every core. */
    struct thread t0;
    struct thread_opts o = { .prio = TEST_PRIO, .fault_ep = ep };
    CHECK_OK(thread_create_space(&t0, &o));
    for (word_t c = 0; c < n; c++) {
        cnt[c] = 0;
        struct thread *t = c == 0 ? &t0 : malloc(sizeof(*t));
        CHECK(t);
        if (c) {
            /* The other threads share t0's space: a TCB configured with its VSpace. */
            *t = t0;
            CHECK_OK(obj_alloc(OBJ_TCB, 0, &t->tcb));
            cptr_t ipc = obj_new(OBJ_FRAME, 0);
            CHECK(ipc);
            t->ipc_vaddr = 0x31000000UL + c * 0x10000;
            t->stack_top = t->ipc_vaddr + 0x8000 + STACK_SIZE;
            CHECK_OK(map_frame(ipc, t0.vspace, t->ipc_vaddr, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
            for (word_t p = 0; p < STACK_SIZE / PAGE_SIZE; p++) {
                cptr_t sf = obj_new(OBJ_FRAME, 0);
                CHECK(sf);
                CHECK_OK(map_frame(sf, t0.vspace, t->stack_top - STACK_SIZE + p * PAGE_SIZE,
                                   RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
            }
            CHECK_OK(tcb_configure(t->tcb, ep, ROOT_SLOT_CNODE, 0, t0.vspace, t->ipc_vaddr, ipc));
            CHECK_OK(tcb_set_priority(t->tcb, TEST_PRIO));
            CHECK_OK(tcb_set_affinity(t->tcb, c));
            t->self = t->tcb;
        }
        CHECK_OK(thread_start(t, mc_spin_count, (void *)&cnt[c]));
    }
    for (word_t c = 0; c < n; c++)
        CHECK(wait_ge(&cnt[c], 1000, WAIT_MS));
    /* Revoke first: each TCB holds a cap derived from this one, which keeps the space alive. */
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, t0.vspace, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, t0.vspace, ROOT_DEPTH));
    for (int i = 0; i < 20; i++)
        sys_yield();
    word_t snap[MAX_CORES];
    for (word_t c = 0; c < n; c++)
        snap[c] = cnt[c];
    spin(2000000);
    for (int i = 0; i < 20; i++)
        sys_yield();
    for (word_t c = 0; c < n; c++)
        CHECK_EQ(cnt[c], snap[c]);
    note_cores();
}

/* ---- deleting an endpoint with waiters from several cores */

static volatile word_t woke;

static void mc_wait_ep(void *arg)
{
    struct msg m = { 0 };
    sys_recv((cptr_t)arg, &m);
    __atomic_fetch_add(&woke, 1, __ATOMIC_RELAXED);
}

static void mc_send_ep(void *arg)
{
    struct msg m = { .info = msginfo_new(1, 0, 0, 0) };
    sys_send((cptr_t)arg, &m);
    __atomic_fetch_add(&woke, 1, __ATOMIC_RELAXED);
}

static void mc_call_ep(void *arg)
{
    struct msg m = { .info = msginfo_new(1, 0, 0, 0) };
    sys_call((cptr_t)arg, &m);
    __atomic_fetch_add(&woke, 1, __ATOMIC_RELAXED);
}

TEST(mc_delete_endpoint_with_waiters)
{
    word_t n = ncores();
    cptr_t rx = ep_new(), tx = ep_new();
    CHECK(rx && tx);
    woke = 0;
    for (word_t c = 0; c < n; c++) {
        CHECK(spawn(mc_wait_ep, (void *)rx, TEST_PRIO + 1, c, 0));
        CHECK(spawn(mc_wait_ep, (void *)rx, TEST_PRIO + 1, c, 0));
        CHECK(spawn(mc_send_ep, (void *)tx, TEST_PRIO + 1, c, 0));
        CHECK(spawn(mc_call_ep, (void *)tx, TEST_PRIO + 1, c, 0));
    }
    for (int i = 0; i < 50; i++)
        sys_yield();
    CHECK_EQ(woke, 0);
    /* Every waiter is released by the deletion, wherever it runs. */
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, rx, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, tx, ROOT_DEPTH));
    CHECK(wait_eq(&woke, 4 * n, WAIT_MS));
    note_cores();
}

/* ---- create-and-delete churn */

struct churn {
    cptr_t ep;
    volatile word_t rounds;
};

static void churn_worker(void *arg)
{
    struct churn *c = arg;
    for (;;) {
        struct msg m = { .info = msginfo_new(1, 0, 0, 1), .mr = { c->rounds } };
        sys_call(c->ep, &m);
        c->rounds++;
    }
}

TEST(mc_churn_then_check)
{
    /* Rounds of: arena, threads on every core talking through endpoints, revoke it all. */
    word_t n = ncores();
    for (int round = 0; round < 6; round++) {
        struct arena a;
        CHECK_OK(arena_begin(&a, 20));
        static struct churn ch[MAX_CORES];
        for (word_t c = 0; c < n; c++) {
            ch[c].ep = ep_new();
            ch[c].rounds = 0;
            CHECK(ch[c].ep);
            CHECK(spawn(churn_worker, &ch[c], TEST_PRIO, c, 0));
        }
        for (word_t c = 0; c < n; c++) {
            /* Serve a few calls from each. */
            for (int k = 0; k < 5; k++) {
                struct msg m = { 0 };
                if (recv_timeout(ch[c].ep, &m, WAIT_MS) != E_OK)
                    break;
                m.info = 0;
                sys_reply(&m);
            }
        }
        arena_end(&a);
        CHECK_OK(sys_debug_check());
    }
    note_cores();
}

TEST(mc_migrate_under_ipc)
{
    /* A client keeps calling while its server is moved from core to core. */
    static struct shared_ep s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    s.iters = 400;
    CHECK(s.ep);
    struct thread *srv = spawn(mc_server, &s, TEST_PRIO, 0, 0);
    CHECK(srv);
    CHECK(spawn(mc_client, &s, TEST_PRIO, ncores() - 1, 0));
    word_t core = 0;
    while (s.done == 0) {
        core = (core + 1) % ncores();
        CHECK_OK(tcb_set_affinity(srv->tcb, core));
        for (int i = 0; i < 5; i++)
            sys_yield();
    }
    CHECK_EQ(s.errors, 0);
    CHECK_EQ(s.served, s.iters);
    note_cores();
}
