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

struct invariants_attempt {
    volatile word_t done;
    volatile word_t status[2];
};

static void try_to_break(void *arg)
{
    struct invariants_attempt *a = arg;

    a->status[0] = sys_debug_invariants(INVARIANTS_BREAK, NULL);
    a->status[1] = sys_debug_invariants(INVARIANTS_REPAIR, NULL);
    a->done = 1;
}

/* Only the root task's first thread may plant a broken invariant: a fuzzer's stray code must not. */
TEST(debug_invariants_break_only_from_the_root_thread)
{
    static struct invariants_attempt a;
    word_t before, after;

    a.done = 0;
    CHECK_OK(sys_debug_invariants(INVARIANTS_FAILURES, &before));
    CHECK(spawn(try_to_break, &a, TEST_PRIO + 1, 0, 0));
    CHECK(wait_eq(&a.done, 1, WAIT_MS));
    CHECK_ST(a.status[0], E_ILLEGAL_OPERATION);
    CHECK_ST(a.status[1], E_ILLEGAL_OPERATION);
    CHECK_OK(sys_debug_check());
    CHECK_OK(sys_debug_invariants(INVARIANTS_FAILURES, &after));
    CHECK_EQ(after, before);
}

/* An operation the call does not know is an invalid argument (MR0 = 0), and changes nothing. */
TEST(debug_invariants_unknown_operation)
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 1), .mr = { INVARIANTS_REPAIR + 1 } };

    CHECK_ST(sys_raw(SYS_DEBUG_INVARIANTS, 0, &m), E_INVALID_ARGUMENT);
    CHECK_EQ(m.mr[0], 0);
    m = (struct msg){ .info = msginfo_new(0, 0, 0, 1), .mr = { ~(word_t)0 } };
    CHECK_ST(sys_raw(SYS_DEBUG_INVARIANTS, 0, &m), E_INVALID_ARGUMENT);
    CHECK_OK(sys_debug_check());
}

/* Nothing planted: nothing to repair. */
TEST(debug_invariants_repair_without_break)
{
    CHECK_ST(sys_debug_invariants(INVARIANTS_REPAIR, NULL), E_ILLEGAL_OPERATION);
}

/*
 * A planted break fails the kernel's check, which counts it; reading the
 * count checks nothing; once repaired the check passes and the count
 * stays.  DEBUG=0 kernels refuse to plant one, as does a machine with
 * every core the kernel supports online (no offline core to name).
 */
TEST(debug_invariants_planted_break_fails_the_check)
{
    word_t before, during, after;

    CHECK_OK(sys_debug_invariants(INVARIANTS_FAILURES, &before));
    word_t st = sys_debug_invariants(INVARIANTS_BREAK, NULL);
    if (!DEBUG) {
        CHECK_ST(st, E_ILLEGAL_OPERATION);
        return;
    }
    if (st == E_ILLEGAL_OPERATION)
        SKIP("every core the kernel supports is online: no offline core to mark");
    CHECK_OK(st);
    CHECK_ST(sys_debug_invariants(INVARIANTS_BREAK, NULL), E_ILLEGAL_OPERATION);
    CHECK_OK(sys_debug_invariants(INVARIANTS_FAILURES, &during));
    CHECK_EQ(during, before);
    CHECK_ST(sys_debug_check_counted(&during), E_INVARIANT);
    CHECK_EQ(during, before + 1);
    CHECK_OK(sys_debug_invariants(INVARIANTS_REPAIR, NULL));
    CHECK_OK(sys_debug_check_counted(&after));
    CHECK_EQ(after, before + 1);
}

struct send_report {
    cptr_t ep;
    volatile word_t status;
    volatile word_t done;
};

static void send_and_report(void *arg)
{
    struct send_report *r = arg;
    struct msg m = { 0 };

    r->status = sys_send(r->ep, &m);
    r->done = 1;
}

/*
 * Why a fuzz run's verdict is the kernel's count and not the status a
 * fuzzer reads back: between the kernel's return and the read, a thread
 * holding the caller's TCB can rewrite the status register.  Here the
 * sender's E_OK waits in its saved registers while the higher-priority
 * receiver runs and rewrites it to E_INVARIANT; the sender reads that,
 * and the kernel's count of failed checks has not moved.
 */
