/*
 * The kernel's per-core accounting (SYS_DEBUG_KSTATS): entries are counted
 * by cause, a busy core is never charged idle time, an idle core is, and
 * kernel and user time move only while timing is on.
 */
#include "test.h"
#include <fault_triggers.h>

static word_t kstats(word_t core, word_t flags, word_t values[KSTATS_VALUES])
{
    return sys_debug_kstats(core, flags, 0, values);
}

/* A known number of system calls on this core is counted exactly: no other thread runs here. */
TEST(kstats_counts_system_calls)
{
    word_t before[KSTATS_VALUES], after[KSTATS_VALUES];
    const word_t calls = 100;

    CHECK_OK(kstats(0, 0, before));
    for (word_t i = 0; i < calls; i++)
        sys_debug_core();
    CHECK_OK(kstats(0, 0, after));
    /* The second SYS_DEBUG_KSTATS is an entry too, counted before it reads. */
    CHECK_EQ(after[KSTATS_ENTRIES_SYSCALL] - before[KSTATS_ENTRIES_SYSCALL], calls + 1);
    CHECK_EQ(after[KSTATS_ENTRIES_FAULT], before[KSTATS_ENTRIES_FAULT]);
}

static volatile word_t fault_done;

static void run_illegal(void *arg)
{
    (void)arg;
    fault_done = arch_fault_illegal();
}

/* One user fault on this core is counted once, as a fault. */
TEST(kstats_counts_a_fault)
{
    word_t before[KSTATS_VALUES], after[KSTATS_VALUES];
    cptr_t ep = ep_new();
    struct msg m;

    CHECK(ep);
    fault_done = 0;
    CHECK_OK(kstats(0, 0, before));
    CHECK(spawn(run_illegal, NULL, TEST_PRIO, 0, ep));
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_USER_EXCEPTION);
    struct msg r = { .info = msginfo_new(0, 0, 0, 1), .mr = { (word_t)arch_fault_illegal_resume } };
    sys_reply(&r);
    CHECK(wait_eq(&fault_done, ARCH_FAULT_SKIPPED, WAIT_MS));
    CHECK_OK(kstats(0, 0, after));
    CHECK_EQ(after[KSTATS_ENTRIES_FAULT] - before[KSTATS_ENTRIES_FAULT], 1);
}

struct spinner {
    volatile word_t running;
    volatile word_t stop;
};

static void spin_until_stopped(void *arg)
{
    struct spinner *s = arg;

    s->running = 1;
    while (!s->stop)
        ;
    s->running = 2;
}

/*
 * Wait on core 0 until core `core` has taken `ticks` more timer ticks.
 * Between looks this core spins in user mode rather than yielding: a core
 * that enters the kernel all the time holds the kernel lock so often that
 * the watched core's ticks spend long waiting for it, which is real kernel
 * time, but not the idleness the test looks for.
 */
static bool wait_ticks(word_t core, word_t ticks, word_t values[KSTATS_VALUES])
{
    word_t start[KSTATS_VALUES];

    if (kstats(core, 0, start) != E_OK)
        return false;
    for (uint64_t until = deadline_in(WAIT_MS); !deadline_passed(until);) {
        if (kstats(core, 0, values) != E_OK)
            return false;
        if (values[KSTATS_TICKS] - start[KSTATS_TICKS] >= ticks)
            return true;
        if (core == 0)
            sys_yield();
        else
            spin(10000);
    }
    return false;
}

/*
 * A core with nothing to run is charged idle time while three of core 0's
 * timer ticks pass, never more than the time that passed; broken accounting
 * gives none.  Its own timer is stopped meanwhile (kernel/sched.c,
 * tick_follow_idle()): it takes no tick.  Under QEMU a virtual CPU's host
 * thread can be descheduled anywhere and for as long as the host likes:
 * while that core ends the last test's clean-up, which can take a tick
 * there, or while it is in the kernel on its way out of idle, which charges
 * a whole window to no one.  So one of five windows must show both, and
 * none may charge more idle time than passed.  No share of the time is
 * asserted either: that descheduling charges host time to whatever the core
 * was doing, so a share measures the host.
 */
