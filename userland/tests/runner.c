/*
 * The test runner: every TEST in the .tests section, in link order, each in
 * its own arena; the invariant checker after each; one record per test.
 * The run's status is 0 only when every test passed.
 */
#include <apps.h>
#include <stdarg.h>
#include "test.h"

extern const struct test __tests_start[], __tests_end[];

static char fail_detail[400];
static char notes[200];
static bool failed;
static bool skipped;

void test_fail(const char *file, int line, const char *fmt, ...)
{
    if (failed)
        return;
    failed = true;
    const char *base = file;
    for (const char *p = file; *p; p++)
        if (*p == '/')
            base = p + 1;
    int n = snprintf(fail_detail, sizeof(fail_detail), "%s:%d: ", base, line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_detail + n, sizeof(fail_detail) - n, fmt, ap);
    va_end(ap);
}

void test_note(const char *fmt, ...)
{
    size_t n = strlen(notes);
    if (n && n + 2 < sizeof(notes)) {
        notes[n++] = ';';
        notes[n++] = ' ';
        notes[n] = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + n, sizeof(notes) - n, fmt, ap);
    va_end(ap);
}

bool test_failed(void)
{
    return failed;
}

void test_skip(const char *fmt, ...)
{
    skipped = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes, sizeof(notes), fmt, ap);
    va_end(ap);
}

/* Only tests whose name starts with `only=` run, when it is given. */
int app_tests(void)
{
    char only[48] = "";
    arg_str("only", only, sizeof(only));
    tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO);

    unsigned total = 0, passed = 0, skips = 0;
    for (const struct test *t = __tests_start; t < __tests_end; t++) {
        if (only[0] && strncmp(t->name, only, strlen(only)))
            continue;
        failed = skipped = false;
        fail_detail[0] = notes[0] = 0;

        struct arena a;
        word_t st = arena_begin(&a, 22);
        if (st != E_OK) {
            test_fail(__FILE__, __LINE__, "arena: %s", status_name(st));
        } else {
            t->fn();
            tcb_set_priority(ROOT_SLOT_TCB, TEST_PRIO);
            arena_end(&a);
        }
        st = sys_debug_check();
        if (st != E_OK)
            test_fail(__FILE__, __LINE__, "invariant checker: %s", status_name(st));

        char detail[640], esc[700];
        if (failed)
            snprintf(detail, sizeof(detail), "%s%s%s", fail_detail, notes[0] ? " | " : "", notes);
        else
            strncpy_z(detail, notes, sizeof(detail));
        json_escape(esc, sizeof(esc), detail);
        printf("@@ {\"test\": \"%s\", \"status\": \"%s\", \"detail\": \"%s\"}\n", t->name,
               failed ? "fail" : skipped ? "skip" : "pass", esc);
        total++;
        passed += !failed && !skipped;
        skips += !failed && skipped;
    }
    printf("tests: %u of %u passed, %u skipped\n", passed, total, skips);
    return passed + skips == total && total > 0 ? 0 : 1;
}
