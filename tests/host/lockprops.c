/*
 * Ordering and sharing properties of the lock algorithms, each checked
 * deterministically (no reliance on lucky timing):
 *
 *   lockprops fifo clh|ticket <waiters>
 *       The main thread holds the lock; waiters 1..n are started one at a
 *       time, each only after the previous one is seen queued in the lock
 *       word.  Then the lock is released; the grant order must be 1..n.
 *   lockprops readers_parallel
 *       Two readers of a big-reader lock must be inside at the same time.
 *   lockprops writer_excludes
 *       A reader must not get in while a writer holds the lock, and a
 *       writer must not get in while a reader holds it; each gets in once
 *       the other leaves.
 *
 * Prints one line, exits 0 when the property holds and 1 when it does not.
 */
#include "env.h"
#include "lock.h"
#include "clh.h"
#include "ticket.h"
#include "brlock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS LOCK_MAX_CORES

/* How long a thread is given to do something it should do promptly. */
#define PATIENCE_NS 5000000000ull
/* How long a thread that must stay blocked is watched. */
#define WATCH_NS 200000000ull

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait until *word == want (relaxed polling); false after `ns`. */
static bool wait_for(const uint32_t *word, uint32_t want, uint64_t ns)
{
    uint64_t end = now_ns() + ns;

    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != want) {
        if (now_ns() > end) {
            return false;
        }
        kernel_lock_wait_hook();
    }
    return true;
}

/* --- FIFO --------------------------------------------------------------- */

static bool use_clh;
static struct clh_lock clh;
static struct clh_core clh_cores[CLH_CORES_STORAGE(MAX_THREADS)];
static struct {
    _Alignas(LOCK_CACHE_LINE) struct ticket_lock t;
} ticket;

static unsigned grant_order[MAX_THREADS];   /* protected by the lock under test */
static unsigned granted;                    /* protected by the lock under test */

static void fifo_lock(unsigned tid)
{
    if (use_clh) {
        clh_acquire(&clh, tid, kernel_lock_wait_hook);
    } else {
        ticket_acquire(&ticket.t, kernel_lock_wait_hook);
    }
}

static void fifo_unlock(unsigned tid)
{
    if (use_clh) {
        clh_release(&clh, tid);
    } else {
        ticket_release(&ticket.t);
    }
}

static void *fifo_waiter(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;

    host_set_core(tid);
    fifo_lock(tid);
    grant_order[granted++] = tid;
    fifo_unlock(tid);
    return NULL;
}

/* Whatever identifies the most recent arrival in the lock word. */
static uintptr_t queue_mark(void)
{
    if (use_clh) {
        return (uintptr_t)__atomic_load_n(&clh.tail, __ATOMIC_ACQUIRE);
    }
    return __atomic_load_n(&ticket.t.next, __ATOMIC_ACQUIRE);
}

static int fifo(const char *which, unsigned n)
{
    pthread_t th[MAX_THREADS];

    use_clh = strcmp(which, "clh") == 0;
    if (n < 2 || n >= MAX_THREADS || (!use_clh && strcmp(which, "ticket") != 0)) {
        fprintf(stderr, "fifo clh|ticket <2..%u>\n", MAX_THREADS - 1);
        return 2;
    }
    clh_init(&clh, clh_cores, n + 1);
    ticket_init(&ticket.t);
    host_set_core(0);
    fifo_lock(0);
    for (unsigned t = 1; t <= n; t++) {
        uintptr_t before = queue_mark();
        uint64_t end = now_ns() + PATIENCE_NS;

        pthread_create(&th[t], NULL, fifo_waiter, (void *)(uintptr_t)t);
        while (queue_mark() == before) {
            if (now_ns() > end) {
                printf("fifo %s: waiter %u never queued\n", which, t);
                return 1;
            }
            kernel_lock_wait_hook();
        }
    }
    fifo_unlock(0);
    for (unsigned t = 1; t <= n; t++) {
        pthread_join(th[t], NULL);
    }
    bool ok = granted == n;
    printf("fifo %s: grant order", which);
    for (unsigned i = 0; i < granted; i++) {
        printf(" %u", grant_order[i]);
        ok = ok && grant_order[i] == i + 1;
    }
    printf("%s\n", ok ? " (FIFO)" : " (NOT FIFO)");
    return ok ? 0 : 1;
}

