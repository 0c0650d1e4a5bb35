/*
 * A program built with tools/posix-cc and the host personality
 * (posix_hostcalls.c) to show that musl's system calls all reach the
 * personality (tests/test_posix_build.py): stdio, malloc, threads with a
 * mutex and a condition variable (clone, futex, set_tid_address and the
 * thread pointer), a signal handler (rt_sigaction, and rt_sigreturn through
 * the restorer), and the clock.  Each check prints one line the test reads.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKERS 4
#define ROUNDS  1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static long total;
static __thread int thread_tag;
static volatile sig_atomic_t signal_seen;

/* Workers take turns in order, so each waits on the condvar for the others. */
static void *worker(void *arg)
{
    int id = (int)(long)arg;
    thread_tag = id + 100;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_mutex_lock(&lock);
        while (turn % WORKERS != id)
            pthread_cond_wait(&turn_changed, &lock);
        total += thread_tag;
        turn++;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&lock);
    }
    return (void *)(long)thread_tag;
}

static void on_signal(int sig)
{
    signal_seen = sig;
}

int main(void)
{
    char *text = malloc(1 << 20);
    if (!text)
        return 1;
    memset(text, 'x', 1 << 20);
    snprintf(text, 64, "malloc ok %d", (int)(strlen(text + 64) + 64));
    printf("%s\n", text);
    free(text);

    thread_tag = 1;
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i))
            return 2;
    long joined = 0;
    for (int i = 0; i < WORKERS; i++) {
        void *result;
        pthread_join(threads[i], &result);
        joined += (long)result;
    }
    printf("threads total %ld joined %ld main tag %d\n", total, joined, thread_tag);

    struct sigaction action = { .sa_handler = on_signal };
    sigaction(SIGUSR1, &action, NULL);
    raise(SIGUSR1);
    printf("signal %d\n", (int)signal_seen);

    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    clock_gettime(CLOCK_MONOTONIC, &now);
    time_t wall = time(NULL);
    printf("clock monotonic %s wall %s\n",
           now.tv_sec > start.tv_sec || (now.tv_sec == start.tv_sec && now.tv_nsec >= start.tv_nsec) ? "ok" : "backwards",
           wall > 1600000000 ? "ok" : "wrong");
    fflush(stdout);
    return 0;
}
