/*
 * lockbench: the kernel's lock code (lock/), built for the host, on the
 * host's real cores.  One pinned thread per core repeats what a kernel entry
 * does to the lock: an exponentially distributed think time outside it,
 * then entry_run() (entry.h).  Driven by tools/lockbench.py; docs/benchmarks.md.
 *
 *   lockbench-<variant> --cores N [--ms M] [--delay CYCLES] [--instructions I]
 *                       [--lines L] [--objects shared|disjoint] [--abort-every E]
 *                       [--seed S]
 *
 * Prints one JSON line: {"lockbench": {...}}.  Exit 0 when no section was
 * lost (overlapping sections lose a count: the check of mutual exclusion;
 * `none` on shared objects is expected to fail it), 1 when one was, 2 on bad
 * arguments or more cores than CPUs.
 */
#include "bench_env.h"
#include "entry.h"
#include "lock.h"
#include "lockstats.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct options {
    unsigned cores;
    unsigned ms;
    double delay;             /* mean think time, TSC cycles */
    struct entry_shape shape;
    bool shared;              /* all cores on one object, else one object each */
    unsigned abort_every;     /* force an RTM abort every this many entries (0: never) */
    uint64_t seed;
};

/* Per core, written only by its thread until it is joined. */
struct core_result {
    _Alignas(LOCK_CACHE_LINE) uint64_t entries;
    uint64_t entry_cycles;    /* sum of entry_run() times */
    uint64_t finished_at;     /* TSC when the thread left its loop */
    uint64_t preemptions;     /* involuntary context switches during the run */
    bool pinned;
};

static struct options opt = {
    .cores = 1, .ms = 200, .delay = 0, .shape = {.lines = 4, .instructions = 0},
    .shared = true, .abort_every = 0, .seed = 1,
};

static struct entry_object objects[LOCK_MAX_CORES];
static struct core_result results[LOCK_MAX_CORES];

/* Start and stop flags, each on its own line: cores only read them. */
static struct { _Alignas(LOCK_CACHE_LINE) unsigned value; } ready, go, stop;

/* xorshift64*: a per-core stream, seeded apart. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* An exponentially distributed think time with the configured mean. */
static uint64_t think_time(uint64_t *state)
{
    if (opt.delay <= 0) {
        return 0;
    }
    double u = ((double)(next_random(state) >> 11) + 0.5) / 9007199254740992.0;  /* (0, 1) */
    return (uint64_t)(-opt.delay * log(u));
}

static void *core_main(void *arg)
{
    unsigned core = (unsigned)(uintptr_t)arg;
    struct core_result *r = &results[core];
    struct entry_object *o = &objects[opt.shared ? 0 : core];
    uint64_t random = opt.seed * 0x9e3779b97f4a7c15ull + core + 1;

    r->pinned = bench_pin(core);
    bench_set_core(core);
    __atomic_fetch_add(&ready.value, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&go.value, __ATOMIC_ACQUIRE)) {
        __asm__ volatile("pause");
    }
    struct rusage before, after;
    getrusage(RUSAGE_THREAD, &before);
    while (!__atomic_load_n(&stop.value, __ATOMIC_RELAXED)) {
        entry_think(think_time(&random));
        r->entries++;
        bool force = opt.abort_every != 0 && r->entries % opt.abort_every == 0;
        r->entry_cycles += entry_run(o, &opt.shape, force);
    }
    r->finished_at = lock_env_cycles();
    getrusage(RUSAGE_THREAD, &after);
    /* Another process took this thread's CPU: the run measured the host's scheduler too. */
    r->preemptions = (uint64_t)(after.ru_nivcsw - before.ru_nivcsw);
    return NULL;
}

/* TSC cycles of the section alone on this thread: the mean of many, after a warm-up. */
static double section_cycles(void)
{
    struct entry_object *o = &objects[0];
    const unsigned n = 20000;

    for (unsigned i = 0; i < n / 10; i++) {
        entry_section(o, &opt.shape);
    }
    uint64_t start = lock_env_cycles();
    for (unsigned i = 0; i < n; i++) {
        entry_section(o, &opt.shape);
    }
    double cycles = (double)(lock_env_cycles() - start) / n;
    o->sections = 0;
    return cycles;
}

