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
#include "untyped.h"
#include "vspace.h"
#include <abi/bootinfo.h>
#include <abi/objects.h>
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

/* Whether slot (may be NULL) holds a cap to the container zombie z is deleting. */
static bool names_container(const struct cte *slot, const struct cap *z)
{
    return slot && (slot->cap.type == z->zombie_of || slot->cap.type == CAP_ZOMBIE) &&
           slot->cap.obj == z->obj;
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
        case CAP_ZOMBIE: {
            /* A container being deleted: its only cap, with no more slots left than it has. */
            word_t slots = c->zombie_of == CAP_CNODE ? BIT(c->size_bits) : TCB_SLOT_COUNT;
            if ((c->zombie_of != CAP_CNODE && c->zombie_of != CAP_TCB) || c->zombie_left > slots)
                return fail("zombie of an unknown container or with too many slots left");
            if (names_container(s->cdt_prev, c) || names_container(s->cdt_next, c))
                return fail("a zombie is not its object's only cap");
            break;
        }
        default:
            break;
        }
    }
    return true;
}

/* ---- Memory: untyped watermarks, children inside their parents, no overlap. */

/*
 * The physical memory a cap's object occupies; false for caps that name no
 * memory of their own (reply, IRQ caps).
 */
static bool object_range(const struct cap *c, word_t *start, word_t *size)
{
    unsigned bits;

    switch (c->type) {
    case CAP_UNTYPED:
    case CAP_FRAME:
        *start = c->paddr;
        *size = BIT(c->size_bits);
        return true;
    case CAP_TCB:
        bits = object_size_bits(OBJ_TCB, 0);
        break;
    case CAP_ENDPOINT:
        bits = object_size_bits(OBJ_ENDPOINT, 0);
        break;
    case CAP_NOTIFICATION:
        bits = object_size_bits(OBJ_NOTIFICATION, 0);
        break;
    case CAP_CNODE:
        bits = object_size_bits(OBJ_CNODE, c->size_bits);
        break;
    case CAP_PAGE_TABLE:
        bits = object_size_bits(OBJ_PAGE_TABLE, 0);
        break;
    case CAP_VSPACE:
        bits = object_size_bits(OBJ_VSPACE, 0);
        break;
    case CAP_ZOMBIE:
        bits = c->zombie_of == CAP_CNODE ? object_size_bits(OBJ_CNODE, c->size_bits)
                                         : object_size_bits(OBJ_TCB, 0);
        break;
    default:
        return false;
    }
    *start = arch_virt_to_phys(c->obj);
    *size = BIT(bits);
    return true;
}

static bool ranges_overlap(word_t a, word_t asize, word_t b, word_t bsize)
{
    return a < b + bsize && b < a + asize;
}

/*
 * The objects made from one untyped: its children one level down (copies of
 * the untyped itself aside; their own children are checked under them).
 * Each lies wholly below the watermark, and no two overlap.  Retype links
 * each new object right after the untyped, in ascending address order, at
 * the watermark, which only grows while children exist; unlinking keeps
 * the order.  So, read in list order, the children's addresses descend: each
 * ends at or below the start of the one before (caps to one object are
 * adjacent, and share its range).
 */
static bool check_untyped(const struct cte *ut)
{
    const struct cap *u = &ut->cap;
    word_t base = u->paddr, size = BIT(u->size_bits);
    word_t top = base + u->free_index;     /* the watermark */
    word_t limit = top;                     /* where the previous child starts */
    const struct cap *prev = NULL;

    if (u->free_index > size)
        return fail("untyped watermark beyond its size");
    for (const struct cte *s = ut->cdt_next; s && s->cdt_depth > ut->cdt_depth; s = s->cdt_next) {
        word_t start, len;
        if (s->cdt_depth != ut->cdt_depth + 1 || cap_same_object(u, &s->cap))
            continue;
        if (!object_range(&s->cap, &start, &len))
            return fail("untyped child names no memory");
        if (prev && cap_same_object(prev, &s->cap))
            continue;
        if (start < base || len > top - base || start - base > top - base - len)
            return fail("untyped child outside its parent below the watermark");
        if (start + len > limit)
            return fail("untyped children overlap or are out of order");
        limit = start;
        prev = &s->cap;
    }
    return true;
}

