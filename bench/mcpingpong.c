/*
 * APP=mcpingpong: one independent ping-pong pair per core, each with its
 * own endpoint, TCBs and memory, as in the paper's multicore ping-pong.
 * Between receiving and replying, each server waits an exponentially
 * distributed delay with mean `delay=` cycles (0, or 500..32000), drawn
 * from a per-core xorshift generator, so the pairs model clients that
 * spend time outside the kernel.
 *
 * All clients count round trips; the counts inside one shared window of
 * the cycle counter [start + warmup, start + warmup + window) are reported.
 * Defaults: warmup = 2 s and window = 1 s at bootinfo->cycle_hz; under
 * -icount (icount=1 from the host) or with cycle_hz unknown, 20 M and
 * 100 M counter units, since the counter then counts instructions and
 * TCG runs the cores one after another.
 *
 * Under -icount QEMU runs every virtual core in one host thread, one after
 * another, and the counter advances with the instructions of all of them.
 * A core that never stops running keeps the others off the host thread:
 * QEMU moves on to the next virtual core only when the running one halts,
 * pauses, or uses up a slice that lasts until the next timer deadline of
 * the virtual clock, and a busy ping-pong pair would give core 1 no turn at
 * all (core 1 would still be in the boot IPI round when core 0's window
 * closed, and the total would be one core's figure).  So under icount each
 * client executes arch_relax() (x86 PAUSE, which makes QEMU switch cores)
 * after every round trip: the cores then take turns round trip by round
 * trip.  The record says "shared_clock": the counter is the sum of all
 * cores' instructions, so the cores' total throughput cannot grow with the
 * core count, and contention appears only where a core loses its turn while
 * holding the lock (docs/benchmarks.md).
 *
 * With lockstats=1 the statistics are reset when core 0's window opens and
 * printed (one lockstats record per core) just before the bench record,
 * which then says "lockstats": true.
 *
 * Arguments: delay=, warmup=, window=, lockstats=1, cores= (at most
 * bootinfo->ncores; default all).
 */
#include <apps.h>
#include "bench.h"

struct pair {
    cptr_t ep;
    uint64_t seed;
    uint64_t delay;
    volatile word_t count;      /* round trips so far */
    volatile word_t at_start;   /* count when the window opened */
    volatile word_t at_end;     /* count when it closed */
    volatile word_t done;
    cptr_t done_ntfn;
} __attribute__((aligned(64)));

static struct pair pairs[BOOTINFO_MAX_CORES];
static volatile uint64_t win_start, win_end;
static volatile word_t lockstats_on;
static volatile word_t take_turns;    /* under -icount: give the host thread to the next core */

static void mc_server(void *arg)
{
    struct pair *p = arg;
    uint64_t state = p->seed;
    struct msg m = { 0 };
    sys_recv(p->ep, &m);
    for (;;) {
        uint64_t d = exp_delay(&state, p->delay);
        if (d) {
            uint64_t until = arch_cycles() + d;
            while (arch_cycles() < until)
                ;
        }
        m.info = msginfo_new(0, 0, 0, 0);
        sys_reply_recv(p->ep, &m);
    }
}

static void mc_client(void *arg)
{
    struct pair *p = arg;
    bool opened = false;
    for (;;) {
        struct msg m = { .info = msginfo_new(0, 0, 0, 0) };
        sys_call(p->ep, &m);
        p->count++;
        if (take_turns)
            arch_relax();
        uint64_t now = arch_cycles();
        if (!opened && now >= win_start) {
            opened = true;
            p->at_start = p->count;
            if (lockstats_on && p == &pairs[0])
                sys_debug_lockstats(1);
        }
        if (now >= win_end) {
            p->at_end = p->count;
            p->done = 1;
            sys_signal(p->done_ntfn);
            thread_exit();
        }
    }
}

