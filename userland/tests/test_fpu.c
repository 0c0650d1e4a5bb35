/*
 * The FPU registers are per thread (x86_64: x87 and SSE, switched lazily by
 * the kernel): each thread keeps its own across yields, IPC, cores and
 * migration, a thread deleted while its registers are in a core's FPU does
 * not disturb the next user, and a fresh thread starts from the default
 * control state.  On every port an FPU fault goes to the fault handler
 * (x86_64: an unmasked SSE exception; arm-imx6: a VFP instruction, which
 * is undefined).
 *
 * The registers are filled and checked in assembly (thread_state.S); this
 * file is built without SSE like the rest of userland, so nothing here
 * touches them in between.  test_fpu_double.c has the compiler's own use.
 */
#include "test.h"
#include <thread_state.h>

#define FPU_ROUNDS 200
#define NO_FPU_STATE "this port keeps no FPU registers per thread (user code is soft-float)"

struct fpu_worker {
    word_t seed;
    cptr_t ep;                  /* ping-pong partner's endpoint (0: yield instead) */
    bool caller;                /* Call (else ReplyRecv) on ep */
    bool migrate;               /* move to the next core every round */
    volatile word_t rounds;
    volatile word_t wrong;      /* arch_fpu_check()'s first nonzero answer */
};

#if ARCH_FPU_PER_THREAD

/* Fill, switch away, check: FPU_ROUNDS times. */
static void fpu_worker_run(void *arg)
{
    struct fpu_worker *w = arg;
    struct msg m = { .info = msginfo_new(0, 0, 0, 1) };
    word_t n = ncores();

    if (w->ep && !w->caller)
        sys_recv(w->ep, &m);
    for (word_t i = 0; i < FPU_ROUNDS; i++) {
        arch_fpu_fill(w->seed + i);
        if (w->migrate)
            tcb_set_affinity(tls()->self, (i + 1) % n);
        else if (!w->ep)
            sys_yield();
        else if (w->caller)
            sys_call(w->ep, &m);
        else if (i + 1 < FPU_ROUNDS)
            sys_reply_recv(w->ep, &m);
        else
            sys_reply(&m);
        word_t r = arch_fpu_check(w->seed + i);
        if (r && !w->wrong)
            w->wrong = r;
        w->rounds = i + 1;
    }
}

static bool start_worker(struct fpu_worker *w, word_t seed, word_t core)
{
    w->seed = seed;
    return spawn(fpu_worker_run, w, TEST_PRIO, core, 0) != NULL;
}

static void check_workers(struct fpu_worker *w, word_t n)
{
    for (word_t i = 0; i < n; i++) {
        CHECK(wait_eq(&w[i].rounds, FPU_ROUNDS, WAIT_MS));
        CHECK_EQ(w[i].wrong, 0);
    }
}

TEST(fpu_registers_per_thread_on_one_core)
{
    struct fpu_worker *w = calloc(4, sizeof(*w));
    cptr_t ep = ep_new();
    CHECK(w && ep);
    /* Two yield; two ping-pong by Call and ReplyRecv, the IPC fastpath's direct switch. */
    CHECK(start_worker(&w[0], 0x1000, 0));
    CHECK(start_worker(&w[1], 0x2000, 0));
    w[2].ep = w[3].ep = ep;
    w[3].caller = true;
    CHECK(start_worker(&w[2], 0x3000, 0));
    CHECK(start_worker(&w[3], 0x4000, 0));
    check_workers(w, 4);
}

TEST(fpu_registers_per_thread_on_other_cores)
{
    word_t n = ncores();
    if (n < 2)
        SKIP("needs 2 cores: FPU users on other cores than the test's, and migration");
    struct fpu_worker *w = calloc(2 * n + 1, sizeof(*w));
    CHECK(w);
    for (word_t i = 0; i < 2 * n; i++)
        CHECK(start_worker(&w[i], 0x10000 * (i + 1), i % n));
    /* One moves to the next core between its fill and its check, every round. */
    w[2 * n].migrate = true;
    CHECK(start_worker(&w[2 * n], 0x10000 * (2 * n + 1), 0));
    check_workers(w, 2 * n + 1);
    test_note("%lu FPU users on %lu cores, one migrating", (unsigned long)(2 * n + 1), (unsigned long)n);
}

struct fpu_holder {
    word_t control;             /* its control state */
    cptr_t ep;
    volatile word_t stage;      /* 1: registers filled, blocked; 2: checked after the wake-up */
    volatile word_t wrong;
    volatile word_t control_seen;
};

/* Take the FPU (the fill), then block on ep with the registers still in the core's FPU. */
static void fpu_holder_run(void *arg)
{
    struct fpu_holder *h = arg;
    struct msg m;

    arch_fpu_fill(0x5000);
    arch_fpu_set_control(h->control);
    h->stage = 1;
    sys_recv(h->ep, &m);
    h->control_seen = arch_fpu_control();
    h->wrong = arch_fpu_check(0x5000);
    h->stage = 2;
}

/* A fresh thread's control state (run once). */
static void fpu_control_reader(void *arg)
{
    struct fpu_holder *h = arg;

    h->control_seen = arch_fpu_control();
    h->stage = 1;
}

