/*
 * Lock torture: one harness, one table of lock operations (after Linux's
 * locktorture), every lock run through the same critical sections.
 *
 *   torture <op> <threads> <iterations> [<inject> <every>]
 *
 * Each thread (a "core") repeatedly takes the lock and runs a critical
 * section.  An exclusive section increments a plain counter with a delay
 * between its read and its write, so overlapping sections lose updates,
 * and it checks an atomic "inside" count, so overlap is also seen directly.
 * A shared section (big-reader lock, read side) checks that no exclusive
 * section runs and that the counter does not change under it.  At the end
 * the counter must equal the number of exclusive sections and no violation
 * may have been seen; the program prints one JSON line and exits 0 if so,
 * 1 if the lock failed.  Each thread runs <iterations> sections or stops at
 * the first violation any thread saw; `sections_run` says how many sections
 * the threads ran in all, so a caught lock reports how long catching took.  `broken_tas` is a lock with a bug the harness
 * must catch.
 *
 * <inject> makes every <every>-th exclusive section abort an enclosing RTM
 * transaction: `explicit` (XABORT), `capacity` (writes 256 KiB), or
 * `needs_lock` (kernel_lock_require_exclusive(), op `glue` only).
 */
#include "env.h"
#include "lock.h"
#include "clh.h"
#include "ticket.h"
#include "brlock.h"
#include "rtm.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS LOCK_MAX_CORES

/* Protected by the lock under test; plain on purpose. */
static uint64_t counter;

/* Detectors, atomic (relaxed: each is a single-location count). */
static uint32_t excl_inside;
static uint32_t shared_inside;
static uint64_t violations;

enum inject { INJECT_NONE, INJECT_EXPLICIT, INJECT_CAPACITY, INJECT_NEEDS_LOCK };
static enum inject inject;
static unsigned inject_every;

#define CAPACITY_BYTES (256u * 1024u)

struct thread_slot {
    _Alignas(LOCK_CACHE_LINE) uint64_t exclusive_sections;
    uint64_t shared_sections;
    uint64_t wait_calls;
    struct lock_stats stats;    /* for ops that count outside the glue */
    unsigned char *scratch;     /* INJECT_CAPACITY: this thread's lines to dirty */
};

static struct thread_slot slots[MAX_THREADS];

struct lock_ops {
    const char *name;
    void (*init)(unsigned nthreads);
    /* Enter on `tid` for iteration `iter`; returns true for an exclusive section. */
    bool (*lock)(unsigned tid, unsigned iter);
    void (*unlock)(unsigned tid, bool exclusive);
    /* Counters of `tid` in glue statistics; NULL: slots[tid].stats. */
    void (*stats)(unsigned tid, struct lock_stats *out);
};

/* --- CLH ---------------------------------------------------------------- */

static struct clh_lock clh;
static struct clh_core clh_cores[CLH_CORES_STORAGE(MAX_THREADS)];

static void clh_op_init(unsigned n)
{
    clh_init(&clh, clh_cores, n);
}

static bool clh_op_lock(unsigned tid, unsigned iter)
{
    (void)iter;
    slots[tid].stats.contended += clh_acquire(&clh, tid, kernel_lock_wait_hook);
    return true;
}

static void clh_op_unlock(unsigned tid, bool exclusive)
{
    (void)exclusive;
    clh_release(&clh, tid);
}

/* --- ticket ------------------------------------------------------------- */

static struct {
    _Alignas(LOCK_CACHE_LINE) struct ticket_lock t;
} ticket;

static void ticket_op_init(unsigned n)
{
    (void)n;
    ticket_init(&ticket.t);
}

static bool ticket_op_lock(unsigned tid, unsigned iter)
{
    (void)iter;
    slots[tid].stats.contended += ticket_acquire(&ticket.t, kernel_lock_wait_hook);
    return true;
}

static void ticket_op_unlock(unsigned tid, bool exclusive)
{
    (void)tid;
    (void)exclusive;
    ticket_release(&ticket.t);
}

/* --- big-reader lock ---------------------------------------------------- */

static struct brlock br;
static struct brlock_reader br_readers[MAX_THREADS];

static void br_op_init(unsigned n)
{
    brlock_init(&br, br_readers, n);
}

static bool br_write_op_lock(unsigned tid, unsigned iter)
{
    (void)iter;
    slots[tid].stats.contended += brlock_write_lock(&br, kernel_lock_wait_hook);
    return true;
}

/* One section in four writes; the rest read. */
static bool br_mixed_op_lock(unsigned tid, unsigned iter)
{
    if (iter % 4 == 0) {
        return br_write_op_lock(tid, iter);
    }
    slots[tid].stats.contended += brlock_read_lock(&br, tid, kernel_lock_wait_hook) > 1;
    return false;
}

