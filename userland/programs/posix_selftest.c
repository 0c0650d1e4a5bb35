/*
 * The personality's own test (docs/posix.md): a program built with the C
 * library like any other, run by `app=posix`, that uses each family of
 * calls the personality implements and checks what comes back, including
 * the errors.  It prints one record,
 *     @@ {"posix_selftest": {"checks": {"<check>": true|false, ...}, "failed": N}}
 * and exits with the number of failed checks (app=posix ends the run with
 * that status).  At its start and its end it also prints its clocks,
 *     @@ {"posix_realtime": {"monotonic_ns": M, "realtime_ns": R}}
 * which the host compares with its own clock as it reads the line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <abi/errors.h>
#include <abi/invocation.h>
#include <abi/ipc_buffer.h>
#include <abi/syscalls.h>
#include <arch_user.h>
#include <posix_start.h>
#include <syscall_arch.h>

static char record[4096];
static size_t used;
static int failed;

static void check(const char *name, int ok)
{
    used += (size_t)snprintf(record + used, sizeof record - used, "%s\"%s\": %s",
                             used ? ", " : "", name, ok ? "true" : "false");
    if (!ok)
        failed++;
}

static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts))
        return -1;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Monotonic first, then real time: R - M is then never below the Unix time
 * the personality adds to the counter (the boot's realtime_ms), which the
 * host checks.
 */
static void print_clocks(void)
{
    long long mono = now_ns(CLOCK_MONOTONIC);
    long long real = now_ns(CLOCK_REALTIME);
    printf("@@ {\"posix_realtime\": {\"monotonic_ns\": %lld, \"realtime_ns\": %lld}}\n", mono, real);
    fflush(stdout);
}

/* Memory: malloc of many sizes, then large mappings that must come back zeroed. */
static void memory(void)
{
    int ok = 1;
    void *blocks[200];
    for (int i = 0; i < 200; i++) {
        size_t size = (size_t)(i * 977 % 70000) + 1;
        blocks[i] = malloc(size);
        ok &= blocks[i] != NULL;
        if (blocks[i])
            memset(blocks[i], i, size);
    }
    for (int i = 0; i < 200; i++)
        free(blocks[i]);
    check("malloc", ok);

    size_t len = 1 << 20;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int zero = m != MAP_FAILED;
    if (zero) {
        zero = m[0] == 0 && m[len - 1] == 0;
        memset(m, 0xa5, len);
        zero &= munmap(m, len) == 0;
        unsigned char *again = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        zero &= again != MAP_FAILED && again[0] == 0 && again[len / 2] == 0 && again[len - 1] == 0;
        if (again != MAP_FAILED) {
            again[0] = 7;
            unsigned char *grown = mremap(again, len, 4 * len, MREMAP_MAYMOVE);
            zero &= grown != MAP_FAILED && grown[0] == 7 && grown[4 * len - 1] == 0;
            if (grown != MAP_FAILED)
                munmap(grown, 4 * len);
        }
    }
    check("mmap_zeroed", zero);
    errno = 0;
    void *file = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 0, 0);
    check("mmap_file_refused", file == MAP_FAILED && errno == ENODEV);
    errno = 0;
    void *huge = mmap(NULL, SIZE_MAX / 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check("mmap_too_big_enomem", huge == MAP_FAILED && errno == ENOMEM);
}

static void clocks(void)
{
    long long a = now_ns(CLOCK_MONOTONIC);
    struct timespec nap = { 0, 20 * 1000000 };
    int slept = nanosleep(&nap, NULL) == 0;
    long long b = now_ns(CLOCK_MONOTONIC);
    check("monotonic_moves", a >= 0 && b > a);
    check("nanosleep_20ms", slept && b - a >= 20 * 1000000LL);
    check("realtime_plausible", now_ns(CLOCK_REALTIME) > 1600000000LL * 1000000000LL);
    struct timespec ts;
    errno = 0;
    check("bad_clock_einval", clock_gettime((clockid_t)1234, &ts) == -1 && errno == EINVAL);
}

