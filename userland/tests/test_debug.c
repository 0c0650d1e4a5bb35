/*
 * The debug system calls: those any thread may make, the one only the root
 * thread may, and the checker's count of failures.
 */
#include "test.h"

struct halt_attempt {
    volatile word_t done;
    volatile word_t status;
};

/* A thread of the root task other than its first one asks to end the run. */
static void try_to_halt(void *arg)
{
    struct halt_attempt *h = arg;
    struct msg m = { .info = msginfo_new(0, 0, 0, 1), .mr = { 77 } };

    h->status = sys_raw(SYS_DEBUG_HALT, 0, &m);
    h->done = 1;
}

/* Only the root task's first thread ends the run: stray code in a fuzzed thread must not. */
TEST(debug_halt_only_from_the_root_thread)
{
    static struct halt_attempt h;

    h.done = 0;
    h.status = E_OK;
    CHECK(spawn(try_to_halt, &h, TEST_PRIO + 1, 0, 0));
    CHECK(wait_eq(&h.done, 1, WAIT_MS));
    CHECK_EQ(h.status, E_ILLEGAL_OPERATION);
}

static void report_core(void *arg)
{
    *(volatile word_t *)arg = sys_debug_core() + 1;
}

/* SYS_DEBUG_CORE answers any thread with the core it runs on. */
TEST(debug_core_from_another_thread)
{
    static volatile word_t seen;
    word_t last = ncores() - 1;

    seen = 0;
    CHECK(spawn(report_core, (void *)&seen, TEST_PRIO, last, 0));
    CHECK(wait_ge(&seen, 1, WAIT_MS));
    CHECK_EQ(seen, last + 1);
}

/* SYS_DEBUG_CHECK also reports the checks failed since boot: a passing check adds none. */
TEST(debug_check_counts_failures)
{
    word_t before, after;

    CHECK_OK(sys_debug_check_counted(&before));
    CHECK_OK(sys_debug_check_counted(&after));
    CHECK_EQ(after, before);
}