static void br_op_unlock(unsigned tid, bool exclusive)
{
    if (exclusive) {
        brlock_write_unlock(&br);
    } else {
        brlock_read_unlock(&br, tid);
    }
}

/* --- RTM elision, straight from lock/rtm.h -------------------------------- */

static struct clh_lock rtm_fallback;
static struct clh_core rtm_fallback_cores[CLH_CORES_STORAGE(MAX_THREADS)];
static struct rtm_core rtm_cores[MAX_THREADS];

static void rtm_op_init(unsigned n)
{
    clh_init(&rtm_fallback, rtm_fallback_cores, n);
}

static bool rtm_op_lock(unsigned tid, unsigned iter)
{
    (void)iter;
    rtm_elide_acquire(&rtm_fallback, &rtm_cores[tid], tid, kernel_lock_wait_hook, &slots[tid].stats);
    return true;
}

static void rtm_op_unlock(unsigned tid, bool exclusive)
{
    (void)exclusive;
    if (rtm_elide_release(&rtm_fallback.cores[tid])) {
        slots[tid].stats.rtm_commits++;
    }
}

/* --- a deliberately broken lock ------------------------------------------- */

static uint32_t tas_word;

static void tas_op_init(unsigned n)
{
    (void)n;
    __atomic_store_n(&tas_word, 0, __ATOMIC_RELAXED);
}

static void widen(void);

/*
 * BROKEN ON PURPOSE: test-and-set written as a load and a separate store
 * instead of one atomic exchange, so two threads can both see 0 and both
 * enter.  The harness must report it on any host, so the window between
 * the load and the store is widened on purpose: a delay, in which another
 * core's thread runs into the same window, and every fourth time a yield,
 * which lets another thread run even when the host gives the threads fewer
 * cores than there are threads.
 */
static bool tas_op_lock(unsigned tid, unsigned iter)
{
    (void)tid;
    while (__atomic_load_n(&tas_word, __ATOMIC_ACQUIRE) != 0) {
        kernel_lock_wait_hook();
    }
    widen();
    if (iter % 4 == 0) {
        sched_yield();
    }
    __atomic_store_n(&tas_word, 1, __ATOMIC_RELAXED);
    return true;
}

static void tas_op_unlock(unsigned tid, bool exclusive)
{
    (void)tid;
    (void)exclusive;
    __atomic_store_n(&tas_word, 0, __ATOMIC_RELEASE);
}

/* --- the kernel glue of the linked variant (lock/$(LOCK).c) ---------------- */

/* objs[0] guards the counter under `fine`; objs[2], objs[3] are private-ish. */
static struct object_lock objs[4];

struct glue_thread {
    struct object_lock *held[OBJECT_LOCKS_MAX];
    bool took_objects;
};

static _Thread_local struct glue_thread glue_me;

static void glue_op_init(unsigned n)
{
    kernel_lock_init(n);
    for (unsigned i = 0; i < 4; i++) {
        object_lock_init(&objs[i]);
    }
}

/*
 * Every eighth section is ENTRY_GENERAL.  The others are ENTRY_IPC and lock
 * objs[0] plus one more, passed unsorted, with a duplicate and a NULL; one
 * in sixteen upgrades instead (under `fine` it then holds the write side).
 */
static bool glue_op_lock(unsigned tid, unsigned iter)
{
    glue_me.took_objects = false;
    if (iter % 8 == 0) {
        kernel_lock_acquire(ENTRY_GENERAL);
        return true;
    }
    kernel_lock_acquire(ENTRY_IPC);
    if (iter % 16 == 5 && kernel_lock_upgrade()) {
        return true;
    }
    struct object_lock *mine = &objs[2 + tid % 2];
    unsigned r = iter % 4;
    glue_me.held[r] = mine;
    glue_me.held[(r + 1) % 4] = NULL;
    glue_me.held[(r + 2) % 4] = &objs[0];
    glue_me.held[(r + 3) % 4] = mine;
    object_locks_acquire(glue_me.held, OBJECT_LOCKS_MAX);
    glue_me.took_objects = true;
    return true;
}

static void glue_op_unlock(unsigned tid, bool exclusive)
{
    (void)tid;
    (void)exclusive;
    if (glue_me.took_objects) {
        object_locks_release(glue_me.held, OBJECT_LOCKS_MAX);
    }
    kernel_lock_release();
}

/*
 * The IPC fastpath's form since its endpoint lock became its only object
 * lock: ENTRY_IPC and object_lock_acquire() of objs[0], which guards the
 * counter; every eighth section is ENTRY_GENERAL.
 */
static bool glue1_op_lock(unsigned tid, unsigned iter)
{
    (void)tid;
    glue_me.took_objects = false;
    if (iter % 8 == 0) {
        kernel_lock_acquire(ENTRY_GENERAL);
        return true;
    }
    kernel_lock_acquire(ENTRY_IPC);
    object_lock_acquire(&objs[0]);
    glue_me.took_objects = true;
    return true;
}

