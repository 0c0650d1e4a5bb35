/*
 * SYS_DEBUG_KSTATS: read, print and configure the per-core accounting
 * (kernel/accounting.h; the ABI in abi/kstats.h and docs/abi.md, the
 * record in docs/console.md).  Runs with the kernel lock held exclusively
 * (handle_debug_syscall()).
 */
#include "debug.h"
#include "kernel.h"
#include "accounting.h"
#include "invocation.h"
#include "printf.h"
#include <abi/kstats.h>

#define KSTATS_FLAGS (KSTATS_PRINT | KSTATS_TIME_ON | KSTATS_TIME_OFF)

struct kstats_request {
    unsigned core;
    word_t flags;
    word_t tag;
};

static void print_kstats(unsigned core, word_t tag)
{
    struct kstats_snapshot s;

    accounting_read(core, &s);
    kprintf("@@ {\"kstats\": {\"tag\": %lu, \"core\": %u, \"now\": %lu, \"idle\": %lu, "
            "\"kernel\": %lu, \"user\": %lu, \"timed\": %s, ",
            (unsigned long)tag, core, (unsigned long)s.now, (unsigned long)s.idle,
            (unsigned long)s.kernel, (unsigned long)s.user,
            accounting_timing() ? "true" : "false");
    kprintf("\"entries\": {\"syscall\": %lu, \"interrupt\": %lu, \"fault\": %lu}}}\n",
            (unsigned long)s.entries[ENTRY_CAUSE_SYSCALL],
            (unsigned long)s.entries[ENTRY_CAUSE_INTERRUPT],
            (unsigned long)s.entries[ENTRY_CAUSE_FAULT]);
}

/* All checks; MR0 = index of the bad argument on E_INVALID_ARGUMENT. */
static enum status decode_kstats(struct tcb *t, struct kstats_request *r)
{
    word_t core = get_mr(t, NULL, 0);

    r->flags = get_mr(t, NULL, 1);
    r->tag = get_mr(t, NULL, 2);
    if (core >= ncores_online) {
        set_mr(t, NULL, 0, 0);
        return E_INVALID_ARGUMENT;
    }
    if ((r->flags & ~(word_t)KSTATS_FLAGS) ||
        ((r->flags & KSTATS_TIME_ON) && (r->flags & KSTATS_TIME_OFF))) {
        set_mr(t, NULL, 0, 1);
        return E_INVALID_ARGUMENT;
    }
    r->core = (unsigned)core;
    return E_OK;
}

/*
 * Timing changes before the snapshot, so a window opened with
 * KSTATS_TIME_ON starts from the values this call returns.
 */
static void invoke_kstats(struct tcb *t, const struct kstats_request *r)
{
    struct ipc_buffer *buf = tcb_ipc_buffer(t);
    struct kstats_snapshot s;
    unsigned nresults = 0;

    if (r->flags & (KSTATS_TIME_ON | KSTATS_TIME_OFF))
        accounting_set_timing((r->flags & KSTATS_TIME_ON) != 0);
    if (r->flags & KSTATS_PRINT) {
        for (unsigned c = 0; c < ncores_online; c++)
            print_kstats(c, r->tag);
    }
    accounting_read(r->core, &s);
    const word_t values[KSTATS_VALUES] = {
        [KSTATS_ENTRIES_SYSCALL] = s.entries[ENTRY_CAUSE_SYSCALL],
        [KSTATS_ENTRIES_INTERRUPT] = s.entries[ENTRY_CAUSE_INTERRUPT],
        [KSTATS_ENTRIES_FAULT] = s.entries[ENTRY_CAUSE_FAULT],
        [KSTATS_IDLE] = s.idle,
        [KSTATS_KERNEL] = s.kernel,
        [KSTATS_USER] = s.user,
        [KSTATS_NOW] = s.now,
        [KSTATS_TICKS] = s.ticks,
    };
    /* Values beyond the machine registers need an IPC buffer: a thread without one gets the first few. */
    for (unsigned i = 0; i < KSTATS_VALUES && set_mr(t, buf, i, values[i]); i++)
        nresults = i + 1;
    syscall_return(t, E_OK, nresults);
}

void debug_kstats(struct tcb *t)
{
    struct kstats_request r;
    enum status st = decode_kstats(t, &r);

    if (st != E_OK) {
        syscall_return(t, st, 1);
        return;
    }
    invoke_kstats(t, &r);
}