static uint64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int usage(const char *why)
{
    fprintf(stderr, "lockbench: %s\n"
            "usage: lockbench-<variant> --cores N [--ms M] [--delay CYCLES] [--instructions I]\n"
            "       [--lines L] [--objects shared|disjoint] [--abort-every E] [--seed S]\n", why);
    return 2;
}

static bool parse_unsigned(const char *text, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);

    if (*text == '\0' || *end != '\0' || text[0] == '-' || v > max) {
        return false;
    }
    *out = v;
    return true;
}

static int parse(int argc, char **argv)
{
    static const struct option longs[] = {
        {"cores", required_argument, 0, 'c'},        {"ms", required_argument, 0, 'm'},
        {"delay", required_argument, 0, 'd'},        {"instructions", required_argument, 0, 'i'},
        {"lines", required_argument, 0, 'l'},        {"objects", required_argument, 0, 'o'},
        {"abort-every", required_argument, 0, 'a'},  {"seed", required_argument, 0, 's'},
        {0, 0, 0, 0},
    };
    int c;
    uint64_t v;

    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (!parse_unsigned(optarg, LOCK_MAX_CORES, &v) || v == 0)
                return usage("--cores: 1 to LOCK_MAX_CORES");
            opt.cores = (unsigned)v;
            break;
        case 'm':
            if (!parse_unsigned(optarg, 3600000, &v) || v == 0)
                return usage("--ms: 1 to 3600000");
            opt.ms = (unsigned)v;
            break;
        case 'd':
            if (!parse_unsigned(optarg, 1000000000, &v))
                return usage("--delay: 0 to 1e9 cycles");
            opt.delay = (double)v;
            break;
        case 'i':
            if (!parse_unsigned(optarg, 100000000, &v))
                return usage("--instructions: 0 to 1e8");
            opt.shape.instructions = v;
            break;
        case 'l':
            if (!parse_unsigned(optarg, ENTRY_MAX_LINES, &v))
                return usage("--lines: 0 to 16");
            opt.shape.lines = (unsigned)v;
            break;
        case 'o':
            if (strcmp(optarg, "shared") != 0 && strcmp(optarg, "disjoint") != 0)
                return usage("--objects: shared or disjoint");
            opt.shared = strcmp(optarg, "shared") == 0;
            break;
        case 'a':
            if (!parse_unsigned(optarg, UINT32_MAX, &v))
                return usage("--abort-every: a count, 0 for never");
            opt.abort_every = (unsigned)v;
            break;
        case 's':
            if (!parse_unsigned(optarg, UINT64_MAX, &v))
                return usage("--seed: a number");
            opt.seed = v;
            break;
        default:
            return usage("unknown option");
        }
    }
    if (optind != argc) {
        return usage("unexpected argument");
    }
    if (opt.cores > bench_cpus_allowed()) {
        fprintf(stderr, "lockbench: --cores %u, but this process may run on %u CPUs: "
                "every core must be a real one\n", opt.cores, bench_cpus_allowed());
        return 2;
    }
    return 0;
}

static void print_rtm(void)
{
    struct lock_stats sum = {0}, s;
    const char *why = NULL;
    bool usable = bench_rtm_usable(&why);

    for (unsigned core = 0; core < opt.cores; core++) {
        lock_stats_read(core, &s);
        lock_stats_add(&sum, &s);
    }
    printf("\"rtm\": {\"usable\": %s, \"why\": ", usable ? "true" : "false");
    if (why != NULL) {
        printf("\"%s\"", why);
    } else {
        printf("null");
    }
    printf(", \"active\": %s, \"counted\": %s, \"commits\": %" PRIu64 ", \"aborts\": {\"conflict\": %" PRIu64
           ", \"capacity\": %" PRIu64 ", \"explicit\": %" PRIu64 ", \"lock_held\": %" PRIu64
           ", \"other\": %" PRIu64 "}, \"fallbacks\": %" PRIu64 ", \"acquisitions\": %" PRIu64 "}",
           lock_rtm_active() ? "true" : "false", LOCK_STATS_ENABLED ? "true" : "false",
           sum.rtm_commits, sum.rtm_aborts_conflict, sum.rtm_aborts_capacity,
           sum.rtm_aborts_explicit, sum.rtm_aborts_lock_held, sum.rtm_aborts_other,
           sum.rtm_fallbacks, sum.acquisitions);
}

