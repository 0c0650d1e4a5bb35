/*
 * The debug system calls (docs/abi.md).  SYS_DEBUG_PUTS takes the byte
 * count in MR0 and the bytes packed little-endian in MR1.., so one call
 * carries at most (MSG_MAX_LENGTH - 1) * sizeof(word_t) bytes; longer text
 * is split into several calls.
 */
#include <libc.h>
#include <sys.h>

#define PUTS_MAX ((MSG_MAX_LENGTH - 1) * sizeof(word_t))

static void puts_chunk(const char *s, word_t len)
{
    word_t words = (len + sizeof(word_t) - 1) / sizeof(word_t);
    struct msg m = { .info = msginfo_new(0, 0, 0, 1 + words) };
    m.mr[0] = len;
    for (word_t i = 0; i < words; i++) {
        word_t w = 0;
        for (word_t b = 0; b < sizeof(word_t) && i * sizeof(word_t) + b < len; b++)
            w |= (word_t)(unsigned char)s[i * sizeof(word_t) + b] << (8 * b);
        msg_set(&m, 1 + i, w);
    }
    sys_raw(SYS_DEBUG_PUTS, 0, &m);
}

void sys_debug_puts(const char *s, word_t len)
{
    while (len) {
        word_t n = len < PUTS_MAX ? len : PUTS_MAX;
        puts_chunk(s, n);
        s += n;
        len -= n;
    }
}

_Noreturn void sys_debug_halt(word_t status)
{
    for (;;) {
        struct msg m = { .info = msginfo_new(0, 0, 0, 1), .mr = { status } };
        sys_raw(SYS_DEBUG_HALT, 0, &m);
    }
}

word_t sys_debug_check_counted(word_t *failed_so_far)
{
    struct msg m = { 0 };
    word_t st = sys_raw(SYS_DEBUG_CHECK, 0, &m);
    *failed_so_far = m.mr[0];
    return st;
}

word_t sys_debug_check(void)
{
    word_t failed_so_far;
    return sys_debug_check_counted(&failed_so_far);
}

word_t sys_debug_lockstats(word_t reset)
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 1), .mr = { reset } };
    return sys_raw(SYS_DEBUG_LOCKSTATS, 0, &m);
}

word_t sys_debug_core(void)
{
    struct msg m = { 0 };
    sys_raw(SYS_DEBUG_CORE, 0, &m);
    return m.mr[0];
}

word_t sys_debug_preempt(word_t points, word_t *unused)
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 1), .mr = { points } };
    sys_raw(SYS_DEBUG_PREEMPT, 0, &m);
    *unused = m.mr[1];
    return m.mr[0];
}

word_t sys_debug_kstats(word_t core, word_t flags, word_t tag, word_t values[KSTATS_VALUES])
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 3), .mr = { core, flags, tag } };
    word_t st = sys_raw(SYS_DEBUG_KSTATS, 0, &m);

    for (unsigned i = 0; i < KSTATS_VALUES; i++)
        values[i] = st == E_OK ? msg_get(&m, i) : 0;
    return st;
}

word_t sys_debug_invariants(word_t op, word_t *failures)
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 1), .mr = { op } };
    word_t st = sys_raw(SYS_DEBUG_INVARIANTS, 0, &m);

    if (failures)
        *failures = st == E_OK && op == INVARIANTS_FAILURES ? m.mr[0] : 0;
    return st;
}