static void glue1_op_unlock(unsigned tid, bool exclusive)
{
    (void)tid;
    (void)exclusive;
    if (glue_me.took_objects) {
        object_lock_release(&objs[0]);
    }
    kernel_lock_release();
}

static const struct lock_ops ops_table[] = {
    { "clh", clh_op_init, clh_op_lock, clh_op_unlock, NULL },
    { "ticket", ticket_op_init, ticket_op_lock, ticket_op_unlock, NULL },
    { "brlock_write", br_op_init, br_write_op_lock, br_op_unlock, NULL },
    { "brlock_mixed", br_op_init, br_mixed_op_lock, br_op_unlock, NULL },
    { "rtm", rtm_op_init, rtm_op_lock, rtm_op_unlock, NULL },
    { "broken_tas", tas_op_init, tas_op_lock, tas_op_unlock, NULL },
    { "glue", glue_op_init, glue_op_lock, glue_op_unlock, lock_stats_read },
    { "glue1", glue_op_init, glue1_op_lock, glue1_op_unlock, lock_stats_read },
};

/* --- critical sections -------------------------------------------------- */

/* Widen the window between a read and the write that depends on it. */
static void widen(void)
{
    for (volatile unsigned i = 0; i < 50; i++) {
    }
}

static void count_violation(void)
{
    __atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
}

/* A lock that failed once has failed: every thread stops at its next section. */
static bool violation_seen(void)
{
    return __atomic_load_n(&violations, __ATOMIC_RELAXED) != 0;
}

static void do_inject(unsigned tid, unsigned iter)
{
    if (inject == INJECT_NONE || iter % inject_every != inject_every - 1) {
        return;
    }
    switch (inject) {
    case INJECT_EXPLICIT:
        if (rtm_test()) {
            rtm_abort(0x01);
        }
        break;
    case INJECT_CAPACITY:
        for (unsigned off = 0; off < CAPACITY_BYTES; off += LOCK_CACHE_LINE) {
            slots[tid].scratch[off]++;
        }
        break;
    case INJECT_NEEDS_LOCK:
        kernel_lock_require_exclusive();
        /* The entry must now run holding the real lock. */
        if (rtm_test()) {
            count_violation();
        }
        break;
    case INJECT_NONE:
        break;
    }
}

/*
 * One exclusive section in SECTION_YIELD_EVERY yields while inside, so that
 * another thread runs while this one holds the lock even when the host gives
 * the threads a single core: only then can a lock that lets two threads in
 * be seen letting them in together.  Not inside a transaction, which the
 * system call would abort.
 */
#define SECTION_YIELD_EVERY 16
static bool section_may_yield;

static void exclusive_section(unsigned tid, unsigned iter)
{
    if (__atomic_fetch_add(&excl_inside, 1, __ATOMIC_RELAXED) != 0 ||
        __atomic_load_n(&shared_inside, __ATOMIC_RELAXED) != 0) {
        count_violation();
    }
    do_inject(tid, iter);
    uint64_t v = counter;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);    /* compiler only: keep the read here */
    widen();
    if (section_may_yield && iter % SECTION_YIELD_EVERY == SECTION_YIELD_EVERY - 1) {
        sched_yield();
    }
    counter = v + 1;
    __atomic_fetch_sub(&excl_inside, 1, __ATOMIC_RELAXED);
}

static void shared_section(void)
{
    __atomic_fetch_add(&shared_inside, 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&excl_inside, __ATOMIC_RELAXED) != 0) {
        count_violation();
    }
    uint64_t a = counter;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    widen();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (counter != a || __atomic_load_n(&excl_inside, __ATOMIC_RELAXED) != 0) {
        count_violation();
    }
    __atomic_fetch_sub(&shared_inside, 1, __ATOMIC_RELAXED);
}

/* --- driver ------------------------------------------------------------- */

static const struct lock_ops *ops;
static unsigned iterations;
static unsigned nthreads;
static uint32_t ready;      /* atomic: threads at the start line */

/*
 * Start line: every thread is running before any takes the lock.  A
 * pthread barrier would wake them one by one through the kernel, and on a
 * busy 2-core host the first could finish before the last started.
 */
static void start_line(void)
{
    __atomic_fetch_add(&ready, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&ready, __ATOMIC_RELAXED) != nthreads) {
        sched_yield();
    }
}

static void *thread_main(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;

    host_set_core(tid);
    host_pin_core(tid);
    start_line();
    for (unsigned i = 0; i < iterations && !violation_seen(); i++) {
        bool exclusive = ops->lock(tid, i);

        if (exclusive) {
            exclusive_section(tid, i);
            slots[tid].exclusive_sections++;
        } else {
            shared_section();
            slots[tid].shared_sections++;
        }
        ops->unlock(tid, exclusive);
    }
    slots[tid].wait_calls = host_wait_calls();
    return NULL;
}