int main(int argc, char **argv)
{
    pthread_t threads[LOCK_MAX_CORES];
    int bad = parse(argc, argv);

    if (bad) {
        return bad;
    }
    for (unsigned i = 0; i < LOCK_MAX_CORES; i++) {
        object_lock_init(&objects[i].lock);
    }
    kernel_lock_init(opt.cores);
    double section = section_cycles();

    for (unsigned core = 0; core < opt.cores; core++) {
        if (pthread_create(&threads[core], NULL, core_main, (void *)(uintptr_t)core) != 0) {
            fprintf(stderr, "lockbench: pthread_create failed\n");
            return 2;
        }
    }
    while (__atomic_load_n(&ready.value, __ATOMIC_ACQUIRE) != opt.cores) {
        __asm__ volatile("pause");
    }
    uint64_t start_ns = now_ns(), start = lock_env_cycles();
    __atomic_store_n(&go.value, 1, __ATOMIC_RELEASE);
    struct timespec run = {.tv_sec = opt.ms / 1000, .tv_nsec = (long)(opt.ms % 1000) * 1000000};
    nanosleep(&run, NULL);
    __atomic_store_n(&stop.value, 1, __ATOMIC_RELAXED);

    uint64_t entries = 0, entry_cycles = 0, end = start, sections = 0, preemptions = 0;
    bool pinned = true;
    for (unsigned core = 0; core < opt.cores; core++) {
        pthread_join(threads[core], NULL);
        entries += results[core].entries;
        entry_cycles += results[core].entry_cycles;
        preemptions += results[core].preemptions;
        pinned = pinned && results[core].pinned;
        end = results[core].finished_at > end ? results[core].finished_at : end;
    }
    /* The TSC rate, from one pair of readings at each end. */
    uint64_t end_ns = now_ns(), end_tsc = lock_env_cycles();
    double tsc_hz = (double)(end_tsc - start) / ((double)(end_ns - start_ns) / 1e9);
    uint64_t elapsed = end - start;
    for (unsigned i = 0; i < LOCK_MAX_CORES; i++) {
        sections += objects[i].sections;
    }

    printf("{\"lockbench\": {\"variant\": \"%s\", \"cores\": %u, \"objects\": \"%s\", "
           "\"delay\": %.0f, \"instructions\": %" PRIu64 ", \"lines\": %u, \"ms\": %u, "
           "\"abort_every\": %u, \"pinned\": %s, \"entries\": %" PRIu64 ", \"sections\": %" PRIu64
           ", \"exclusive\": %s, \"elapsed_cycles\": %" PRIu64 ", \"tsc_hz\": %.0f, "
           "\"entry_cycles\": %.1f, \"section_cycles\": %.1f, \"preemptions\": %" PRIu64
           ", \"per_core_entries\": [",
           lock_variant_name, opt.cores, opt.shared ? "shared" : "disjoint", opt.delay,
           opt.shape.instructions, opt.shape.lines, opt.ms, opt.abort_every,
           pinned ? "true" : "false", entries, sections, sections == entries ? "true" : "false",
           elapsed, tsc_hz,
           entries ? (double)entry_cycles / (double)entries : 0.0, section, preemptions);
    for (unsigned core = 0; core < opt.cores; core++) {
        printf("%s%" PRIu64, core ? ", " : "", results[core].entries);
    }
    printf("], ");
    print_rtm();
    printf("}}\n");
    return sections == entries ? 0 : 1;
}
