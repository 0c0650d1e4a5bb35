/*
 * Floating point as the compiler uses it: the x86_64 ABI keeps doubles in
 * SSE registers, so this file is built with them on x86_64 (arch/x86_64/
 * build.mk), unlike the rest of userland; on arm-imx6 it is soft-float.
 * Several threads on each core run the same computation with their doubles
 * live in registers across yields (the system-call stub clobbers no SSE
 * register), and each must end with the result the test computes alone.
 */
#include "test.h"

#define DOUBLE_STEPS 400

struct double_worker {
    double start;
    double result;
    volatile word_t done;
};

static double step(double x, word_t i)
{
    return x * 1.0009765625 + (double)(i & 7) * 0.125 - 0.5;
}

static void double_worker_run(void *arg)
{
    struct double_worker *w = arg;
    double x = w->start, y = -w->start;

    for (word_t i = 0; i < DOUBLE_STEPS; i++) {
        x = step(x, i);
        y = step(y, i + 3);
        sys_yield();
    }
    w->result = x - y;
    w->done = 1;
}

static double expected(double start)
{
    double x = start, y = -start;

    for (word_t i = 0; i < DOUBLE_STEPS; i++) {
        x = step(x, i);
        y = step(y, i + 3);
    }
    return x - y;
}

TEST(fpu_doubles_per_thread)
{
    word_t n = ncores(), count = 3 * n;
    struct double_worker *w = calloc(count, sizeof(*w));
    CHECK(w);
    for (word_t i = 0; i < count; i++) {
        w[i].start = 1.5 + (double)i * 1000.25;
        CHECK(spawn(double_worker_run, &w[i], TEST_PRIO, i % n, 0));
    }
    for (word_t i = 0; i < count; i++) {
        CHECK(wait_eq(&w[i].done, 1, WAIT_MS));
        /* The same operations in the same order: the results are equal to the bit. */
        CHECK(w[i].result == expected(w[i].start));
    }
    test_note("%lu threads on %lu cores", (unsigned long)count, (unsigned long)n);
}
