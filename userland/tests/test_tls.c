/*
 * TCB SetTLSBase: every thread reads its own TLS base through the port's
 * thread pointer (arch/<port>/user/thread_state.h), across switches on one
 * core, on other cores, and when another thread changes it; bad calls get
 * their defined errors.
 *
 * Each base points at a word holding its own address, as musl's thread
 * pointer points at its thread's self pointer, so that reading the word at
 * the thread pointer (x86_64: %fs:0) or the register itself (arm-imx6:
 * TPIDRURO) gives the base either way.
 */
#include "test.h"
#include <thread_state.h>

#define TLS_ROUNDS 300

struct tls_worker {
    word_t self_word;           /* at the base: its own address */
    word_t next_word;           /* at the base given while it runs (tls_base_changed_while_running) */
    cptr_t tcb;
    bool sets_own;              /* the thread sets its base itself, else the test did */
    volatile word_t rounds;     /* rounds done */
    volatile word_t wrong;      /* the first wrong thread pointer read (0: none) */
    volatile word_t failed;     /* its own SetTLSBase failed with this status */
};

static word_t base_of(struct tls_worker *w)
{
    return (word_t)&w->self_word;
}

/* Read the thread pointer, yield, read again, TLS_ROUNDS times. */
static void tls_reader(void *arg)
{
    struct tls_worker *w = arg;

    if (w->sets_own) {
        word_t st = tcb_set_tls_base(tls()->self, base_of(w));
        if (st != E_OK) {
            w->failed = st;
            w->rounds = TLS_ROUNDS;
            return;
        }
    }
    for (word_t i = 0; i < TLS_ROUNDS; i++) {
        word_t tp = arch_thread_pointer_word();
        if (tp != base_of(w) && w->wrong == 0)
            w->wrong = tp ? tp : 1;
        w->rounds = i + 1;
        sys_yield();
    }
}

/* Start a reader on `core`; its base is set by the test before it runs, or by itself. */
static bool start_reader(struct tls_worker *w, word_t core, bool sets_own)
{
    w->self_word = base_of(w);
    w->sets_own = sets_own;
    struct thread *t = spawn_unstarted(TEST_PRIO, core, 0);
    if (!t)
        return false;
    w->tcb = t->tcb;
    if (!sets_own && tcb_set_tls_base(t->tcb, base_of(w)) != E_OK) {
        test_fail(__FILE__, __LINE__, "SetTLSBase on a new thread failed");
        return false;
    }
    if (thread_start(t, tls_reader, w) != E_OK) {
        test_fail(__FILE__, __LINE__, "thread_start failed");
        return false;
    }
    return true;
}

static void check_readers(struct tls_worker *w, word_t n)
{
    for (word_t i = 0; i < n; i++) {
        CHECK(wait_eq(&w[i].rounds, TLS_ROUNDS, WAIT_MS));
        CHECK_EQ(w[i].failed, E_OK);
        CHECK_EQ(w[i].wrong, 0);
    }
}

TEST(tls_base_per_thread_on_one_core)
{
    struct tls_worker *w = calloc(3, sizeof(*w));
    CHECK(w);
    /* One sets its own base (loaded on its return from the call), two are given theirs. */
    CHECK(start_reader(&w[0], 0, true));
    CHECK(start_reader(&w[1], 0, false));
    CHECK(start_reader(&w[2], 0, false));
    check_readers(w, 3);
}

TEST(tls_base_per_thread_on_other_cores)
{
    word_t n = ncores();
    if (n < 2)
        SKIP("needs 2 cores: readers on other cores than the test's");
    struct tls_worker *w = calloc(2 * n, sizeof(*w));
    CHECK(w);
    for (word_t i = 0; i < 2 * n; i++)
        CHECK(start_reader(&w[i], i % n, i % 2 == 0));
    check_readers(w, 2 * n);
    test_note("%lu readers on %lu cores", (unsigned long)(2 * n), (unsigned long)n);
}

/* Spin, without a system call, until the thread pointer is the second base. */
static void tls_waiter(void *arg)
{
    struct tls_worker *w = arg;
    word_t next = (word_t)&w->next_word;

    while (arch_thread_pointer_word() != next)
        w->rounds++;
    w->wrong = next;
}

TEST(tls_base_changed_while_running)
{
    word_t n = ncores();
    struct tls_worker *w = calloc(1, sizeof(*w));
    CHECK(w);
    w->self_word = base_of(w);
    w->next_word = (word_t)&w->next_word;
    /* On another core it runs while the test changes its base; on one, its timeslices
     * alternate with the test's yields. */
    word_t core = n > 1 ? 1 : 0;
    struct thread *t = spawn_unstarted(TEST_PRIO, core, 0);
    CHECK(t);
    CHECK_OK(tcb_set_tls_base(t->tcb, base_of(w)));
    CHECK_OK(thread_start(t, tls_waiter, w));
    CHECK(wait_ge(&w->rounds, 1, WAIT_MS));
    CHECK_OK(tcb_set_tls_base(t->tcb, w->next_word));
    CHECK(wait_eq(&w->wrong, w->next_word, WAIT_MS));
    CHECK_OK(tcb_suspend(t->tcb));
    test_note("the thread ran on core %lu", (unsigned long)core);
}

TEST(tls_base_bad_calls)
{
    struct thread *t = spawn_unstarted(TEST_PRIO, 0, 0);
    CHECK(t);
    cptr_t empty = slot_alloc();
    CHECK(empty);
    CHECK_ST(tcb_set_tls_base(empty, 0x1000), E_FAILED_LOOKUP);
    cptr_t frame = obj_new(OBJ_FRAME, 0);
    CHECK(frame);
    CHECK_ST(tcb_set_tls_base(frame, 0x1000), E_ILLEGAL_OPERATION);
    CHECK_ST(invoke(t->tcb, TCB_SET_TLS_BASE, 0, NULL, 0, NULL, NULL), E_TRUNCATED_MESSAGE);
    if (ARCH_HAS_INVALID_TLS_BASE) {
        CHECK_ST(tcb_set_tls_base(t->tcb, ARCH_INVALID_TLS_BASE), E_INVALID_ARGUMENT);
        CHECK_EQ(invoke_last_detail(0), 0);
    } else {
        test_note("every word is a valid TLS base on this port");
    }
    CHECK_OK(tcb_set_tls_base(t->tcb, 0));
}
