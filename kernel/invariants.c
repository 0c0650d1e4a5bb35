/*
 * The kernel invariant checker (SYS_DEBUG_CHECK), the count of its
 * failures, the per-core record of the last system call that its report
 * names, and the one invariant DEBUG builds can break on purpose
 * (kernel/invariants.h).
 *
 * The checks: the capability derivation tree (cdt_check()), every core's
 * ready queues and bitmaps, every object a capability reaches (wait
 * queues, bindings, reply caps, ASIDs, zombies), untyped memory (children
 * inside their parent below the watermark, no overlap, roots disjoint),
 * blocked threads in the queue they wait on, which cores have loaded each
 * address space, and whose registers each core holds lazily.  The caller
 * holds the kernel lock exclusively (handle_debug_syscall()).
 */
#include "invariants.h"
#include "kernel.h"
#include "cdt.h"
#include "core.h"
#include "endpoint.h"
#include "notification.h"
#include "printf.h"
#include "sched.h"
#include "untyped.h"
#include "vspace.h"
#include <abi/bootinfo.h>
#include <abi/msginfo.h>
#include <abi/objects.h>

/* ---- What each core served last. */

#define NO_STATUS (~(word_t)0)

struct last_invocation {
    word_t sysno;
    word_t label;
    word_t cap_type;            /* enum cap_type, or CAP_TYPE_COUNT before the lookup */
    word_t status;              /* enum status, or NO_STATUS */
    word_t ip;                  /* the caller's ip at entry: a restarted call moves it back */
} CACHE_ALIGNED;

_Static_assert(sizeof(struct last_invocation) % CACHE_LINE_SIZE == 0,
               "one core's record shares no cache line with another's");

/* [o] written by its own core under the kernel lock, read under the exclusive lock; sysno 0
 * until the core serves its first call. */
static struct last_invocation last_invocation[NCPUS];

static const char *const cap_type_names[CAP_TYPE_COUNT + 1] = {
    [CAP_NULL] = "null", [CAP_UNTYPED] = "untyped", [CAP_TCB] = "tcb",
    [CAP_ENDPOINT] = "endpoint", [CAP_NOTIFICATION] = "notification", [CAP_CNODE] = "cnode",
    [CAP_FRAME] = "frame", [CAP_PAGE_TABLE] = "page_table", [CAP_VSPACE] = "vspace",
    [CAP_REPLY] = "reply", [CAP_IRQ_CONTROL] = "irq_control", [CAP_IRQ_HANDLER] = "irq_handler",
    [CAP_IO_PORT] = "io_port", [CAP_ZOMBIE] = "zombie", [CAP_TYPE_COUNT] = "none",
};

void invocation_note_start(struct tcb *t, word_t sysno)
{
    struct last_invocation *l = &last_invocation[arch_core_id()];

    l->sysno = sysno;
    l->ip = arch_get_reg(&t->context, ABI_IP);
    l->label = msginfo_label(arch_get_reg(&t->context, ABI_MSGINFO));
    l->cap_type = CAP_TYPE_COUNT;
    l->status = NO_STATUS;
}

void invocation_note_cap(unsigned cap_type)
{
    last_invocation[arch_core_id()].cap_type = cap_type;
}

void invocation_note_end(struct tcb *t)
{
    struct last_invocation *l = &last_invocation[arch_core_id()];

    if (my_core()->entry_thread == t && tcb_runnable(t) && arch_get_reg(&t->context, ABI_IP) == l->ip)
        l->status = arch_get_reg(&t->context, ABI_STATUS);
}

/* ---- The count and the report. */

/* [x] checks failed since boot, whoever asked. */
static word_t failed_checks;

word_t invariant_failures(void)
{
    return failed_checks;
}

static bool fail(const char *what)
{
    kprintf("invariant failed: %s\n", what);
    kprintf("@@ {\"invariant\": {\"reason\": \"%s\", \"failures\": %lu, \"last\": [", what,
            (unsigned long)failed_checks + 1);
    for (unsigned c = 0; c < ncores_online; c++) {
        const struct last_invocation *l = &last_invocation[c];
        if (l->sysno == 0) {
            kprintf("%s{\"core\": %u, \"sysno\": 0}", c ? ", " : "", c);
            continue;
        }
        kprintf("%s{\"core\": %u, \"sysno\": %lu, \"cap\": \"%s\", \"label\": %lu, \"status\": ",
                c ? ", " : "", c, (unsigned long)l->sysno,
                cap_type_names[l->cap_type < CAP_TYPE_COUNT ? l->cap_type : CAP_TYPE_COUNT],
                (unsigned long)l->label);
        if (l->status == NO_STATUS)
            kprintf("null}");
        else
            kprintf("%lu}", (unsigned long)l->status);
    }
    kprintf("]}}\n");
    failed_checks++;
    return false;
}

/* ---- The checks. */

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

/*
 * The registers a core holds lazily (kernel/arch.h) are those of a live
 * thread of that core: deletion and migration take them back first.
 */
static bool check_held_contexts(void)
{
    for (unsigned core = 0; core < ncores_online; core++) {
        const struct arch_context *held = arch_core_held_context(core);
        bool found = held == NULL;
        for (const struct cte *s = cdt_first(); s && !found; s = s->cdt_next) {
            if (s->cap.type != CAP_TCB)
                continue;
            const struct tcb *t = s->cap.obj;
            found = &t->context == held && t->affinity == core;
        }
        if (!found)
            return fail("a core holds registers of a thread that is gone or runs elsewhere");
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
    return check_objects() && check_memory_and_threads() && check_asids() && check_held_contexts();
}

/* ---- The planted invariant (DEBUG builds). */

/*
 * The caller's address space is marked loaded on a core that is not
 * online, which check_asids() refuses.  Nothing else reads those bits
 * (shootdowns ask only the cores online) and nothing clears them while the
 * space lives, so the break stays until it is repaired and harms nothing.
 */
static struct {
    unsigned asid;              /* 0: nothing planted */
    unsigned core;
} planted;

enum status invariants_break(struct tcb *caller)
{
    unsigned asid = tcb_vspace_asid(caller);
    word_t *bits;

    if (!DEBUG || planted.asid || asid == 0 || ncores_online >= NCPUS)
        return E_ILLEGAL_OPERATION;
    planted.asid = asid;
    planted.core = ncores_online;
    bits = &asid_table[asid].loaded.bits[planted.core / WORD_BITS];
    /* Atomic: cores online add their own bits to the same word without the exclusive lock. */
    __atomic_fetch_or(bits, BIT(planted.core % WORD_BITS), __ATOMIC_RELAXED);
    return E_OK;
}

enum status invariants_repair(void)
{
    word_t *bits;

    if (!planted.asid)
        return E_ILLEGAL_OPERATION;
    bits = &asid_table[planted.asid].loaded.bits[planted.core / WORD_BITS];
    __atomic_fetch_and(bits, ~BIT(planted.core % WORD_BITS), __ATOMIC_RELAXED);
    planted.asid = 0;
    return E_OK;
}