/* A pipe seen through epoll and poll: not readable, written, readable, drained. */
static void pipes_and_epoll(void)
{
    int p[2];
    int ok = pipe2(p, O_NONBLOCK) == 0;
    int ep = epoll_create1(0);
    ok &= ep >= 0;
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 }, out[4];
    ok &= epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0;
    check("epoll_empty", ok && epoll_wait(ep, out, 4, 0) == 0);
    ok &= write(p[1], "ping", 4) == 4;
    int n = epoll_wait(ep, out, 4, 100);
    check("epoll_readable", ok && n == 1 && out[0].data.u64 == 42 && (out[0].events & EPOLLIN));
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    check("poll_readable", poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN));
    char buf[8];
    check("pipe_read", read(p[0], buf, sizeof buf) == 4 && !memcmp(buf, "ping", 4));
    errno = 0;
    check("pipe_empty_eagain", read(p[0], buf, sizeof buf) == -1 && errno == EAGAIN);
    char two[2][3] = { "ab", "cd" }, in[2][3] = { "", "" };
    struct iovec out_iov[2] = { { two[0], 2 }, { two[1], 2 } }, in_iov[2] = { { in[0], 2 }, { in[1], 2 } };
    check("writev_readv", writev(p[1], out_iov, 2) == 4 && readv(p[0], in_iov, 2) == 4 &&
                          !strcmp(in[0], "ab") && !strcmp(in[1], "cd"));
    errno = 0;
    int bad_count = writev(p[1], out_iov, -1) == -1 && errno == EINVAL;
    errno = 0;
    check("iovec_count_einval", bad_count && readv(p[0], in_iov, IOV_MAX + 1) == -1 && errno == EINVAL);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    check("epoll_timeout", epoll_wait(ep, out, 4, 30) == 0 && now_ns(CLOCK_MONOTONIC) - t0 >= 30000000LL);
    errno = 0;
    check("epoll_add_twice_eexist", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == -1 && errno == EEXIST);
    close(p[1]);
    check("pipe_eof", read(p[0], buf, sizeof buf) == 0);
    close(p[0]);
    close(ep);
}

static int wait_order(int ep, int max, uint64_t *order)
{
    struct epoll_event out[4];      /* max <= 4 */
    int n = epoll_wait(ep, out, max, 0);
    for (int i = 0; i < n; i++)
        order[i] = out[i].data.u64;
    return n;
}

/*
 * epoll reports fds in the order they became ready (Linux's ready list),
 * not the order they were added; a reported fd, still ready, goes behind
 * the others (level-triggered).
 */
static void epoll_ready_order(void)
{
    int first[2], second[2];
    int ok = pipe2(first, O_NONBLOCK) == 0 && pipe2(second, O_NONBLOCK) == 0;
    int ep = epoll_create1(0);
    struct epoll_event ev1 = { .events = EPOLLIN, .data.u64 = 1 }, ev2 = { .events = EPOLLIN, .data.u64 = 2 };
    ok &= ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, first[0], &ev1) == 0 &&
          epoll_ctl(ep, EPOLL_CTL_ADD, second[0], &ev2) == 0;
    ok &= write(second[1], "b", 1) == 1 && write(first[1], "a", 1) == 1;
    uint64_t order[4] = { 0 };
    check("epoll_readiness_order", ok && wait_order(ep, 4, order) == 2 && order[0] == 2 && order[1] == 1);
    int one = wait_order(ep, 1, order) == 1 && order[0] == 2;
    check("epoll_reported_goes_last", ok && one && wait_order(ep, 4, order) == 2 && order[0] == 1 && order[1] == 2);
    char c;
    int refilled = read(first[0], &c, 1) == 1 && wait_order(ep, 4, order) == 1 && order[0] == 2 &&
                   write(first[1], "a", 1) == 1 && wait_order(ep, 4, order) == 2;
    check("epoll_ready_again_goes_last", ok && refilled && order[0] == 2 && order[1] == 1);
    /* Added while ready, it goes behind the others, though its data came before their last wait. */
    int third[2] = { -1, -1 };
    struct epoll_event ev3 = { .events = EPOLLIN, .data.u64 = 3 };
    int added = pipe2(third, O_NONBLOCK) == 0 && write(third[1], "c", 1) == 1 && wait_order(ep, 4, order) == 2 &&
                epoll_ctl(ep, EPOLL_CTL_ADD, third[0], &ev3) == 0 && wait_order(ep, 4, order) == 3;
    check("epoll_added_ready_goes_last", ok && added && order[0] == 2 && order[1] == 1 && order[2] == 3);
    close(ep);
    for (int i = 0; i < 2; i++) {
        close(first[i]);
        close(second[i]);
        close(third[i]);
    }
}

