/*
 * The in-guest test suite (docs/userland.md).  TEST(name) registers a test
 * in the .tests linker section; app_tests() runs each in order inside a
 * fresh arena (root.h), so that everything a test creates is revoked when
 * it ends, then runs the kernel invariant checker and prints one `test`
 * record (docs/console.md).
 *
 * Checks stop the test at the first failure and record what failed.  A
 * test that needs what this machine lacks (a NIC, I/O ports) stops with
 * SKIP(reason) and its record says `skip`, never `pass`.
 * Tests run on the root task's main thread at TEST_PRIO, on core 0.
 */
#ifndef TEST_H
#define TEST_H

#include <abi/faults.h>
#include <arch_user.h>
#include <thread.h>

struct test {
    const char *name;
    void (*fn)(void);
};

#define TEST(name_)                                                                     \
    static void test_fn_##name_(void);                                                  \
    static const struct test test_desc_##name_                                          \
        __attribute__((used, section(".tests"), aligned(8))) = { #name_, test_fn_##name_ }; \
    static void test_fn_##name_(void)

#define TEST_PRIO DEFAULT_PRIO

/* Record a failure (the first one wins) and a note for the detail. */
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool test_failed(void);
/* The test cannot run here (a device or feature this machine lacks): record why. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Stop the test as skipped, with the reason. */
#define SKIP(...)                                                       \
    do {                                                                \
        test_skip(__VA_ARGS__);                                         \
        return;                                                         \
    } while (0)

#define CHECK(c)                                                        \
    do {                                                                \
        if (!(c)) {                                                     \
            test_fail(__FILE__, __LINE__, "%s", #c);                    \
            return;                                                     \
        }                                                               \
    } while (0)

#define CHECK_EQ(a, b)                                                  \
    do {                                                                \
        word_t a_ = (word_t)(a), b_ = (word_t)(b);                      \
        if (a_ != b_) {                                                 \
            test_fail(__FILE__, __LINE__, "%s == %lu (0x%lx), expected %s = %lu (0x%lx)", #a, \
                      (unsigned long)a_, (unsigned long)a_, #b, (unsigned long)b_, (unsigned long)b_); \
            return;                                                     \
        }                                                               \
    } while (0)

/* A status check that names the statuses. */
#define CHECK_ST(call, expected)                                        \
    do {                                                                \
        word_t s_ = (word_t)(call), e_ = (word_t)(expected);            \
        if (s_ != e_) {                                                 \
            test_fail(__FILE__, __LINE__, "%s returned %s, expected %s", #call, status_name(s_), \
                      status_name(e_));                                 \
            return;                                                     \
        }                                                               \
    } while (0)

#define CHECK_OK(call) CHECK_ST(call, E_OK)

/* ---- helpers (helpers.c) */

cptr_t ep_new(void);
cptr_t ntfn_new(void);
cptr_t mint(cptr_t src, word_t rights, word_t badge);  /* a minted copy in a fresh slot, or 0 */
cptr_t copy_cap(cptr_t src, word_t rights);

/* A thread in the root task's space running fn(arg), started; NULL on failure (test failed). */
struct thread *spawn(thread_fn fn, void *arg, word_t prio, word_t core, cptr_t fault_ep);
/* The same, made but not started. */
struct thread *spawn_unstarted(word_t prio, word_t core, cptr_t fault_ep);

/*
 * How long a test waits for another thread's progress before it fails, in
 * milliseconds of the guest's cycle counter.  A count of yields would be a
 * bound that a slow or loaded host shortens: under QEMU a virtual CPU's host
 * thread can go unscheduled for seconds while a waiter on another core
 * yields through its count.  A thread that never makes progress still fails
 * the test, only later.
 */
#define WAIT_MS 30000

/* A deadline `ms` milliseconds of the cycle counter from now, and whether it has passed. */
uint64_t deadline_in(word_t ms);
bool deadline_passed(uint64_t deadline);

/* Wait (yielding) until *p == v (>= v), for at most `ms`; false on timeout. */
bool wait_eq(volatile word_t *p, word_t v, word_t ms);
bool wait_ge(volatile word_t *p, word_t v, word_t ms);

/* NBRecv in a loop with yields: E_WOULD_BLOCK after `ms`. */
word_t recv_timeout(cptr_t ep, struct msg *m, word_t ms);

/* Spin (burning cycles without a system call) for about n loop iterations. */
void spin(word_t n);

word_t ncores(void);

#endif