/* Caps that are roots of the derivation tree name memory no root untyped covers. */
static bool check_roots(void)
{
    static struct { word_t start, size; const struct cte *slot; } roots[BOOTINFO_MAX_UNTYPED];
    unsigned n = 0;

    for (const struct cte *s = cdt_first(); s; s = s->cdt_next) {
        if (s->cdt_depth != 0 || s->cap.type != CAP_UNTYPED)
            continue;
        if (n == ARRAY_SIZE(roots))
            return fail("more root untypeds than the boot record can hold");
        object_range(&s->cap, &roots[n].start, &roots[n].size);
        roots[n].slot = s;
        n++;
    }
    for (const struct cte *s = cdt_first(); s; s = s->cdt_next) {
        word_t start, size;
        if (s->cdt_depth != 0 || !object_range(&s->cap, &start, &size))
            continue;
        for (unsigned i = 0; i < n; i++) {
            if (roots[i].slot != s && ranges_overlap(start, size, roots[i].start, roots[i].size))
                return fail("root capabilities overlap an untyped");
        }
    }
    return true;
}

/* ---- Address spaces: which cores have loaded each ASID. */

/*
 * A free ASID has no cores; a core's loaded space is a live ASID that lists
 * the core, at that ASID's root table; every live ASID has its VSpace cap
 * (caps to one object are adjacent, so distinct VSpace objects are counted
 * by their first cap, and check_objects() matched each to its entry).
 */
static bool check_asids(void)
{
    unsigned live = 0, vspaces = 0;

    for (unsigned a = 0; a < ASID_COUNT; a++) {
        const struct asid_entry *e = &asid_table[a];
        if (e->root) {
            if (a == 0)
                return fail("ASID 0 is in use");
            live++;
            if (e->root_paddr != arch_virt_to_phys(e->root))
                return fail("an ASID's root table address is not its root's");
            for (unsigned core = ncores_online; core < NCPUS; core++) {
                if (coreset_has(&e->loaded, core))
                    return fail("ASID loaded on a core that is not online");
            }
            continue;
        }
        for (unsigned core = 0; core < NCPUS; core++) {
            if (coreset_has(&e->loaded, core))
                return fail("a free ASID is still loaded on a core");
        }
    }
    if (asid_table[0].root_paddr != arch_kernel_vspace_paddr())
        return fail("ASID 0's root table is not the kernel-only space's");
    for (unsigned core = 0; core < ncores_online; core++) {
        const struct core *c = &cores[core];
        if (c->loaded_asid >= ASID_COUNT)
            return fail("a core runs on an ASID out of range");
        const struct asid_entry *e = &asid_table[c->loaded_asid];
        if (c->loaded_vspace_paddr != e->root_paddr)
            return fail("a core's loaded root table is not its ASID's");
        if (c->loaded_asid == 0)
            continue;
        if (!e->root)
            return fail("a core runs on a freed address space");
        if (!coreset_has(&e->loaded, core))
            return fail("a core runs on an address space that does not list it");
    }
    for (const struct cte *s = cdt_first(); s; s = s->cdt_next) {
        if (s->cap.type == CAP_VSPACE &&
            !(s->cdt_prev && cap_same_object(&s->cdt_prev->cap, &s->cap)))
            vspaces++;
    }
    if (vspaces != live)
        return fail("live ASIDs and VSpace objects differ in number");
    return true;
}

/* ---- Blocked threads: each is in the queue of the object it waits on. */

static bool in_queue(const struct tcb *head, const struct tcb *t)
{
    unsigned long n = 0;

    for (const struct tcb *q = head; q; q = q->ep_next) {
        if (q == t)
            return true;
        if (++n > (1ul << 30))
            return false;
    }
    return false;
}

static bool check_blocked(const struct tcb *t)
{
    switch (t->state) {
    case TS_BLOCKED_SEND:
    case TS_BLOCKED_RECV:
        if (!t->blocked_on || !in_queue(((struct endpoint *)t->blocked_on)->head, t))
            return fail("a thread blocked on an endpoint is not in its queue");
        break;
    case TS_BLOCKED_NOTIFICATION:
        if (!t->blocked_on || !in_queue(((struct notification *)t->blocked_on)->head, t))
            return fail("a thread blocked on a notification is not in its queue");
        break;
    default:
        break;
    }
    return true;
}

static bool check_memory_and_threads(void)
{
    if (!check_roots())
        return false;
    for (const struct cte *s = cdt_first(); s; s = s->cdt_next) {
        if (s->cap.type == CAP_UNTYPED && !check_untyped(s))
            return false;
        if (s->cap.type == CAP_TCB && !check_blocked(s->cap.obj))
            return false;
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
    return check_objects() && check_memory_and_threads() && check_asids();
}
