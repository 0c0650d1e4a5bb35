/*
 * APP=pingpong: the IPC round trip between two threads on one core, as in
 * the paper's single-core ping-pong.  A client Calls, a server answers with
 * ReplyRecv.  Configurations: server in the same or a different address
 * space, messages of 0 or 4 words.
 *
 * Timestamps: the client reads the counter before Call (t0) and after it
 * returns (t3); the server reads it when Recv returns (t1) and before
 * ReplyRecv (t2), and leaves t1, t2 in shared memory (the image frames are
 * shared between the spaces).  One-way Call = t1 - t0, one-way ReplyRecv =
 * t3 - t2, round trip = t3 - t0, each minus the cost of one counter read.
 * Where the counter steps by more than one instruction (arm-imx6 under
 * -icount), the loop is dithered so that its means are exact (bench.h,
 * counter_dither()): runs with dither 0 after the warm-up time the loop
 * (pp_dither()).
 *
 * Arguments: runs=16 (measured runs, after one warm-up run), iters=1000
 * (round trips a run, rounded up to a multiple of the counter's step).
 * Each run gives its mean per figure; the record's statistics are over
 * the runs.  lockstats=1: the lock statistics are reset
 * just before the warm-up run and printed (one lockstats record per core)
 * just after the last run, before the bench record, which then carries
 * "ipcs": the IPCs in that window (a Call and a ReplyRecv per round trip),
 * so that tools can give barriers and lock acquisitions per IPC.
 * window=1: after the measured runs, one more run of `iters` round trips
 * between the markers of bench/window.c, with its `window` record, for
 * tools/insn_profile.py (make profile).
 * timing=1: then every configuration again with the kernel's timing on
 * (KSTATS_TIME_ON, as the Redis benchmark's window runs), each record
 * marked "timing": true, so that tools can give what timing costs a kernel
 * entry (docs/results.md).
 */
#include <apps.h>
#include "bench.h"

#define MAX_RUNS 64

struct pp_shared {
    cptr_t ep;
    word_t length;
    volatile uint64_t t1, t2;
};

static struct pp_shared pp;

static void pp_server(void *arg)
{
    (void)arg;
    struct msg m = { 0 };
    sys_recv(pp.ep, &m);
    for (;;) {
        pp.t1 = arch_cycles();
        m.info = msginfo_new(0, 0, 0, pp.length);
        pp.t2 = arch_cycles();
        sys_reply_recv(pp.ep, &m);
    }
}

/*
 * One run of n round trips: the mean of each figure, in cycles, rounded.
 * Not inlined or cloned: the timing with dither 0 and the runs with the
 * chosen dither must be the same code.
 */
static __attribute__((noinline, noclone)) void pp_run(word_t n, unsigned dither, uint64_t overhead,
                                                      uint64_t *call, uint64_t *rr, uint64_t *rtt)
{
    uint64_t sc = 0, sr = 0, st = 0;
    for (word_t i = 0; i < n; i++) {
        struct msg m = { .info = msginfo_new(0, 0, 0, pp.length), .mr = { 1, 2, 3, 4 } };
        arch_extra_instructions(dither);
        uint64_t t0 = arch_cycles();
        sys_call(pp.ep, &m);
        uint64_t t3 = arch_cycles();
        sc += pp.t1 - t0 - overhead;
        sr += t3 - pp.t2 - overhead;
        st += t3 - t0 - overhead;
    }
    *call = (sc + n / 2) / n;
    *rr = (sr + n / 2) / n;
    *rtt = (st + n / 2) / n;
}

/* Counts taken by pp_run(n, 0, ...), call included: the shorter of two tries. */
static uint64_t pp_time(word_t n, uint64_t overhead)
{
    uint64_t shortest = ~(uint64_t)0, unused[3];

    for (int i = 0; i < 2; i++) {
        uint64_t t = arch_cycles();
        pp_run(n, 0, overhead, &unused[0], &unused[1], &unused[2]);
        t = arch_cycles() - t;
        if (t < shortest)
            shortest = t;
    }
    return shortest;
}

/*
 * The dither for the runs (bench.h), from the loop timed over PP_DITHER_ROUNDS
 * round trips and over twice as many: the difference leaves out what a run
 * costs besides its round trips (the call, the reads, the three 64-bit
 * divisions, several hundred instructions on ARM).
 */
#define PP_DITHER_ROUNDS (10 * ARCH_COUNTER_STEP)

static unsigned pp_dither(uint64_t overhead)
{
    if (ARCH_COUNTER_STEP == 1)
        return 0;
    uint64_t once = pp_time(PP_DITHER_ROUNDS, overhead), twice = pp_time(2 * PP_DITHER_ROUNDS, overhead);
    return twice > once ? counter_dither(twice - once, PP_DITHER_ROUNDS) : 0;
}

/* One more run between the profile markers, and its window record. */
static void pp_window(bool same_space, word_t length, word_t iters, unsigned dither, uint64_t overhead)
{
    uint64_t call, rr, rtt;
    char config[96];

    snprintf(config, sizeof(config), "{\"same_space\": %s, \"length\": %lu, \"iters\": %lu}",
             same_space ? "true" : "false", (unsigned long)length, (unsigned long)iters);
    uint64_t begin = bench_window_begin();
    pp_run(iters, dither, overhead, &call, &rr, &rtt);
    uint64_t end = bench_window_end();
    bench_window_record("pingpong", config, begin, end, iters);
}