TEST(debug_status_read_back_can_be_rewritten)
{
    static struct send_report r;
    word_t regs[ARCH_USER_REGS], before, after;
    struct msg m;

    r.ep = ep_new();
    r.done = 0;
    r.status = E_OK;
    CHECK(r.ep);
    CHECK_OK(sys_debug_invariants(INVARIANTS_FAILURES, &before));
    struct thread *t = spawn(send_and_report, &r, TEST_PRIO - 1, 0, 0);
    CHECK(t);
    CHECK_OK(sys_recv(r.ep, &m));
    CHECK_EQ(r.done, 0);
    CHECK_OK(tcb_read_registers(t->tcb, 0, ARCH_USER_REGS, regs));
    CHECK_EQ(regs[ARCH_REG_STATUS], E_OK);
    regs[ARCH_REG_STATUS] = E_INVARIANT;
    CHECK_OK(tcb_write_registers(t->tcb, 0, ARCH_USER_REGS, regs));
    /* Above this thread, the sender runs at once to its read. */
    CHECK_OK(tcb_set_priority(t->tcb, TEST_PRIO + 1));
    CHECK_EQ(r.done, 1);
    CHECK_ST(r.status, E_INVARIANT);
    CHECK_OK(sys_debug_invariants(INVARIANTS_FAILURES, &after));
    CHECK_EQ(after, before);
}

/*
 * The console keeps lines whole (docs/console.md).  These tests print
 * lines that the host reads back from the console (tests/test_guest_suite.py,
 * test_console_lines_stay_whole): in the suite they only print.
 */

#define CONSOLE_LINES   8
#define CONSOLE_PAYLOAD 1200   /* longer than one SYS_DEBUG_PUTS call on either port */

struct console_printer {
    volatile word_t *ready, *go, *done;
    char line[CONSOLE_PAYLOAD + 64];
};

/*
 * Once every printer is ready, print CONSOLE_LINES long lines, each in
 * several calls.  A printer that is never told to go gives up waiting, so
 * that a failed test leaves no thread behind yielding at the test's
 * priority, which would starve the later tests' lower-priority threads.
 */
static void print_long_lines(void *arg)
{
    struct console_printer *p = arg;
    word_t core = sys_debug_core();
    uint64_t give_up = deadline_in(2 * WAIT_MS);

    __atomic_fetch_add(p->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(p->go, __ATOMIC_ACQUIRE) && !deadline_passed(give_up))
        sys_yield();
    for (word_t i = 0; i < CONSOLE_LINES; i++) {
        int head = snprintf(p->line, sizeof(p->line), "console-whole c=%lu n=%lu ",
                            (unsigned long)core, (unsigned long)i);
        memset(p->line + head, 'a' + (int)core, CONSOLE_PAYLOAD);
        memcpy(p->line + head + CONSOLE_PAYLOAD, " end\n", 5);
        puts_raw(p->line, (size_t)head + CONSOLE_PAYLOAD + 5);
    }
    __atomic_fetch_add(p->done, 1, __ATOMIC_RELEASE);
}

/* Every core prints long lines at the same moment; the host finds each line whole. */
TEST(debug_puts_long_lines_from_every_core)
{
    static struct console_printer printers[BOOTINFO_MAX_CORES];
    static volatile word_t ready, go, done;
    word_t n = ncores();

    ready = go = done = 0;
    for (word_t c = 0; c < n; c++) {
        printers[c] = (struct console_printer){ .ready = &ready, .go = &go, .done = &done };
        CHECK(spawn(print_long_lines, &printers[c], TEST_PRIO, c, 0));
    }
    bool all_ready = wait_eq(&ready, n, WAIT_MS);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    CHECK(wait_eq(&done, n, 3 * WAIT_MS));
    CHECK(all_ready);
    test_note("%lu cores printed %d lines of %d bytes each", (unsigned long)n, CONSOLE_LINES,
              CONSOLE_PAYLOAD);
}

static void print_own_line(void *arg)
{
    puts_raw("console-writer B\n", 17);
    *(volatile word_t *)arg = 1;
}

/*
 * This thread leaves a partial line; a higher-priority thread on the same
 * core prints a whole line before the first one ends its own.  The host
 * finds the second thread's line alone: the partial one was ended first.
 */
TEST(debug_puts_partial_line_stays_its_writers)
{
    static volatile word_t done;

    done = 0;
    puts_raw("console-writer A-begin", 22);
    CHECK(spawn(print_own_line, (void *)&done, TEST_PRIO + 1, 0, 0));
    CHECK(wait_eq(&done, 1, WAIT_MS));
    puts_raw(" A-end\n", 7);
}