/*
 * A thread's end.  The joiner may reuse a thread's memory once pthread_join
 * returns, and musl's pthread_exit lets the next thread into its exit once
 * the tid word (its thread-list lock) is cleared; the personality clears it
 * before the thread has stopped, and the thread must not run on that
 * memory after it.  Joined threads run on a stack the test owns
 * (pthread_attr_setstack: musl puts the thread's TLS and descriptor there
 * too).  When the join returns, the ended thread's stack pointer, read from
 * its TCB, must be outside that stack, whether the thread has stopped or is
 * still taking its last steps; then the test fills the stack with 0xff and
 * yields, so that a thread still running on it would fault the process.
 * Detached threads, ended three at a time, hand musl's one static exit
 * stack (its __unmapself) from one to the next.  Many rounds of each reuse
 * the pool's slots and their exit stacks.
 */
#define END_STACK (64 * 1024)
#define END_ROUNDS 100
#define DETACHED_AT_ONCE 3

static unsigned char end_stack[END_STACK] __attribute__((aligned(4096)));
static long ended_tid;
static int detached_done;

static void *ends_at_once(void *arg)
{
    __atomic_store_n(&ended_tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
    return arg;
}

static void *ends_detached(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&detached_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The stack pointer of the pool's thread with this tid (its slot is tid - 1), read from its TCB. */
static word_t stack_pointer_of(long tid)
{
    const struct posix_start *start = (const struct posix_start *)POSIX_START_VADDR;
    if (tid < 2 || tid > (long)start->nthreads)
        return 0;
    cptr_t tcb = start->threads[tid - 1].tcb;
    word_t info = msginfo_new(TCB_READ_REGISTERS, 0, 0, 2);
    word_t mr[ARCH_MSG_REGS] = { 0, ARCH_REG_SP + 1 };      /* flags 0: do not suspend it */
    if (arch_syscall(SYS_CALL, &tcb, &info, mr) != E_OK)
        return 0;
    const struct ipc_buffer *ipc = (const struct ipc_buffer *)start->threads[0].ipcbuf_vaddr;
    word_t regs[ARCH_REG_SP + 1];
    for (int i = 0; i <= ARCH_REG_SP; i++)
        regs[i] = i < ARCH_MSG_REGS ? mr[i] : ipc->msg[i];
    return regs[ARCH_REG_SP];
}

static int joined_end(int round, int *off_stack)
{
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0 && pthread_attr_setstack(&attr, end_stack, END_STACK) == 0;
    pthread_t t;
    ok &= pthread_create(&t, &attr, ends_at_once, (void *)(long)round) == 0;
    pthread_attr_destroy(&attr);
    void *ret = NULL;
    if (ok)
        ok = pthread_join(t, &ret) == 0 && ret == (void *)(long)round;
    word_t sp = stack_pointer_of(__atomic_load_n(&ended_tid, __ATOMIC_ACQUIRE));
    *off_stack &= sp && (sp < (word_t)end_stack || sp >= (word_t)end_stack + END_STACK);
    memset(end_stack, 0xff, END_STACK);
    for (int i = 0; i < 4; i++)
        sched_yield();
    return ok;
}

/* A full pool (threads that ended but are not yet reaped) makes pthread_create wait a little. */
static int create_detached(void)
{
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0 && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
    int err = EAGAIN;
    pthread_t t;
    for (int tries = 0; ok && err == EAGAIN && tries < 1000; tries++) {
        err = pthread_create(&t, &attr, ends_detached, NULL);
        if (err == EAGAIN)
            sched_yield();
    }
    pthread_attr_destroy(&attr);
    return ok && err == 0;
}

static void thread_ends(void)
{
    int joined = 1, off_stack = 1, detached = 1;
    for (int round = 0; round < END_ROUNDS && joined; round++)
        joined &= joined_end(round, &off_stack);
    check("thread_end_joined_memory_reused", joined);
    check("thread_end_off_the_joined_stack", joined && off_stack);
    for (int round = 0; round < END_ROUNDS && detached; round++) {
        int target = __atomic_load_n(&detached_done, __ATOMIC_ACQUIRE) + DETACHED_AT_ONCE;
        for (int i = 0; i < DETACHED_AT_ONCE; i++)
            detached &= create_detached();
        while (detached && __atomic_load_n(&detached_done, __ATOMIC_ACQUIRE) < target)
            sched_yield();
    }
    check("thread_end_detached", detached);
}

struct shared {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int turn;
    long total;
};

static void *worker(void *arg)
{
    struct shared *s = arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&s->lock);
        while (s->turn != 1)
            pthread_cond_wait(&s->cond, &s->lock);
        s->total++;
        s->turn = 0;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
    }
    return (void *)(long)0x5a;
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

/* Blocks on a mutex the main thread keeps: the thread waits in a futex, using no time. */
static void *blocked(void *arg)
{
    pthread_mutex_lock(&held);
    return arg;
}

/* Two threads that take turns 1000 times through a mutex and a condition variable. */
static void threads(void)
{
    struct shared s = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
    pthread_t t;
    int ok = pthread_create(&t, NULL, worker, &s) == 0;
    for (int i = 0; ok && i < 1000; i++) {
        pthread_mutex_lock(&s.lock);
        while (s.turn != 0)
            pthread_cond_wait(&s.cond, &s.lock);
        s.total++;
        s.turn = 1;
        pthread_cond_broadcast(&s.cond);
        pthread_mutex_unlock(&s.lock);
    }
    void *ret = NULL;
    ok &= pthread_join(t, &ret) == 0;
    check("threads_take_turns", ok && s.total == 2000 && ret == (void *)(long)0x5a);
    /* The pool is bounded: starting more threads than it holds fails cleanly with EAGAIN. */
    pthread_mutex_lock(&held);
    pthread_t many[16];
    int started = 0, err = 0;
    for (int i = 0; i < 16; i++) {
        int r = pthread_create(&many[i], NULL, blocked, NULL);
        if (r) {
            err = r;
            break;
        }
        started++;
    }
    check("thread_pool_bounded", started > 0 && started < 16 && err == EAGAIN);
}

static void errors(void)
{
    errno = 0;
    check("unknown_call_enosys", syscall(SYS_fork) == -1 && errno == ENOSYS);
    errno = 0;
    check("open_missing_enoent", open("/etc/redis/redis.conf", O_RDONLY) == -1 && errno == ENOENT);
    errno = 0;
    check("bad_fd_ebadf", read(77, NULL, 0) == -1 && errno == EBADF);
    errno = 0;
    check("ipv6_eafnosupport", socket(AF_INET6, SOCK_STREAM, 0) == -1 && errno == EAFNOSUPPORT);
    errno = 0;
    check("udp_eprotonosupport", socket(AF_INET, SOCK_DGRAM, 0) == -1 && errno == EPROTONOSUPPORT);
    errno = 0;
    check("no_network_enetdown", socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == ENETDOWN);
    int fd = open("/dev/urandom", O_RDONLY);
    unsigned char a[16] = { 0 }, b[16] = { 0 };
    check("urandom", fd >= 0 && read(fd, a, sizeof a) == sizeof a && getrandom(b, sizeof b, 0) == sizeof b &&
                     memcmp(a, b, sizeof a) != 0);
    close(fd);
    struct utsname u;
    check("uname", uname(&u) == 0 && !strcmp(u.sysname, "Linux"));
    check("console_write", write(1, "posix selftest: console\n", 24) == 24);
}

int main(int argc, char **argv)
{
    print_clocks();
    check("argv", argc >= 1 && argv[0] && argv[0][0]);
    memory();
    clocks();
    pipes_and_epoll();
    epoll_ready_order();
    thread_ends();
    threads();
    errors();
    print_clocks();
    printf("@@ {\"posix_selftest\": {\"checks\": {%s}, \"failed\": %d}}\n", record, failed);
    fflush(stdout);
    return failed;
}
