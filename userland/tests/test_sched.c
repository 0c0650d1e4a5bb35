/* Scheduling: priorities, timeslices, yield, affinity and migration. */
#include "test.h"

static volatile word_t order[8];
static volatile word_t order_n;

static void log_id(void *arg)
{
    order[order_n++] = (word_t)arg;
}

TEST(sched_higher_priority_first)
{
    order_n = 0;
    /* While the main thread is above them, nothing runs; lowering it lets the higher one go first. */
    CHECK_OK(tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO + 10));
    struct thread *lo = spawn_unstarted(TEST_PRIO + 1, 0, 0), *hi = spawn_unstarted(TEST_PRIO + 5, 0, 0);
    CHECK(lo && hi);
    CHECK_OK(thread_start(lo, log_id, (void *)1));
    CHECK_OK(thread_start(hi, log_id, (void *)2));
    CHECK_EQ(order_n, 0);
    CHECK_OK(tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO));
    CHECK_EQ(order_n, 2);
    CHECK_EQ(order[0], 2);
    CHECK_EQ(order[1], 1);
}

TEST(sched_resume_higher_preempts)
{
    order_n = 0;
    CHECK(spawn(log_id, (void *)7, TEST_PRIO + 1, 0, 0));
    /* It ran before Resume returned to us. */
    CHECK_EQ(order_n, 1);
    CHECK_EQ(order[0], 7);
}

TEST(sched_lower_priority_waits)
{
    order_n = 0;
    CHECK(spawn(log_id, (void *)3, TEST_PRIO - 1, 0, 0));
    spin(200000);
    CHECK_EQ(order_n, 0);       /* starved while we are runnable (no yield to lower priorities) */
    for (int i = 0; i < 10; i++)
        sys_yield();
    CHECK_EQ(order_n, 0);
    /* Block: now it runs. */
    cptr_t n = ntfn_new();
    CHECK(n);
    struct msg m = { 0 };
    CHECK_ST(sys_nbrecv(n, &m), E_WOULD_BLOCK);
    CHECK_OK(tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO - 2));
    CHECK_EQ(order_n, 1);
}

static volatile word_t spins[2];

static void spinner(void *arg)
{
    volatile word_t *c = arg;
    for (;;)
        (*c)++;
}

TEST(sched_timeslice_round_robin)
{
    /* Two spinners and the main thread at one priority on core 0, none yielding: only the
     * timeslice timer lets each run. */
    spins[0] = spins[1] = 0;
    struct thread *a = spawn(spinner, (void *)&spins[0], TEST_PRIO, 0, 0);
    struct thread *b = spawn(spinner, (void *)&spins[1], TEST_PRIO, 0, 0);
    CHECK(a && b);
    uint64_t start = arch_cycles();
    uint64_t limit = bootinfo->cycle_hz ? bootinfo->cycle_hz * 20 : 20000000000ULL;
    while ((spins[0] == 0 || spins[1] == 0) && arch_cycles() - start < limit)
        ;
    word_t sa = spins[0], sb = spins[1];
    CHECK_OK(tcb_suspend(a->tcb));
    CHECK_OK(tcb_suspend(b->tcb));
    CHECK(sa > 0 && sb > 0);
    test_note("spinners counted %lu and %lu", (unsigned long)sa, (unsigned long)sb);
}

static volatile word_t ping_turn, ping_rounds;

static void yielder(void *arg)
{
    word_t me = (word_t)arg;
    while (ping_rounds < 20) {
        if (ping_turn == me) {
            ping_turn = !me;
            ping_rounds++;
        }
        sys_yield();
    }
}

TEST(sched_yield_alternates)
{
    ping_turn = 0;
    ping_rounds = 0;
    CHECK_OK(tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO + 2));
    struct thread *a = spawn(yielder, (void *)0, TEST_PRIO + 1, 0, 0);
    struct thread *b = spawn(yielder, (void *)1, TEST_PRIO + 1, 0, 0);
    CHECK(a && b);
    CHECK_OK(tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO));
    /* Both ran to completion before we ran again: each yield handed over to the other. */
    CHECK_EQ(ping_rounds, 20);
}

static volatile word_t core_seen, core_stop;

static void report_core(void *arg)
{
    (void)arg;
    while (!core_stop) {
        core_seen = sys_debug_core();
        sys_yield();
    }
}

TEST(sched_affinity_migration)
{
    core_seen = ~0UL;
    core_stop = 0;
    struct thread *t = spawn(report_core, NULL, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_eq(&core_seen, 0, WAIT_MS));
    for (word_t c = 1; c <= ncores(); c++) {
        word_t target = c % ncores();
        CHECK_OK(tcb_set_affinity(t->tcb, target));
        CHECK(wait_eq(&core_seen, target, WAIT_MS));
    }
    core_stop = 1;
    if (ncores() == 1)
        test_note("1 core: migrated to core 0 only");
    else
        test_note("visited %lu cores", (unsigned long)ncores());
}

TEST(sched_debug_core_main)
{
    CHECK_EQ(sys_debug_core(), 0);
    CHECK_EQ(bootinfo->node_id, 0);
}

static void recv_then_report(void *arg)
{
    struct msg m = { 0 };
    if (sys_recv((cptr_t)arg, &m) == E_OK)
        core_seen = sys_debug_core();
}

TEST(sched_affinity_of_blocked_thread)
{
    /* A thread blocked in Recv moves core; it wakes on the new one. */
    cptr_t ep = ep_new();
    CHECK(ep);
    core_seen = ~0UL;
    struct thread *t = spawn(recv_then_report, (void *)ep, TEST_PRIO + 1, 0, 0);
    CHECK(t);
    word_t target = ncores() - 1;
    CHECK_OK(tcb_set_affinity(t->tcb, target));
    struct msg m = { .info = msginfo_new(1, 0, 0, 0) };
    CHECK_OK(sys_send(ep, &m));
    CHECK(wait_eq(&core_seen, target, WAIT_MS));
}