int app_mcpingpong(void)
{
    word_t cores = arg_word("cores", bootinfo->ncores);
    if (cores < 1 || cores > bootinfo->ncores)
        cores = bootinfo->ncores;
    uint64_t delay = arg_word("delay", 0);
    bool slow_clock = bench_icount() || !bootinfo->cycle_hz;
    uint64_t hz = slow_clock ? 1000000000ULL : bootinfo->cycle_hz;
    uint64_t warmup = arg_word("warmup", slow_clock ? 20000000ULL : 2 * hz);
    uint64_t window = arg_word("window", slow_clock ? 100000000ULL : hz);
    lockstats_on = arg_word("lockstats", 0) != 0;
    take_turns = bench_icount();
    if (window == 0)
        window = 1;

    tcb_set_priority(ROOT_SLOT_TCB, DEFAULT_PRIO + 10);
    cptr_t done = obj_new(OBJ_NOTIFICATION, 0);
    struct thread servers[BOOTINFO_MAX_CORES], clients[BOOTINFO_MAX_CORES];
    if (!done)
        return 1;
    /* Far in the future while the pairs are made; set for real just before they start. */
    win_start = win_end = ~(uint64_t)0;
    for (word_t c = 0; c < cores; c++) {
        struct pair *p = &pairs[c];
        memset((void *)p, 0, sizeof(*p));
        p->ep = obj_new(OBJ_ENDPOINT, 0);
        p->seed = 0x9e3779b97f4a7c15ULL * (c + 1);
        p->delay = delay;
        p->done_ntfn = done;
        struct thread_opts o = { .prio = DEFAULT_PRIO, .core = c };
        if (!p->ep || thread_create(&servers[c], &o) != E_OK ||
            thread_create(&clients[c], &o) != E_OK) {
            printf("mcpingpong: setup failed on core %lu\n", (unsigned long)c);
            return 1;
        }
    }
    for (word_t c = 0; c < cores; c++)
        thread_start(&servers[c], mc_server, &pairs[c]);
    uint64_t now = arch_cycles();
    win_start = now + warmup;
    win_end = win_start + window;
    arch_mb();
    for (word_t c = 0; c < cores; c++)
        thread_start(&clients[c], mc_client, &pairs[c]);

    /* Block until every client has closed its window (the main thread then uses no CPU). */
    tcb_set_priority(ROOT_SLOT_TCB, DEFAULT_PRIO);
    word_t finished = 0;
    while (finished < cores) {
        word_t w;
        sys_wait(done, &w);
        finished = 0;
        for (word_t c = 0; c < cores; c++)
            finished += pairs[c].done;
    }
    if (lockstats_on)
        sys_debug_lockstats(0);
    for (word_t c = 0; c < cores; c++) {
        tcb_suspend(servers[c].tcb);
        tcb_suspend(clients[c].tcb);
    }

    char env[320], per_core[400], per_mc[400], counts[400];
    bench_env_json(env, sizeof(env));
    /* Add the time base to env: the model reads env.hz. */
    size_t el = strlen(env);
    snprintf(env + el - 1, sizeof(env) - el + 1, ", \"hz\": %llu}", (unsigned long long)hz);
    uint64_t total = 0;
    size_t n1 = 0, n2 = 0, n3 = 0;
    per_core[0] = per_mc[0] = counts[0] = 0;
    for (word_t c = 0; c < cores; c++) {
        uint64_t k = pairs[c].at_end - pairs[c].at_start;
        total += k;
        n1 += snprintf(per_core + n1, sizeof(per_core) - n1, "%s%llu", c ? ", " : "",
                       (unsigned long long)(k * hz / window));
        n2 += snprintf(per_mc + n2, sizeof(per_mc) - n2, "%s%llu", c ? ", " : "",
                       (unsigned long long)(k * 1000000ULL / window));
        n3 += snprintf(counts + n3, sizeof(counts) - n3, "%s%llu", c ? ", " : "",
                       (unsigned long long)k);
    }
    printf("@@ {\"bench\": \"mcpingpong\", \"env\": %s, \"config\": {\"delay\": %llu, \"warmup\": %llu, "
           "\"window\": %llu}, \"unit\": \"%s\", \"delay\": %llu, \"cores\": %lu, "
           "\"round_trips\": %llu, \"per_core_round_trips\": [%s], \"total_rtt_per_s\": %llu, "
           "\"per_core_rtt_per_s\": [%s], \"total_rtt_per_mcycle\": %llu, "
           "\"per_core_rtt_per_mcycle\": [%s], \"shared_clock\": %s, \"lockstats\": %s}\n",
           env, (unsigned long long)delay, (unsigned long long)warmup, (unsigned long long)window,
           bench_icount() ? "instructions" : "cycles", (unsigned long long)delay,
           (unsigned long)cores, (unsigned long long)total, counts,
           (unsigned long long)(total * hz / window), per_core,
           (unsigned long long)(total * 1000000ULL / window), per_mc,
           take_turns ? "true" : "false", lockstats_on ? "true" : "false");
    return 0;
}