TEST(kstats_idle_core_is_charged_idle_time_and_takes_no_tick)
{
    enum { WINDOWS = 5 };
    word_t core = ncores() - 1;
    word_t before[KSTATS_VALUES], after[KSTATS_VALUES], own[KSTATS_VALUES];

    if (core == 0)
        SKIP("1 core online: the only core runs this test, so no core is idle");
    CHECK_OK(kstats(core, 0, after));
    for (unsigned window = 1;; window++) {
        memcpy(before, after, sizeof(before));
        CHECK(wait_ticks(0, 3, own));
        CHECK_OK(kstats(core, 0, after));
        word_t ticks = after[KSTATS_TICKS] - before[KSTATS_TICKS];
        word_t elapsed = after[KSTATS_NOW] - before[KSTATS_NOW];
        word_t idle = after[KSTATS_IDLE] - before[KSTATS_IDLE];
        test_note("%lu ticks, idle %lu of %lu", (unsigned long)ticks, (unsigned long)idle,
                  (unsigned long)elapsed);
        CHECK(idle <= elapsed);
        if (ticks == 0 && idle > 0)
            return;
        CHECK(window < WINDOWS);
    }
}

/*
 * A core whose thread spins without a system call never runs its idle
 * thread, across several of its timer ticks: not a unit of idle time.  On
 * one core, the spinner and this test share core 0, which is just as busy.
 */
TEST(kstats_busy_core_is_never_idle)
{
    static struct spinner s;
    word_t core = ncores() - 1;
    word_t before[KSTATS_VALUES], after[KSTATS_VALUES];

    s.running = 0;
    s.stop = 0;
    CHECK(spawn(spin_until_stopped, &s, TEST_PRIO, core, 0));
    CHECK(wait_eq(&s.running, 1, WAIT_MS));
    CHECK_OK(kstats(core, 0, before));
    bool ticked = wait_ticks(core, 3, after);
    s.stop = 1;
    /* Before the test's objects are revoked under it. */
    CHECK(wait_eq(&s.running, 2, WAIT_MS));
    CHECK(ticked);
    test_note("%lu units over 3 ticks", (unsigned long)(after[KSTATS_NOW] - before[KSTATS_NOW]));
    CHECK_EQ(after[KSTATS_IDLE], before[KSTATS_IDLE]);
}

/*
 * Kernel and user time move while timing is on, and stand still once it is
 * off.  The call that turns timing off is itself charged, at its exit, so
 * the still period starts at the call after it.
 */
TEST(kstats_timing_on_and_off)
{
    word_t on[KSTATS_VALUES], mid[KSTATS_VALUES], off[KSTATS_VALUES], later[KSTATS_VALUES];

    CHECK_OK(kstats(0, KSTATS_TIME_ON, on));
    for (word_t i = 0; i < 100; i++)
        sys_debug_core();
    CHECK_OK(kstats(0, 0, mid));
    CHECK(mid[KSTATS_KERNEL] > on[KSTATS_KERNEL]);
    CHECK(mid[KSTATS_USER] > on[KSTATS_USER]);
    CHECK(mid[KSTATS_KERNEL] - on[KSTATS_KERNEL] <= mid[KSTATS_NOW] - on[KSTATS_NOW]);
    CHECK_OK(kstats(0, KSTATS_TIME_OFF, off));
    CHECK_OK(kstats(0, 0, off));
    CHECK(off[KSTATS_KERNEL] > mid[KSTATS_KERNEL]);
    for (word_t i = 0; i < 100; i++)
        sys_debug_core();
    CHECK_OK(kstats(0, 0, later));
    CHECK_EQ(later[KSTATS_KERNEL], off[KSTATS_KERNEL]);
    CHECK_EQ(later[KSTATS_USER], off[KSTATS_USER]);
}

/* Bad arguments get E_INVALID_ARGUMENT naming the argument, and change nothing. */
TEST(kstats_bad_arguments)
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 3), .mr = { ncores(), 0, 0 } };

    CHECK_ST(sys_raw(SYS_DEBUG_KSTATS, 0, &m), E_INVALID_ARGUMENT);
    CHECK_EQ(m.mr[0], 0);
    m = (struct msg){ .info = msginfo_new(0, 0, 0, 3), .mr = { 0, 1u << 7, 0 } };
    CHECK_ST(sys_raw(SYS_DEBUG_KSTATS, 0, &m), E_INVALID_ARGUMENT);
    CHECK_EQ(m.mr[0], 1);
    m = (struct msg){ .info = msginfo_new(0, 0, 0, 3),
                      .mr = { 0, KSTATS_TIME_ON | KSTATS_TIME_OFF, 0 } };
    CHECK_ST(sys_raw(SYS_DEBUG_KSTATS, 0, &m), E_INVALID_ARGUMENT);
    CHECK_EQ(m.mr[0], 1);
}
