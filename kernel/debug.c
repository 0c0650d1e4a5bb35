/*
 * The debug system calls.
 *
 *   SYS_DEBUG_PUTS       MR0 length, bytes packed little-endian in MR1..
 *   SYS_DEBUG_HALT       MR0 status: print the done record and end the run;
 *                        E_ILLEGAL_OPERATION from any thread but root_thread
 *   SYS_DEBUG_CHECK      run the invariant checker (kernel/invariants.c): status
 *                        E_OK, or E_INVARIANT after printing what failed; MR0 :=
 *                        checks failed since boot
 *   SYS_DEBUG_LOCKSTATS  print a lockstats record per core; MR0 != 0 resets them
 *   SYS_DEBUG_CORE       MR0 := the caller's core
 *   SYS_DEBUG_PREEMPT    the next MR0 preemption points on this core raise an
 *                        interrupt (0 disarms); MR0 := restarts so far on
 *                        this core, MR1 := armed points left unused
 *   SYS_DEBUG_KSTATS     kernel/kstats.c
 *   SYS_DEBUG_INVARIANTS MR0 = INVARIANTS_FAILURES: MR0 := checks failed since
 *                        boot, without running one; INVARIANTS_BREAK and
 *                        INVARIANTS_REPAIR (DEBUG builds, root_thread only):
 *                        plant one broken invariant, take it away
 *
 * Each calls kernel_lock_require_exclusive() first: console output and the
 * long checker must not run inside an RTM transaction.
 */
#include "debug.h"
#include "kernel.h"
#include "core.h"
#include "invariants.h"
#include "invocation.h"
#include "preemption.h"
#include "printf.h"
#include <abi/syscalls.h>
#include <lock.h>

static void debug_puts(struct tcb *t)
{
    struct ipc_buffer *buf = tcb_ipc_buffer(t);
    word_t len = get_mr(t, buf, 0);
    word_t max = (mr_capacity(buf) - 1) * sizeof(word_t);

    if (len > max)
        len = max;
    for (word_t i = 0; i < len; i++) {
        word_t w = get_mr(t, buf, (unsigned)(1 + i / sizeof(word_t)));
        char ch = (char)(w >> (8 * (i % sizeof(word_t))));
        kputs_n(t, &ch, 1);
    }
    syscall_return(t, E_OK, 0);
}

static void print_lockstats(unsigned core)
{
    struct lock_stats s;

    lock_stats_read(core, &s);
    kprintf("@@ {\"lockstats\": {\"core\": %u, \"acquisitions\": %lu, \"contended\": %lu, "
            "\"cycles_held\": %lu, \"cycles_waited\": %lu, \"rtm_commits\": %lu, ",
            core, (unsigned long)s.acquisitions, (unsigned long)s.contended,
            (unsigned long)s.cycles_held, (unsigned long)s.cycles_waited,
            (unsigned long)s.rtm_commits);
    kprintf("\"rtm_aborts\": {\"conflict\": %lu, \"capacity\": %lu, \"explicit\": %lu, "
            "\"lock_held\": %lu, \"other\": %lu}, \"rtm_fallbacks\": %lu, \"barriers\": %lu, "
            "\"hold_histogram\": [",
            (unsigned long)s.rtm_aborts_conflict, (unsigned long)s.rtm_aborts_capacity,
            (unsigned long)s.rtm_aborts_explicit, (unsigned long)s.rtm_aborts_lock_held,
            (unsigned long)s.rtm_aborts_other, (unsigned long)s.rtm_fallbacks,
            (unsigned long)s.barriers);
    for (unsigned i = 0; i < ARRAY_SIZE(s.hold_histogram); i++)
        kprintf("%s%lu", i ? ", " : "", (unsigned long)s.hold_histogram[i]);
    kprintf("]}}\n");
}

/* SYS_DEBUG_INVARIANTS: all checks first, then the one operation asked for. */
static void debug_invariants(struct tcb *t)
{
    word_t op = get_mr(t, NULL, 0);
    enum status s;

    switch (op) {
    case INVARIANTS_FAILURES:
        set_mr(t, NULL, 0, invariant_failures());
        syscall_return(t, E_OK, 1);
        return;
    case INVARIANTS_BREAK:
    case INVARIANTS_REPAIR:
        if (t != root_thread) {
            syscall_return(t, E_ILLEGAL_OPERATION, 0);
            return;
        }
        s = op == INVARIANTS_BREAK ? invariants_break(t) : invariants_repair();
        syscall_return(t, s, 0);
        return;
    default:
        set_mr(t, NULL, 0, 0);
        syscall_return(t, E_INVALID_ARGUMENT, 1);
        return;
    }
}

void handle_debug_syscall(word_t sysno)
{
    struct tcb *t = current_thread();

    kernel_lock_require_exclusive();
    switch (sysno) {
    case SYS_DEBUG_PUTS:
        debug_puts(t);
        break;
    case SYS_DEBUG_HALT: {
        if (t != root_thread) {
            syscall_return(t, E_ILLEGAL_OPERATION, 0);
            break;
        }
        int status = (int)get_mr(t, NULL, 0);
        kflush();
        kprintf("@@ {\"done\": true, \"status\": %d}\n", status);
        arch_shutdown(status);
    }
    case SYS_DEBUG_CHECK: {
        bool held = kernel_check_invariants();
        set_mr(t, NULL, 0, invariant_failures());
        syscall_return(t, held ? E_OK : E_INVARIANT, 1);
        break;
    }
    case SYS_DEBUG_LOCKSTATS:
        for (unsigned c = 0; c < ncores_online; c++)
            print_lockstats(c);
        if (get_mr(t, NULL, 0))
            lock_stats_reset();
        syscall_return(t, E_OK, 0);
        break;
    case SYS_DEBUG_CORE:
        set_mr(t, NULL, 0, arch_core_id());
        syscall_return(t, E_OK, 1);
        break;
    case SYS_DEBUG_PREEMPT: {
        word_t restarts, unused;
        preemption_debug_arm(get_mr(t, NULL, 0), &restarts, &unused);
        set_mr(t, NULL, 0, restarts);
        set_mr(t, NULL, 1, unused);
        syscall_return(t, E_OK, 2);
        break;
    }
    case SYS_DEBUG_KSTATS:
        debug_kstats(t);
        break;
    case SYS_DEBUG_INVARIANTS:
        debug_invariants(t);
        break;
    default:
        break;
    }
}