TEST(fpu_fresh_thread_state)
{
    struct fpu_holder *h = calloc(2, sizeof(*h));
    CHECK(h);
    h[0].ep = ep_new();
    CHECK(h[0].ep);
    h[0].control = ARCH_FPU_CONTROL_OTHER;
    CHECK(spawn(fpu_holder_run, &h[0], TEST_PRIO, 0, 0));
    CHECK(wait_eq(&h[0].stage, 1, WAIT_MS));
    /* The holder's registers, another control state among them, are in the FPU. */
    CHECK(spawn(fpu_control_reader, &h[1], TEST_PRIO, 0, 0));
    CHECK(wait_eq(&h[1].stage, 1, WAIT_MS));
    CHECK_EQ(h[1].control_seen, ARCH_FPU_CONTROL_FRESH);
    struct msg m = { .info = msginfo_new(0, 0, 0, 0) };
    CHECK_OK(sys_send(h[0].ep, &m));
    CHECK(wait_eq(&h[0].stage, 2, WAIT_MS));
    CHECK_EQ(h[0].control_seen, ARCH_FPU_CONTROL_OTHER);
    CHECK_EQ(h[0].wrong, 0);
}

/*
 * Delete a thread whose registers are in the FPU of its core: the kernel
 * takes them back before the TCB goes, and the next thread to use that
 * FPU gets its own fresh registers, then keeps what it puts there.
 */
TEST(fpu_owner_deleted)
{
    word_t n = ncores();
    for (word_t core = 0; core < n && core < 2; core++) {
        struct fpu_holder *h = calloc(2, sizeof(*h));
        struct fpu_worker *w = calloc(1, sizeof(*w));
        CHECK(h && w);
        h[0].ep = ep_new();
        h[0].control = ARCH_FPU_CONTROL_OTHER;
        CHECK(h[0].ep);
        struct thread *t = spawn(fpu_holder_run, &h[0], TEST_PRIO, core, 0);
        CHECK(t);
        CHECK(wait_eq(&h[0].stage, 1, WAIT_MS));
        CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, t->tcb, ROOT_DEPTH));
        CHECK(spawn(fpu_control_reader, &h[1], TEST_PRIO, core, 0));
        CHECK(wait_eq(&h[1].stage, 1, WAIT_MS));
        CHECK_EQ(h[1].control_seen, ARCH_FPU_CONTROL_FRESH);
        CHECK(start_worker(w, 0x6000, core));
        check_workers(w, 1);
    }
    test_note("on %lu core(s)", (unsigned long)(n < 2 ? n : 2));
}

static volatile word_t simd_fault_result;

static void run_simd_fault(void *arg)
{
    (void)arg;
    simd_fault_result = arch_fault_simd();
}

/*
 * An unmasked SSE exception is #XM, a user exception like any other.  QEMU's
 * TCG raises none (it only sets the flag in MXCSR), so there the division
 * completes and the test says so.
 */
TEST(fpu_simd_exception_goes_to_the_handler)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    simd_fault_result = 0;
    CHECK(spawn(run_simd_fault, NULL, TEST_PRIO, 0, ep));
    struct msg m;
    uint64_t deadline = deadline_in(WAIT_MS);
    word_t st;
    while ((st = sys_nbrecv(ep, &m)) == E_WOULD_BLOCK && simd_fault_result == 0 && !deadline_passed(deadline))
        sys_yield();
    if (st == E_WOULD_BLOCK && simd_fault_result == ARCH_FAULT_NONE)
        SKIP("the CPU raised no SIMD exception (#XM) for an unmasked divide by zero");
    CHECK_OK(st);
    CHECK_EQ(msginfo_label(m.info), FAULT_USER_EXCEPTION);
    CHECK_EQ(m.mr[0], (word_t)arch_fault_simd_at);
    CHECK_EQ(m.mr[2], ARCH_EXC_SIMD);
    struct msg r = { .info = msginfo_new(0, 0, 0, 1), .mr = { (word_t)arch_fault_simd_resume } };
    sys_reply(&r);
    CHECK(wait_eq(&simd_fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}

#else

TEST(fpu_registers_per_thread_on_one_core)
{
    SKIP(NO_FPU_STATE);
}

TEST(fpu_registers_per_thread_on_other_cores)
{
    SKIP(NO_FPU_STATE);
}

TEST(fpu_fresh_thread_state)
{
    SKIP(NO_FPU_STATE);
}

TEST(fpu_owner_deleted)
{
    SKIP(NO_FPU_STATE);
}

TEST(fpu_simd_exception_goes_to_the_handler)
{
    SKIP(NO_FPU_STATE);
}

#endif

static volatile word_t fpu_fault_result;

static void run_fpu_fault(void *arg)
{
    (void)arg;
    fpu_fault_result = arch_fault_fpu();
}

TEST(fpu_fault_goes_to_the_handler)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    fpu_fault_result = 0;
    struct thread *t = spawn(run_fpu_fault, NULL, TEST_PRIO, 0, ep);
    CHECK(t);
    struct msg m;
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_USER_EXCEPTION);
    CHECK_EQ(m.mr[0], (word_t)arch_fault_fpu_at);
    CHECK_EQ(m.mr[2], ARCH_EXC_FPU);
    struct msg r = { .info = msginfo_new(0, 0, 0, 1), .mr = { (word_t)arch_fault_fpu_resume } };
    sys_reply(&r);
    CHECK(wait_eq(&fpu_fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}
