/*
 * Debug system calls and the kernel invariant checker.
 *
 *   SYS_DEBUG_PUTS       MR0 length, bytes packed little-endian in MR1..
 *   SYS_DEBUG_HALT       MR0 status: print the done record and end the run;
 *                        E_ILLEGAL_OPERATION from any thread but root_thread
 *   SYS_DEBUG_CHECK      status E_OK, or E_INVARIANT after printing what failed
 *   SYS_DEBUG_LOCKSTATS  print a lockstats record per core; MR0 != 0 resets them
 *   SYS_DEBUG_CORE       MR0 := the caller's core
 *   SYS_DEBUG_PREEMPT    the next MR0 preemption points on this core raise an
 *                        interrupt (0 disarms); MR0 := restarts so far on
 *                        this core, MR1 := armed points left unused
 *
 * Each calls kernel_lock_require_exclusive() first: console output and the
 * long checker must not run inside an RTM transaction.
 */
#include "kernel.h"
#include "cdt.h"
#include "core.h"
#include "endpoint.h"
#include "invocation.h"
#include "notification.h"
#include "preemption.h"
#include "printf.h"
#include "sched.h"
#include "vspace.h"
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
        kputs_n(&ch, 1);
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

/*
 * Checks that failed since boot, whoever asked.  The status a thread reads
 * back is not proof: another thread may rewrite its registers (TCB
 * WriteRegisters) between the kernel's return and the read, and the fuzzer
 * does exactly that.  A count kept here can be read later by a thread
 * nobody can touch.
 */
static word_t failed_checks;

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
        if (!held)
            failed_checks++;
        set_mr(t, NULL, 0, failed_checks);
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
    default:
        break;
    }
}

/* ---- The invariant checker. */

static bool fail(const char *what)
{
    kprintf("invariant failed: %s\n", what);
    return false;
}

/* A wait queue: doubly linked, every member in `state` waiting on `obj`. */
static bool check_queue(struct tcb *head, struct tcb *tail, void *obj, unsigned state1,
                        unsigned state2, const char *what)
{
    struct tcb *prev = NULL;
    unsigned long n = 0;

    for (struct tcb *t = head; t; prev = t, t = t->ep_next) {
        if (t->ep_prev != prev || (t->state != state1 && t->state != state2) || t->blocked_on != obj)
            return fail(what);
        if (++n > (1ul << 30))
            return fail(what);
    }
    if (prev != tail)
        return fail(what);
    return true;
}

static bool check_ready_queues(unsigned core)
{
    struct core *c = &cores[core];

    for (unsigned p = 0; p < PRIORITY_COUNT; p++) {
        struct ready_queue *q = &c->ready[p];
        bool bit = (c->ready_l2[p / WORD_BITS] >> (p % WORD_BITS)) & 1;
        struct tcb *prev = NULL;

        if (bit != (q->head != NULL))
            return fail("scheduler bitmap does not match the queues");
        if (bit && !((c->ready_l1 >> (p / WORD_BITS)) & 1))
            return fail("scheduler level-1 bitmap does not match");
        for (struct tcb *t = q->head; t; prev = t, t = t->sched_next) {
            if (t->sched_prev != prev || !t->in_ready_queue || t->priority != p ||
                t->affinity != core || !tcb_runnable(t))
                return fail("ready queue entry inconsistent");
            if (t == c->current)
                return fail("the running thread is in its ready queue");
        }
        if (prev != q->tail)
            return fail("ready queue tail wrong");
    }
    return true;
}

/* Every object reached through a capability in the CDT list is consistent. */
static bool check_objects(void)
{
    for (struct cte *s = cdt_first(); s; s = s->cdt_next) {
        struct cap *c = &s->cap;
        switch (c->type) {
        case CAP_ENDPOINT: {
            struct endpoint *ep = c->obj;
            unsigned st = ep->state == EP_SEND ? TS_BLOCKED_SEND : TS_BLOCKED_RECV;
            if ((ep->state == EP_IDLE) != (ep->head == NULL))
                return fail("endpoint state does not match its queue");
            if (!check_queue(ep->head, ep->tail, ep, st, st, "endpoint queue inconsistent"))
                return false;
            break;
        }
        case CAP_NOTIFICATION: {
            struct notification *n = c->obj;
            if ((n->state == NTFN_WAITING) != (n->head != NULL))
                return fail("notification state does not match its queue");
            if (!check_queue(n->head, n->tail, n, TS_BLOCKED_NOTIFICATION, TS_BLOCKED_NOTIFICATION,
                             "notification queue inconsistent"))
                return false;
            if (n->bound_tcb && n->bound_tcb->bound_notification != n)
                return fail("notification binding not mutual");
            break;
        }
        case CAP_TCB: {
            struct tcb *t = c->obj;
            struct cte *m = &t->slots[TCB_SLOT_REPLY];
            if (t->bound_notification && t->bound_notification->bound_tcb != t)
                return fail("TCB binding not mutual");
            if (m->cap.type != CAP_REPLY || !(m->cap.flags & CAPF_MASTER) || m->cap.obj != t)
                return fail("TCB master reply cap missing");
            if (m->cdt_next && (m->cdt_next->cdt_prev != m || m->cdt_next->cap.type != CAP_REPLY ||
                                m->cdt_next->cap.obj != t))
                return fail("reply cap list inconsistent");
            if (m->cdt_next && t->state != TS_BLOCKED_REPLY)
                return fail("reply cap to a thread not waiting for a reply");
            if (t->in_ready_queue && !tcb_runnable(t))
                return fail("blocked thread in a ready queue");
            if (t->affinity >= ncores_online)
                return fail("TCB affinity beyond the cores online");
            break;
        }
        case CAP_VSPACE:
            if (c->asid == 0 || asid_table[c->asid].root != c->obj)
                return fail("VSpace cap and ASID table disagree");
            break;
        default:
            break;
        }
    }
    return true;
}

bool kernel_check_invariants(void)
{
    const char *why = NULL;

    if (cdt_check(&why) < 0)
        return fail(why);
    for (unsigned c = 0; c < ncores_online; c++) {
        if (!check_ready_queues(c))
            return false;
    }
    return check_objects();
}