struct pp_options {
    word_t runs, iters;
    uint64_t overhead;      /* one counter read (timing_overhead()) */
    bool lockstats;         /* a lock statistics window around the runs */
    bool window;            /* one more run between bench/window.c's markers */
    bool timing;            /* the kernel's timing is on (KSTATS_TIME_ON) */
};

static int pp_config(bool same_space, word_t length, const struct pp_options *o)
{
    word_t runs = o->runs, iters = o->iters;
    uint64_t overhead = o->overhead;
    struct arena a;
    if (arena_begin(&a, 22) != E_OK)
        return 1;
    pp.ep = obj_new(OBJ_ENDPOINT, 0);
    pp.length = length;
    struct thread t;
    /* The server at the client's priority on core 0: Call and ReplyRecv switch directly. */
    struct thread_opts to = { .prio = DEFAULT_PRIO, .core = 0 };
    word_t st = same_space ? thread_create(&t, &to) : thread_create_space(&t, &to);
    if (!pp.ep || st != E_OK || thread_start(&t, pp_server, NULL) != E_OK) {
        printf("pingpong: setup failed (%s)\n", status_name(st));
        arena_end(&a);
        return 1;
    }

    static uint64_t call[MAX_RUNS], rr[MAX_RUNS], rtt[MAX_RUNS];
    uint64_t dummy[3];
    if (o->lockstats)
        sys_debug_lockstats(1);
    pp_run(iters, 0, overhead, &dummy[0], &dummy[1], &dummy[2]);   /* warm-up */
    unsigned dither = pp_dither(overhead);
    for (word_t r = 0; r < runs; r++)
        pp_run(iters, dither, overhead, &call[r], &rr[r], &rtt[r]);
    if (o->lockstats)
        sys_debug_lockstats(0);
    if (o->window)
        pp_window(same_space, length, iters, dither, overhead);
    uint64_t ipcs = 2 * ((uint64_t)iters * (runs + 1) + (ARCH_COUNTER_STEP > 1 ? 6 * PP_DITHER_ROUNDS : 0));

    struct stats sc, sr, stt;
    stats_of(call, runs, &sc);
    stats_of(rr, runs, &sr);
    stats_of(rtt, runs, &stt);
    char env[256], jc[160], jr[160], jt[160];
    bench_env_json(env, sizeof(env));
    stats_json(jc, sizeof(jc), &sc);
    stats_json(jr, sizeof(jr), &sr);
    stats_json(jt, sizeof(jt), &stt);
    printf("@@ {\"bench\": \"pingpong\", \"env\": %s, \"config\": {\"same_space\": %s, \"length\": %lu, "
           "\"runs\": %lu, \"iters\": %lu}, \"unit\": \"%s\", \"call\": %s, \"reply_recv\": %s, "
           "\"round_trip\": %s, \"overhead\": %llu, \"dither\": %u, \"lockstats\": %s, \"timing\": %s, "
           "\"ipcs\": %llu}\n",
           env, same_space ? "true" : "false", (unsigned long)length, (unsigned long)runs,
           (unsigned long)iters, bench_icount() ? "instructions" : "cycles", jc, jr, jt,
           (unsigned long long)overhead, dither, o->lockstats ? "true" : "false",
           o->timing ? "true" : "false", (unsigned long long)ipcs);

    tcb_suspend(t.tcb);
    arena_end(&a);
    return 0;
}

int app_pingpong(void)
{
    word_t runs = arg_word("runs", 16), iters = arg_word("iters", 1000);
    if (runs < 1)
        runs = 1;
    if (runs > MAX_RUNS)
        runs = MAX_RUNS;
    tcb_set_priority(ROOT_SLOT_TCB, DEFAULT_PRIO);
    struct pp_options o = {
        .runs = runs,
        .iters = COUNTER_STEP_ROUND(iters < 1 ? 1 : iters),
        .overhead = timing_overhead(),
        .lockstats = arg_word("lockstats", 0) != 0,
        .window = arg_word("window", 0) != 0,
    };
    printf("pingpong: %lu runs of %lu round trips, timing overhead %llu\n", (unsigned long)o.runs,
           (unsigned long)o.iters, (unsigned long long)o.overhead);
    int status = 0;
    static const struct { bool same; word_t len; } configs[] = {
        { true, 0 }, { true, 4 }, { false, 0 }, { false, 4 },
    };
    for (unsigned i = 0; i < ARRAY_SIZE(configs); i++)
        status |= pp_config(configs[i].same, configs[i].len, &o);
    if (arg_word("timing", 0) != 0) {
        word_t values[KSTATS_VALUES];
        struct pp_options timed = o;
        timed.lockstats = false;
        timed.window = false;
        timed.timing = true;
        if (sys_debug_kstats(0, KSTATS_TIME_ON, 0, values) != E_OK)
            return 1;
        for (unsigned i = 0; i < ARRAY_SIZE(configs); i++)
            status |= pp_config(configs[i].same, configs[i].len, &timed);
        if (sys_debug_kstats(0, KSTATS_TIME_OFF, 0, values) != E_OK)
            return 1;
    }
    return status;
}