static enum inject parse_inject(const char *s)
{
    static const char *const names[] = { "none", "explicit", "capacity", "needs_lock" };

    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i]) == 0) {
            return (enum inject)i;
        }
    }
    fprintf(stderr, "unknown injection %s\n", s);
    exit(2);
}

static int usage(void)
{
    fprintf(stderr, "usage: torture <op> <threads 1..%u> <iterations> [<inject> <every>]\nops:",
            MAX_THREADS);
    for (unsigned i = 0; i < sizeof(ops_table) / sizeof(ops_table[0]); i++) {
        fprintf(stderr, " %s", ops_table[i].name);
    }
    fprintf(stderr, "\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        return usage();
    }
    for (unsigned i = 0; i < sizeof(ops_table) / sizeof(ops_table[0]); i++) {
        if (strcmp(argv[1], ops_table[i].name) == 0) {
            ops = &ops_table[i];
        }
    }
    nthreads = (unsigned)strtoul(argv[2], NULL, 0);
    iterations = (unsigned)strtoul(argv[3], NULL, 0);
    if (ops == NULL || nthreads < 1 || nthreads > MAX_THREADS) {
        return usage();
    }
    if (argc == 6) {
        inject = parse_inject(argv[4]);
        inject_every = (unsigned)strtoul(argv[5], NULL, 0);
        if (inject_every == 0 || (inject == INJECT_NEEDS_LOCK && ops->stats == NULL)) {
            return usage();
        }
    }
    const char *why;
    bool uses_rtm = strcmp(ops->name, "rtm") == 0 || inject == INJECT_EXPLICIT ||
                    inject == INJECT_CAPACITY || inject == INJECT_NEEDS_LOCK;
    if (uses_rtm && !host_rtm_usable(&why)) {
        printf("skip: %s\n", why);
        return HOST_SKIP_EXIT;
    }
    for (unsigned t = 0; t < nthreads; t++) {
        slots[t].scratch = calloc(1, CAPACITY_BYTES);
        if (slots[t].scratch == NULL) {
            return 2;
        }
    }

    host_set_core(0);
    ops->init(nthreads);
    section_may_yield = !uses_rtm && !lock_rtm_active();
    lock_stats_reset();
    pthread_t th[MAX_THREADS];
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_create(&th[t], NULL, thread_main, (void *)(uintptr_t)t);
    }
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
    }

    uint64_t expected = 0, shared = 0, waits = 0;
    struct lock_stats sum = {0};
    for (unsigned t = 0; t < nthreads; t++) {
        struct lock_stats s;

        expected += slots[t].exclusive_sections;
        shared += slots[t].shared_sections;
        waits += slots[t].wait_calls;
        if (ops->stats != NULL) {
            ops->stats(t, &s);
        } else {
            s = slots[t].stats;
        }
        lock_stats_add(&sum, &s);
        free(slots[t].scratch);
    }
    bool ok = counter == expected && violations == 0;
    printf("{\"op\": \"%s\", \"variant\": \"%s\", \"threads\": %u, \"iterations\": %u, "
           "\"rtm_active\": %s, \"ok\": %s, \"counter\": %llu, \"expected\": %llu, "
           "\"violations\": %llu, \"sections_run\": %llu, \"shared_sections\": %llu, "
           "\"wait_hook_calls\": %llu, "
           "\"stats\": {\"acquisitions\": %llu, \"contended\": %llu, \"rtm_commits\": %llu, "
           "\"rtm_aborts\": {\"conflict\": %llu, \"capacity\": %llu, \"explicit\": %llu, "
           "\"lock_held\": %llu, \"other\": %llu}, \"rtm_fallbacks\": %llu, \"barriers\": %llu}}\n",
           ops->name, lock_variant_name, nthreads, iterations, lock_rtm_active() ? "true" : "false",
           ok ? "true" : "false", (unsigned long long)counter, (unsigned long long)expected,
           (unsigned long long)violations, (unsigned long long)(expected + shared),
           (unsigned long long)shared, (unsigned long long)waits,
           (unsigned long long)sum.acquisitions, (unsigned long long)sum.contended,
           (unsigned long long)sum.rtm_commits, (unsigned long long)sum.rtm_aborts_conflict,
           (unsigned long long)sum.rtm_aborts_capacity, (unsigned long long)sum.rtm_aborts_explicit,
           (unsigned long long)sum.rtm_aborts_lock_held, (unsigned long long)sum.rtm_aborts_other,
           (unsigned long long)sum.rtm_fallbacks, (unsigned long long)sum.barriers);
    return ok ? 0 : 1;
}