/* --- big-reader lock sharing -------------------------------------------- */

static struct brlock br;
static struct brlock_reader br_readers[MAX_THREADS];
static uint32_t readers_inside;     /* atomic */
static uint32_t reader_entered;     /* atomic: the blocked party got in */
static uint32_t reader_may_leave;   /* atomic */

static void *parallel_reader(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;

    host_set_core(tid);
    host_pin_core(tid);
    brlock_read_lock(&br, tid, kernel_lock_wait_hook);
    __atomic_fetch_add(&readers_inside, 1, __ATOMIC_ACQ_REL);
    /* Stay inside until the other reader is inside too, or give up. */
    wait_for(&readers_inside, 2, PATIENCE_NS);
    brlock_read_unlock(&br, tid);
    return NULL;
}

static int readers_parallel(void)
{
    pthread_t a, b;

    brlock_init(&br, br_readers, 3);
    pthread_create(&a, NULL, parallel_reader, (void *)(uintptr_t)1);
    pthread_create(&b, NULL, parallel_reader, (void *)(uintptr_t)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    bool ok = __atomic_load_n(&readers_inside, __ATOMIC_ACQUIRE) == 2;
    printf("readers_parallel: %s\n", ok ? "both readers were inside at once" : "readers were serialised");
    return ok ? 0 : 1;
}

static void *blocked_reader(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;

    host_set_core(tid);
    brlock_read_lock(&br, tid, kernel_lock_wait_hook);
    __atomic_store_n(&reader_entered, 1, __ATOMIC_RELEASE);
    wait_for(&reader_may_leave, 1, PATIENCE_NS);
    brlock_read_unlock(&br, tid);
    return NULL;
}

static void *blocked_writer(void *arg)
{
    host_set_core((unsigned)(uintptr_t)arg);
    brlock_write_lock(&br, kernel_lock_wait_hook);
    __atomic_store_n(&reader_entered, 1, __ATOMIC_RELEASE);
    brlock_write_unlock(&br);
    return NULL;
}

static int writer_excludes(void)
{
    pthread_t th;
    bool ok = true;

    brlock_init(&br, br_readers, 2);
    host_set_core(0);

    /* A writer holds: the reader must wait, then get in after the release. */
    brlock_write_lock(&br, kernel_lock_wait_hook);
    pthread_create(&th, NULL, blocked_reader, (void *)(uintptr_t)1);
    if (wait_for(&reader_entered, 1, WATCH_NS)) {
        printf("writer_excludes: a reader got in while the writer held the lock\n");
        ok = false;
    }
    brlock_write_unlock(&br);
    if (!wait_for(&reader_entered, 1, PATIENCE_NS)) {
        printf("writer_excludes: the reader never got in after the writer left\n");
        ok = false;
    }

    /* That reader now holds: a writer must wait until it leaves. */
    pthread_t w;
    __atomic_store_n(&reader_entered, 0, __ATOMIC_RELEASE);
    pthread_create(&w, NULL, blocked_writer, (void *)(uintptr_t)0);
    if (wait_for(&reader_entered, 1, WATCH_NS)) {
        printf("writer_excludes: a writer got in while a reader held the lock\n");
        ok = false;
    }
    __atomic_store_n(&reader_may_leave, 1, __ATOMIC_RELEASE);
    if (!wait_for(&reader_entered, 1, PATIENCE_NS)) {
        printf("writer_excludes: the writer never got in after the reader left\n");
        ok = false;
    }
    pthread_join(th, NULL);
    pthread_join(w, NULL);
    if (ok) {
        printf("writer_excludes: writer and reader excluded each other both ways\n");
    }
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "fifo") == 0) {
        return fifo(argv[2], (unsigned)strtoul(argv[3], NULL, 0));
    }
    if (argc == 2 && strcmp(argv[1], "readers_parallel") == 0) {
        return readers_parallel();
    }
    if (argc == 2 && strcmp(argv[1], "writer_excludes") == 0) {
        return writer_excludes();
    }
    fprintf(stderr, "usage: lockprops fifo clh|ticket <n> | readers_parallel | writer_excludes\n");
    return 2;
}
