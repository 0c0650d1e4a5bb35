/*
 * APP=fuzz: random invocations against the kernel from every core.
 *
 * Threads (per core i):
 *   fuzzer i   priority 100 on core i, in its own VSpace (the root task's
 *              image mapped read-only, its own stack, IPC buffer and stats
 *              page at addresses that differ per fuzzer) and its own CNode
 *              of FUZZ_SLOTS slots.  It never holds a capability to
 *              anything of the root task, so nothing it does reaches the
 *              root task;
 *   ticker i   priority 1 on core i, in the root task's space: it runs only
 *              when the fuzzer (and everything else on the core) is blocked,
 *              and after a while tells the root task so;
 *   root task  priority 200 on core 0, asleep on a notification that the
 *              tickers and the device timer IRQ signal.
 *
 * Each fuzzer's CNode starts with a pool of valid capabilities of every
 * kind (fuzz_pool below): endpoints and notifications shared by all the
 * fuzzers (so IPC and capability transfer cross cores), its own TCB and the
 * other fuzzers' TCBs, its own CNode and VSpace, a spare VSpace, TCB and
 * CNode, frames, page tables, an IRQ handler, an untyped of its own to
 * retype from, and a badged cap to the root task's fault endpoint.  The
 * fuzzer remembers what kind of capability it believes each slot holds
 * (it learns from its own results), picks mostly slots of a kind it wants
 * and a label that fits the kind, with arguments that mix valid values,
 * boundary values and garbage, then mutates the message now and then.
 *
 * A fuzzer that is blocked for good (a Recv nobody answers, suspended by
 * another fuzzer, a fault the root task never answers, a priority below the
 * ticker's) is restarted by the root task: its TCB is configured again and
 * it starts over with a new seed.  Every FUZZ_EPOCH calls, or when it asks,
 * its pool is rebuilt: its untypeds are revoked (every object it made goes)
 * and its CNode is emptied and refilled.
 *
 * Determinism: on one core nothing but the fuzzer runs between its calls
 * (the ticker runs only once it is blocked for good, the root task only
 * when the ticker or a timer tick wakes it, and a restart depends only on
 * where the fuzzer stopped), so a seed gives the same calls and statuses,
 * summed up in the digest of the final record.  The device timer restarts
 * a fuzzer only when a thread of its own at a priority above the ticker's
 * keeps the core busy, which makes a run timing-dependent.
 *
 * At the end every fuzz thread is suspended, SYS_DEBUG_CHECK runs, every
 * fuzz object is revoked and SYS_DEBUG_CHECK runs again.  The `test`
 * record says how many calls hit each kind of object and the status counts.
 */
#include <apps.h>
#include <arch_user.h>
#include <thread.h>

#define FUZZ_BITS   7
#define FUZZ_SLOTS  (1u << FUZZ_BITS)
#define MAX_FUZZERS BOOTINFO_MAX_CORES
#define MAX_PEERS   4

/* Addresses in a fuzzer's space; each fuzzer uses its own, so a fuzzer that another one moved into
 * a foreign VSpace faults at once instead of sharing that space's stack. */
#define FUZZ_IPC_VADDR(i)   (0x30000000UL + (word_t)(i) * 0x1000UL)
#define FUZZ_STACK_VADDR(i) (0x30100000UL + (word_t)(i) * 0x10000UL)
#define FUZZ_STATS_VADDR(i) (0x32000000UL + (word_t)(i) * 0x1000UL)
/* Where fuzzers map frames: 16 MiB, below every port's ARCH_FAR_VADDR. */
#define FUZZ_WINDOW         0x40000000UL
#define FUZZ_WINDOW_PAGES   4096u

#define FUZZ_PRIO   100
#define TICKER_PRIO 1
#define ROOT_FUZZ_PRIO 200
#define FUZZ_EPOCH  4000        /* calls between pool rebuilds */
#define FUZZ_MAGIC_LABEL 0xf022 /* a fuzzer asks for a rebuild: Call on its fault cap */

/* Badges of the root task's wake notification. */
#define WAKE_TICKER ((word_t)1 << 0)
#define WAKE_TIMER  ((word_t)1 << 1)

/* Slots of a fuzzer's CNode.  Its cap carries a guard, so slot s is (s, WORD_BITS). */
enum fuzz_slot {
    FS_NULL = 0,
    FS_CNODE,           /* its own CNode */
    FS_VSPACE,          /* its own VSpace */
    FS_SELF,            /* its own TCB */
    FS_FAULT,           /* badged cap to the root task's fault endpoint: its fault handler */
    FS_IRQ,             /* an IRQ handler of its own (an IRQ that never fires) */
    FS_EP0, FS_EP1,     /* shared endpoints, all rights */
    FS_EP_BADGED,       /* shared endpoint 0, badged */
    FS_EP_SEND,         /* shared endpoint 2, write and grant only, badged */
    FS_EP_PRIV,         /* an endpoint of its own */
    FS_NTFN0,           /* shared notification 0 */
    FS_NTFN_BADGED,     /* shared notification 0, badged */
    FS_NTFN1,           /* shared notification 1 */
    FS_PEER0,           /* TCBs of the other fuzzers */
    FS_PEER_END = FS_PEER0 + MAX_PEERS,
    FS_TCB_SPARE = FS_PEER_END,
    FS_VSPACE_SPARE,
    FS_CNODE_SPARE,     /* radix 4, no guard */
    FS_FRAME0, FS_FRAME1, FS_FRAME2, FS_FRAME3,
    FS_PT0, FS_PT1,
    FS_UNTYPED,         /* its own untyped, to retype from */
    FS_FIRST_FREE,
};

/* What a fuzzer believes a slot holds. */
enum kind {
    K_EMPTY, K_UNKNOWN, K_UNTYPED, K_TCB, K_EP, K_NTFN, K_CNODE, K_CSPACE, K_FRAME, K_PT,
    K_VSPACE, K_IRQ, K_REPLY, K_COUNT
};

static const char *const kind_names[K_COUNT] = {
    "garbage", "unknown", "untyped", "tcb", "endpoint", "notification", "cnode", "own_cnode",
    "frame", "page_table", "vspace", "irq_handler", "reply",
};

/* Shared between a fuzzer (its own mapping) and the root task. */
struct fuzz_stats {
    volatile word_t calls;          /* by this fuzzer, over all its incarnations */
    volatile word_t fresh;          /* set by the root task after a rebuild: the pool is as built */
    volatile word_t want_rebuild;   /* set by the fuzzer when its pool ran dry */
    volatile word_t digest;         /* a hash of every status and result length */
    volatile word_t status[E_COUNT + 1];
    volatile word_t kind_calls[K_COUNT];
    volatile word_t kind_ok[K_COUNT];
    volatile uint32_t kind_status[K_COUNT][E_COUNT + 1];   /* verbose=1 prints it */
    volatile uint32_t lookup_fail[K_COUNT][5][8];          /* by failure kind and argument */
    volatile word_t ipc_ok;         /* IPC calls that moved a message */
    volatile word_t caps_received;
    /* check=1: the first call after which the invariant checker failed (sysno, cap, kind, label,
     * status, the extra caps, the arguments). */
    volatile word_t last[4];        /* the call in progress: sysno, cap, kind, label */
    volatile word_t culprit_len;
    volatile word_t culprit[8 + 16];
    uint8_t kind[FUZZ_SLOTS];       /* the fuzzer's beliefs, kept over restarts */
};

/* Read-only for the fuzzers (the image is mapped read-only into their spaces). */
struct fuzz_cfg {
    uint64_t seed;              /* written by the root task before each (re)start */
    word_t quota;
    word_t index;
    word_t ncores;
    word_t check;               /* check=1: run the invariant checker after every call */
};

static struct fuzz_cfg cfgs[MAX_FUZZERS];

/* ------------------------------------------------------------------------------------------ */
/* The fuzzer.  Everything it writes is on its stack, its IPC buffer or its stats page. */

struct fstate {
    uint64_t s;
    const struct fuzz_cfg *cfg;
    struct fuzz_stats *stats;
    struct ipc_buffer *buf;
    word_t vwant;               /* an address whose Frame Map lacked a table */
    word_t full_untyped;        /* an untyped that ran out of memory: worth a Revoke */
    uint8_t *kind;              /* in the stats page */
};

static word_t rnd(struct fstate *f)
{
    return (word_t)xorshift64(&f->s);
}

static word_t below(struct fstate *f, word_t n)
{
    return n ? rnd(f) % n : 0;
}

static bool chance(struct fstate *f, word_t percent)
{
    return below(f, 100) < percent;
}

static word_t boundary_word(struct fstate *f)
{
    const word_t top = (word_t)1 << (WORD_BITS - 1);
    const word_t v[] = {
        0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256, 257, 4095, 4096,
        WORD_BITS - 1, WORD_BITS, WORD_BITS + 1, top, top - 1, ~(word_t)0, ~(word_t)0 - 1,
        ~(word_t)0 << 12, FUZZ_SLOTS - 1, FUZZ_SLOTS, MSG_MAX_LENGTH, MSG_MAX_LENGTH + 1,
    };
    return v[below(f, ARRAY_SIZE(v))];
}

/* A plain argument: mostly small or boundary values, sometimes anything. */
static word_t rnd_word(struct fstate *f)
{
    word_t r = below(f, 10);
    if (r < 4)
        return boundary_word(f);
    if (r < 7)
        return below(f, 32);
    return rnd(f);
}

static word_t rnd_vaddr(struct fstate *f, word_t align)
{
    word_t r = below(f, 20);
    word_t a;
    if (r < 12)
        a = FUZZ_WINDOW + below(f, FUZZ_WINDOW_PAGES) * PAGE_SIZE;
    else if (r < 14 && f->vwant)
        a = f->vwant;
    else if (r < 17) {
        const word_t v[] = {
            0, PAGE_SIZE, 0x400000, BOOTINFO_VADDR, FUZZ_IPC_VADDR(f->cfg->index),
            FUZZ_STACK_VADDR(f->cfg->index), FUZZ_STATS_VADDR(f->cfg->index), ARCH_FAR_VADDR,
            ARCH_FAR_VADDR_2, ARCH_KERNEL_VADDR, ARCH_KERNEL_VADDR - PAGE_SIZE, ~(word_t)0 << 12,
            FUZZ_WINDOW + FUZZ_WINDOW_PAGES * PAGE_SIZE,
        };
        a = v[below(f, ARRAY_SIZE(v))];
    } else if (r < 19)
        a = rnd(f) & ~(PAGE_SIZE - 1);
    else
        return rnd(f);
    return a & ~(align - 1);
}

/* A slot of the wanted kind, else any full slot, else 0. */
static word_t slot_of(struct fstate *f, int kind)
{
    word_t start = below(f, FUZZ_SLOTS);
    for (word_t k = 0; k < FUZZ_SLOTS; k++) {
        word_t s = (start + k) % FUZZ_SLOTS;
        if (kind == K_COUNT ? f->kind[s] != K_EMPTY && f->kind[s] < K_COUNT : f->kind[s] == kind)
            return s;
    }
    return kind == K_COUNT ? 0 : slot_of(f, K_COUNT);
}

static word_t full_slot(struct fstate *f)
{
    return slot_of(f, K_COUNT);
}

/* A cap to its own CNode (K_CSPACE: the one whose slots it tracks), wherever it went. */
static cptr_t own_cnode(struct fstate *f)
{
    word_t start = below(f, FUZZ_SLOTS);
    for (word_t k = 0; k < FUZZ_SLOTS; k++) {
        word_t s = (start + k) % FUZZ_SLOTS;
        if (f->kind[s] == K_CSPACE)
            return s;
    }
    return FS_CNODE;
}

/* An empty slot of the churn area, or any slot of it when none is empty. */
static word_t empty_slot(struct fstate *f)
{
    const word_t n = FUZZ_SLOTS - FS_FIRST_FREE;
    word_t start = below(f, n);
    for (word_t k = 0; k < n; k++) {
        word_t s = FS_FIRST_FREE + (start + k) % n;
        if (f->kind[s] == K_EMPTY)
            return s;
    }
    return FS_FIRST_FREE + start;
}

/* A capability argument: usually one of the kind the call wants. */
static cptr_t cap_arg(struct fstate *f, int kind)
{
    word_t r = below(f, 100);
    if (r < 78)
        return slot_of(f, kind);
    if (r < 90)
        return full_slot(f);
    if (r < 97)
        return below(f, FUZZ_SLOTS);
    return rnd(f);
}

/* A slot index for a CNode argument: full or empty as wanted, sometimes anything. */
static word_t index_arg(struct fstate *f, bool want_empty)
{
    word_t r = below(f, 100);
    if (r < 85)
        return want_empty ? empty_slot(f) : full_slot(f);
    if (r < 93)
        return below(f, FUZZ_SLOTS);
    return rnd_word(f);
}

static word_t depth_arg(struct fstate *f)
{
    return chance(f, 88) ? WORD_BITS : rnd_word(f);
}

static word_t rights_arg(struct fstate *f)
{
    return chance(f, 85) ? below(f, 16) : rnd(f);
}

static word_t prio_arg(struct fstate *f)
{
    return chance(f, 85) ? below(f, FUZZ_PRIO + 2) : rnd_word(f);
}

static int type_kind(word_t type)
{
    switch (type) {
    case OBJ_UNTYPED: return K_UNTYPED;
    case OBJ_TCB: return K_TCB;
    case OBJ_ENDPOINT: return K_EP;
    case OBJ_NOTIFICATION: return K_NTFN;
    case OBJ_CNODE: return K_CNODE;
    case OBJ_FRAME:
    case OBJ_LARGE_FRAME: return K_FRAME;
    case OBJ_PAGE_TABLE: return K_PT;
    case OBJ_VSPACE: return K_VSPACE;
    default: return K_UNKNOWN;
    }
}

/* One call being built. */
struct call {
    word_t sysno;
    cptr_t cap;
    int kind;                   /* what the fuzzer believes the cap is */
    word_t label;
    word_t args[MSG_MAX_LENGTH];
    unsigned nargs;
    cptr_t caps[MSG_MAX_EXTRA_CAPS];
    unsigned ncaps;
    word_t unwrapped;
    bool object;                /* built as an object invocation (not IPC) */
    bool tracked;               /* an invocation on its own CNode whose result it can follow */
};

static void arg(struct call *c, word_t v)
{
    if (c->nargs < MSG_MAX_LENGTH)
        c->args[c->nargs++] = v;
}

static void xcap(struct call *c, cptr_t v)
{
    if (c->ncaps < MSG_MAX_EXTRA_CAPS)
        c->caps[c->ncaps++] = v;
}

static void build_untyped(struct fstate *f, struct call *c)
{
    c->label = UNTYPED_RETYPE;
    word_t type = chance(f, 92) ? below(f, OBJ_TYPE_COUNT) : rnd_word(f);
    word_t size;
    if (type == OBJ_UNTYPED)
        size = chance(f, 85) ? 4 + below(f, 14) : rnd_word(f);
    else if (type == OBJ_CNODE)
        size = chance(f, 85) ? 1 + below(f, 6) : rnd_word(f);
    else
        size = chance(f, 85) ? 0 : rnd_word(f);
    arg(c, type);
    arg(c, size);
    bool into_root = chance(f, 85);
    arg(c, into_root ? 0 : slot_of(f, K_CNODE));     /* node index */
    arg(c, into_root ? 0 : depth_arg(f));            /* node depth: 0 = the root itself */
    arg(c, !into_root ? below(f, 16) : chance(f, 90) ? empty_slot(f) : rnd_word(f));
    arg(c, chance(f, 85) ? 1 + below(f, 3) : rnd_word(f));
    cptr_t own = own_cnode(f);
    xcap(c, chance(f, 85) ? own : cap_arg(f, K_CNODE));
    c->tracked = into_root && c->caps[0] == own;
}

static void build_cnode(struct fstate *f, struct call *c)
{
    static const word_t labels[] = {
        CNODE_COPY, CNODE_COPY, CNODE_MINT, CNODE_MINT, CNODE_MOVE, CNODE_MUTATE, CNODE_ROTATE,
        CNODE_DELETE, CNODE_DELETE, CNODE_REVOKE, CNODE_SAVE_CALLER,
    };
    c->label = labels[below(f, ARRAY_SIZE(labels))];
    /* Mostly its own CNode, whose slots it knows. */
    cptr_t own = own_cnode(f);
    if (chance(f, 80))
        c->cap = own;
    c->tracked = c->cap == own;
    /* Losing the last cap to its own CNode ends its CNode work until a rebuild: spare it mostly. */
    if ((c->label == CNODE_DELETE || c->label == CNODE_REVOKE || c->label == CNODE_MOVE ||
         c->label == CNODE_MUTATE || c->label == CNODE_ROTATE) && chance(f, 90))
        f->kind[own] = K_CSPACE + K_COUNT;       /* hidden from index_arg for this call */
    switch (c->label) {
    case CNODE_DELETE:
    case CNODE_REVOKE:
        arg(c, index_arg(f, false));
        arg(c, depth_arg(f));
        break;
    case CNODE_SAVE_CALLER:
        arg(c, index_arg(f, true));
        arg(c, depth_arg(f));
        break;
    case CNODE_ROTATE:
        arg(c, index_arg(f, chance(f, 70)));         /* dest */
        arg(c, depth_arg(f));
        arg(c, index_arg(f, false));                 /* pivot */
        arg(c, depth_arg(f));
        arg(c, rnd_word(f));
        arg(c, index_arg(f, false));                 /* source */
        arg(c, depth_arg(f));
        arg(c, rnd_word(f));
        xcap(c, chance(f, 85) ? own : cap_arg(f, K_CNODE));
        xcap(c, chance(f, 85) ? own : cap_arg(f, K_CNODE));
        break;
    default:                                         /* Copy, Mint, Move, Mutate */
        arg(c, index_arg(f, true));
        arg(c, depth_arg(f));
        arg(c, index_arg(f, false));
        arg(c, depth_arg(f));
        if (c->label == CNODE_COPY || c->label == CNODE_MINT)
            arg(c, rights_arg(f));
        if (c->label == CNODE_MINT || c->label == CNODE_MUTATE)
            arg(c, chance(f, 60) ? below(f, 1024) : rnd_word(f));
        xcap(c, chance(f, 85) ? own : cap_arg(f, K_CNODE));
        break;
    }
    if (f->kind[own] == K_CSPACE + K_COUNT)
        f->kind[own] = K_CSPACE;
    for (unsigned i = 0; i < c->ncaps; i++)
        c->tracked = c->tracked && c->caps[i] == own;
    for (unsigned i = 1; i < c->nargs && c->label != CNODE_ROTATE; i += 2)
        c->tracked = c->tracked && c->args[i] == WORD_BITS;
}

static void build_tcb(struct fstate *f, struct call *c)
{
    /* Weights: the calls that stop the target (Suspend, WriteRegisters with garbage, a new space)
     * cost a restart, so they are rarer than the harmless ones. */
    static const word_t labels[] = {
        TCB_READ_REGISTERS, TCB_READ_REGISTERS, TCB_WRITE_REGISTERS, TCB_COPY_REGISTERS,
        TCB_CONFIGURE, TCB_SET_PRIORITY, TCB_SET_PRIORITY, TCB_SET_AFFINITY, TCB_SET_AFFINITY,
        TCB_SET_IPC_BUFFER, TCB_SET_SPACE, TCB_SUSPEND, TCB_RESUME, TCB_RESUME, TCB_RESUME,
        TCB_BIND_NOTIFICATION, TCB_BIND_NOTIFICATION, TCB_UNBIND_NOTIFICATION, TCB_SET_NAME,
    };
    c->label = labels[below(f, ARRAY_SIZE(labels))];
    switch (c->label) {
    case TCB_READ_REGISTERS:
        arg(c, chance(f, 80) ? 0 : rnd_word(f));
        arg(c, chance(f, 85) ? below(f, ARCH_USER_REGS + 2) : rnd_word(f));
        break;
    case TCB_WRITE_REGISTERS: {
        arg(c, chance(f, 50) ? below(f, 2) : rnd_word(f));
        word_t n = chance(f, 85) ? below(f, ARCH_USER_REGS + 2) : rnd_word(f);
        arg(c, n);
        for (word_t i = 0; i < n && i < 24; i++)
            arg(c, chance(f, 30) ? rnd_vaddr(f, 8) : rnd_word(f));
        break;
    }
    case TCB_COPY_REGISTERS:
        arg(c, below(f, 4) | (chance(f, 90) ? 0 : rnd(f)));
        xcap(c, cap_arg(f, K_TCB));
        break;
    case TCB_CONFIGURE:
    case TCB_SET_SPACE:
        arg(c, chance(f, 70) ? FS_FAULT : cap_arg(f, K_EP));
        arg(c, chance(f, 70) ? 0 : rnd_word(f));
        xcap(c, cap_arg(f, K_CNODE));
        xcap(c, cap_arg(f, K_VSPACE));
        if (c->label == TCB_CONFIGURE) {
            arg(c, rnd_vaddr(f, chance(f, 80) ? 8 : 1) + (chance(f, 50) ? 8 * below(f, 512) : 0));
            xcap(c, cap_arg(f, K_FRAME));
        }
        break;
    case TCB_SET_PRIORITY:
        arg(c, prio_arg(f));
        if (chance(f, 40))
            xcap(c, cap_arg(f, K_TCB));
        break;
    case TCB_SET_AFFINITY:
        arg(c, chance(f, 85) ? below(f, f->cfg->ncores + 1) : rnd_word(f));
        break;
    case TCB_SET_IPC_BUFFER:
        arg(c, rnd_vaddr(f, chance(f, 80) ? 8 : 1) + (chance(f, 50) ? 8 * below(f, 512) : 0));
        xcap(c, cap_arg(f, K_FRAME));
        break;
    case TCB_BIND_NOTIFICATION:
        xcap(c, cap_arg(f, K_NTFN));
        break;
    case TCB_SET_NAME: {
        word_t n = chance(f, 85) ? below(f, 40) : rnd_word(f);
        arg(c, n);
        for (word_t i = 0; i < 6; i++)
            arg(c, rnd(f));
        break;
    }
    default:
        break;
    }
    /* Suspending or rewriting itself stops it until a restart: mostly aim elsewhere. */
    bool stops = c->label == TCB_SUSPEND || c->label == TCB_WRITE_REGISTERS ||
                 c->label == TCB_CONFIGURE || c->label == TCB_SET_SPACE ||
                 c->label == TCB_SET_IPC_BUFFER;
    if (stops && c->cap == FS_SELF && chance(f, 90))
        c->cap = FS_TCB_SPARE;
}

static void build_frame(struct fstate *f, struct call *c)
{
    word_t r = below(f, 10);
    c->label = r < 6 ? FRAME_MAP : r < 9 ? FRAME_UNMAP : FRAME_GET_ADDRESS;
    if (c->label == FRAME_MAP) {
        word_t align = chance(f, 85) ? PAGE_SIZE : chance(f, 50) ? ARCH_LARGE_PAGE_SIZE : 1;
        arg(c, rnd_vaddr(f, align));
        arg(c, rights_arg(f));
        arg(c, chance(f, 85) ? below(f, 4) : rnd(f));
        xcap(c, cap_arg(f, K_VSPACE));
    }
}

static void build_page_table(struct fstate *f, struct call *c)
{
    c->label = chance(f, 65) ? PAGE_TABLE_MAP : PAGE_TABLE_UNMAP;
    if (c->label == PAGE_TABLE_MAP) {
        arg(c, chance(f, 40) && f->vwant ? f->vwant : rnd_vaddr(f, 1));
        arg(c, chance(f, 85) ? below(f, 4) : rnd(f));
        xcap(c, cap_arg(f, K_VSPACE));
    }
}

static void build_irq(struct fstate *f, struct call *c)
{
    word_t r = below(f, 10);
    c->label = r < 4 ? IRQ_HANDLER_SET_NOTIFICATION : r < 7 ? IRQ_HANDLER_ACK : r < 9 ?
               IRQ_HANDLER_CLEAR : IRQ_CONTROL_GET;
    if (c->label == IRQ_HANDLER_SET_NOTIFICATION)
        xcap(c, cap_arg(f, K_NTFN));
    if (c->label == IRQ_CONTROL_GET) {
        arg(c, rnd_word(f));
        arg(c, index_arg(f, true));
        arg(c, depth_arg(f));
        xcap(c, own_cnode(f));
    }
}

/* A message for IPC: label, MRs, maybe capabilities to transfer, and a receive slot. */
static void build_message(struct fstate *f, struct call *c)
{
    c->label = chance(f, 70) ? below(f, 16) : rnd(f) >> 12;
    word_t len = chance(f, 85) ? below(f, 8) : chance(f, 50) ? below(f, MSG_MAX_LENGTH + 8) : 0;
    for (word_t i = 0; i < len; i++)
        arg(c, rnd(f));
    if (chance(f, 30)) {
        word_t n = 1 + below(f, MSG_MAX_EXTRA_CAPS);
        for (word_t i = 0; i < n; i++)
            xcap(c, chance(f, 25) ? c->cap : cap_arg(f, K_COUNT));
    }
    if (chance(f, 5))
        c->unwrapped = below(f, 8);
    struct ipc_buffer *b = f->buf;
    word_t r = below(f, 100);
    if (r < 75) {
        b->receive_cnode = chance(f, 80) ? own_cnode(f) : 0;
        b->receive_index = empty_slot(f);
        b->receive_depth = WORD_BITS;
    } else if (r < 85) {
        b->receive_depth = 0;
    } else if (r < 90) {
        b->receive_cnode = cap_arg(f, K_COUNT);
        b->receive_index = rnd_word(f);
        b->receive_depth = rnd_word(f);
    }
}

/* IPC on an endpoint or notification.  Blocking calls wait for another fuzzer; on one core there
 * is none, so they are rare there (each costs a restart). */
static void build_ipc(struct fstate *f, struct call *c)
{
    bool multi = f->cfg->ncores > 1;
    word_t r = below(f, 1000);
    if (c->kind == K_NTFN) {
        c->sysno = r < 450 ? SYS_SEND : r < 550 ? SYS_NBSEND : r < (multi ? 980u : 995u) ?
                   SYS_NBRECV : SYS_RECV;
    } else if (multi) {
        static const struct { word_t upto, sysno; } t[] = {
            { 450, SYS_NBSEND }, { 910, SYS_NBRECV }, { 925, SYS_CALL }, { 932, SYS_SEND },
            { 945, SYS_RECV }, { 952, SYS_REPLY_RECV }, { 1000, SYS_REPLY },
        };
        unsigned i = 0;
        while (r >= t[i].upto)
            i++;
        c->sysno = t[i].sysno;
    } else {
        c->sysno = r < 500 ? SYS_NBSEND : r < 940 ? SYS_NBRECV : r < 985 ? SYS_REPLY :
                   r < 991 ? SYS_CALL : r < 994 ? SYS_SEND : r < 997 ? SYS_RECV : SYS_REPLY_RECV;
    }
    build_message(f, c);
}

/* The kind of object to aim at next, by weight. */
static int pick_kind(struct fstate *f)
{
    static const struct { uint8_t kind, weight; } w[] = {
        { K_EP, 20 }, { K_NTFN, 8 }, { K_TCB, 14 }, { K_CNODE, 4 }, { K_CSPACE, 12 },
        { K_UNTYPED, 9 }, { K_FRAME, 12 }, { K_PT, 6 }, { K_VSPACE, 1 }, { K_IRQ, 3 }, { K_REPLY, 3 },
        { K_UNKNOWN, 7 },
    };
    word_t total = 0;
    for (unsigned i = 0; i < ARRAY_SIZE(w); i++)
        total += w[i].weight;
    word_t r = below(f, total);
    for (unsigned i = 0; i < ARRAY_SIZE(w); i++) {
        if (r < w[i].weight)
            return w[i].kind;
        r -= w[i].weight;
    }
    return K_EP;
}

static void build_for_kind(struct fstate *f, struct call *c, int kind)
{
    c->sysno = SYS_CALL;
    c->object = kind != K_EP && kind != K_NTFN && kind != K_REPLY;
    switch (kind) {
    case K_UNTYPED: build_untyped(f, c); break;
    case K_CNODE:
    case K_CSPACE: build_cnode(f, c); break;
    case K_TCB: build_tcb(f, c); break;
    case K_FRAME: build_frame(f, c); break;
    case K_PT: build_page_table(f, c); break;
    case K_IRQ: build_irq(f, c); break;
    case K_EP:
    case K_NTFN: build_ipc(f, c); break;
    case K_REPLY:
        c->sysno = chance(f, 60) ? SYS_SEND : SYS_NBSEND;
        build_message(f, c);
        break;
    default:                    /* VSpace (no invocations) or nothing sensible */
        c->label = below(f, INV_COUNT + 2);
        for (word_t i = below(f, 6); i; i--)
            arg(c, rnd_word(f));
        break;
    }
}

/* Now and then a valid call is bent: another label, fewer or more arguments, a garbage one. */
static void mutate(struct fstate *f, struct call *c)
{
    word_t r = below(f, 100);
    if (r < 3)
        c->label = chance(f, 70) ? below(f, INV_COUNT + 2) : rnd(f) >> 12;
    else if (r < 7 && c->nargs)
        c->nargs = below(f, c->nargs);
    else if (r < 10 && c->nargs)
        c->args[below(f, c->nargs)] = rnd(f);
    else if (r < 12 && c->ncaps)
        c->caps[below(f, c->ncaps)] = rnd(f);
    else if (r < 13)
        c->ncaps = below(f, MSG_MAX_EXTRA_CAPS + 1);
    else if (r < 14 && c->sysno == SYS_CALL)
        c->sysno = chance(f, 50) ? SYS_SEND : SYS_NBSEND;
}

/* Choose the whole call. */
static void build(struct fstate *f, struct call *c)
{
    memset(c, 0, sizeof(*c));
    word_t r = below(f, 1000);
    if (r < 4) {
        /* Unknown numbers fault: the root task never answers, so this costs a restart. */
        c->sysno = SYS_COUNT + below(f, 100);
        return;
    }
    if (r < 14) {
        c->sysno = SYS_YIELD;
        return;
    }
    if (r < 16) {
        c->sysno = chance(f, 80) ? SYS_DEBUG_CORE : SYS_DEBUG_CHECK;
        return;
    }
    if (r < 40 && f->full_untyped) {
        /* Free a full untyped, so that Retype keeps succeeding. */
        c->sysno = SYS_CALL;
        c->object = true;
        c->cap = own_cnode(f);
        c->kind = K_CSPACE;
        c->label = CNODE_REVOKE;
        arg(c, f->full_untyped);
        arg(c, WORD_BITS);
        c->tracked = true;
        f->full_untyped = 0;
        return;
    }
    if (r < 70) {
        /* Any slot, or any word: the lookup paths. */
        c->cap = r < 50 ? below(f, FUZZ_SLOTS) : r < 60 ? rnd(f) : below(f, FUZZ_SLOTS) | rnd(f) << FUZZ_BITS;
        c->kind = c->cap < FUZZ_SLOTS ? f->kind[c->cap] : K_EMPTY;
        build_for_kind(f, c, c->kind == K_EMPTY || c->kind == K_UNKNOWN ? pick_kind(f) : c->kind);
    } else {
        int want = pick_kind(f);
        c->cap = slot_of(f, want);
        c->kind = f->kind[c->cap];
        /* An unknown slot: try it as some kind and learn from the status. */
        build_for_kind(f, c, c->kind == K_UNKNOWN ? pick_kind(f) : c->kind);
    }
    if (c->sysno == SYS_CALL || c->sysno == SYS_SEND || c->sysno == SYS_NBSEND)
        mutate(f, c);
}

/* Learn what the result says about the slots. */
static void track(struct fstate *f, const struct call *c, word_t st, const struct msg *m)
{
    uint8_t *k = f->kind;
    bool invocation = c->object &&
                      (c->sysno == SYS_CALL || c->sysno == SYS_SEND || c->sysno == SYS_NBSEND);

    if (st == E_FAILED_LOOKUP && msginfo_length(m->info) == 1 && c->cap < FUZZ_SLOTS &&
        c->sysno != SYS_REPLY && c->sysno != SYS_YIELD) {
        k[c->cap] = K_EMPTY;                     /* the invoked slot itself did not resolve */
        return;
    }
    if (c->sysno == SYS_NBRECV || c->sysno == SYS_RECV || c->sysno == SYS_REPLY_RECV ||
        c->sysno == SYS_CALL) {
        if ((st == E_OK || st == E_WOULD_BLOCK) && c->cap < FUZZ_SLOTS && k[c->cap] == K_UNKNOWN &&
            !invocation)
            k[c->cap] = K_EP;
        if (st == E_OK && msginfo_extra_caps(m->info) && f->buf->receive_depth == WORD_BITS &&
            f->buf->receive_cnode < FUZZ_SLOTS && k[f->buf->receive_cnode] == K_CSPACE &&
            f->buf->receive_index < FUZZ_SLOTS &&
            !invocation) {
            k[f->buf->receive_index] = K_UNKNOWN;
            f->stats->caps_received++;
        }
    }
    if (!invocation || st == E_FAILED_LOOKUP || st == E_ILLEGAL_OPERATION ||
        st == E_INVALID_CAPABILITY)
        return;
    /* The label's family fits the object. */
    if (c->cap < FUZZ_SLOTS && k[c->cap] == K_UNKNOWN) {
        if (c->label == UNTYPED_RETYPE)
            k[c->cap] = K_UNTYPED;
        else if (c->label >= TCB_READ_REGISTERS && c->label <= TCB_SET_NAME)
            k[c->cap] = K_TCB;
        else if (c->label >= CNODE_REVOKE && c->label <= CNODE_SAVE_CALLER)
            k[c->cap] = K_CNODE;
        else if (c->label == FRAME_MAP || c->label == FRAME_UNMAP || c->label == FRAME_GET_ADDRESS)
            k[c->cap] = K_FRAME;
        else if (c->label == PAGE_TABLE_MAP || c->label == PAGE_TABLE_UNMAP)
            k[c->cap] = K_PT;
        else if (c->label >= IRQ_HANDLER_ACK && c->label <= IRQ_HANDLER_CLEAR)
            k[c->cap] = K_IRQ;
    }
    if (st == E_NOT_ENOUGH_MEMORY && c->label == UNTYPED_RETYPE && c->cap < FUZZ_SLOTS)
        f->full_untyped = c->cap;
    if (st != E_OK || !c->tracked)
        return;
    const word_t *a = c->args;
    switch (c->label) {
    case UNTYPED_RETYPE:
        if (c->nargs >= 6)
            for (word_t i = 0; i < a[5] && a[4] + i < FUZZ_SLOTS; i++)
                k[a[4] + i] = (uint8_t)type_kind(a[0]);
        break;
    case CNODE_COPY:
    case CNODE_MINT:
    case CNODE_MOVE:
    case CNODE_MUTATE:
        if (a[0] < FUZZ_SLOTS && a[2] < FUZZ_SLOTS) {
            uint8_t moved = k[a[2]];
            if (c->label == CNODE_MOVE || c->label == CNODE_MUTATE)
                k[a[2]] = K_EMPTY;
            /* A new guard makes its own CNode's cap resolve slots differently. */
            word_t data = c->args[c->label == CNODE_MINT ? 5 : 4];
            if (moved == K_CSPACE && (c->label == CNODE_MINT || c->label == CNODE_MUTATE) &&
                data != WORD_BITS - FUZZ_BITS)
                moved = K_CNODE;
            k[a[0]] = moved;
        }
        break;
    case CNODE_ROTATE:
        if (c->nargs >= 7 && a[0] < FUZZ_SLOTS && a[2] < FUZZ_SLOTS && a[5] < FUZZ_SLOTS) {
            uint8_t pivot = k[a[2]], src = k[a[5]];
            k[a[5]] = K_EMPTY;
            k[a[0]] = pivot;
            k[a[2]] = src;
        }
        break;
    case CNODE_DELETE:
        if (a[0] < FUZZ_SLOTS)
            k[a[0]] = K_EMPTY;
        break;
    case CNODE_REVOKE:
        /* Its descendants are gone, wherever they were: slots of the same kind (every object,
         * for an untyped) are no longer known. */
        if (a[0] < FUZZ_SLOTS)
            for (word_t s = FS_FIRST_FREE; s < FUZZ_SLOTS; s++)
                if (s != a[0] && k[s] != K_EMPTY && (k[a[0]] == K_UNTYPED || k[s] == k[a[0]]))
                    k[s] = K_UNKNOWN;
        break;
    case CNODE_SAVE_CALLER:
        if (a[0] < FUZZ_SLOTS && k[a[0]] == K_EMPTY)
            k[a[0]] = K_REPLY;
        break;
    default:
        break;
    }
}

static void pool_kinds(uint8_t *k)
{
    memset(k, K_UNKNOWN, FUZZ_SLOTS);
    k[FS_NULL] = K_EMPTY;
    k[FS_CNODE] = K_CSPACE;
    k[FS_CNODE_SPARE] = K_CNODE;
    k[FS_VSPACE] = k[FS_VSPACE_SPARE] = K_VSPACE;
    k[FS_SELF] = k[FS_TCB_SPARE] = K_TCB;
    k[FS_FAULT] = K_EP;
    k[FS_IRQ] = K_IRQ;
    k[FS_EP0] = k[FS_EP1] = k[FS_EP_BADGED] = k[FS_EP_SEND] = k[FS_EP_PRIV] = K_EP;
    k[FS_NTFN0] = k[FS_NTFN_BADGED] = k[FS_NTFN1] = K_NTFN;
    for (unsigned i = FS_PEER0; i < FS_PEER_END; i++)
        k[i] = K_TCB;
    for (unsigned i = FS_FRAME0; i <= FS_FRAME3; i++)
        k[i] = K_FRAME;
    k[FS_PT0] = k[FS_PT1] = K_PT;
    k[FS_UNTYPED] = K_UNTYPED;
}

/* Stop for good: the root task restarts a fuzzer that stopped (and rebuilds its pool if asked). */
static _Noreturn void fuzz_stop(void)
{
    for (;;) {
        struct msg m = { 0 };
        sys_raw(SYS_CALL, FS_SELF, &(struct msg){ .info = msginfo_new(TCB_SUSPEND, 0, 0, 0) });
        m.info = msginfo_new(FUZZ_MAGIC_LABEL, 0, 0, 0);
        sys_raw(SYS_CALL, FS_FAULT, &m);
        /* Both caps gone: an unknown system call faults, and without a handler the kernel
         * suspends the thread. */
        sys_raw(SYS_COUNT + 1, 0, &m);
    }
}

static void fuzz_thread(void *argp)
{
    struct fstate f;
    f.cfg = argp;
    f.stats = (struct fuzz_stats *)FUZZ_STATS_VADDR(f.cfg->index);
    f.buf = ipcbuf();
    f.s = f.cfg->seed ? f.cfg->seed : 1;
    f.vwant = 0;
    f.full_untyped = 0;
    f.kind = f.stats->kind;
    if (f.stats->fresh) {
        /* Just rebuilt: the pool as built, the churn area empty. */
        pool_kinds(f.kind);
        for (unsigned s = FS_FIRST_FREE; s < FUZZ_SLOTS; s++)
            f.kind[s] = K_EMPTY;
        f.stats->fresh = 0;
    }
    if (f.cfg->ncores == 1)
        for (unsigned i = FS_PEER0; i < FS_PEER_END; i++)
            f.kind[i] = K_EMPTY;

    struct call c;
    while (f.stats->calls < f.cfg->quota) {
        build(&f, &c);
        struct msg m = { .info = msginfo_new(c.label, c.unwrapped, c.ncaps, c.nargs) };
        for (unsigned i = 0; i < c.nargs; i++)
            msg_set(&m, i, c.args[i]);
        for (unsigned i = 0; i < c.ncaps; i++)
            f.buf->caps[i] = c.caps[i];
        f.stats->last[0] = c.sysno;
        f.stats->last[1] = c.cap;
        f.stats->last[2] = (word_t)c.kind;
        f.stats->last[3] = c.label;
        word_t st = sys_raw(c.sysno, c.cap, &m);
        struct fuzz_stats *s = f.stats;
        s->status[st < E_COUNT ? st : E_COUNT]++;
        s->kind_calls[c.kind]++;
        s->kind_status[c.kind][st < E_COUNT ? st : E_COUNT]++;
        if (st == E_FAILED_LOOKUP)
            s->lookup_fail[c.kind][m.mr[0] % 5][msginfo_length(m.info) < 2 ? 7 : m.mr[1] % 7]++;
        if (st == E_OK) {
            s->kind_ok[c.kind]++;
            if (c.sysno <= SYS_REPLY_RECV && (c.kind == K_EP || c.kind == K_NTFN || c.kind == K_REPLY))
                s->ipc_ok++;
        }
        s->digest = (s->digest ^ (st * 131 + msginfo_length(m.info))) * 0x01000193u;
        s->calls++;
        track(&f, &c, st, &m);
        if (f.cfg->check && sys_debug_check() != E_OK && !s->culprit_len) {
            word_t *w = (word_t *)s->culprit;
            w[0] = c.sysno; w[1] = c.cap; w[2] = (word_t)c.kind; w[3] = c.label; w[4] = st;
            for (unsigned i = 0; i < 3; i++)
                w[5 + i] = i < c.ncaps ? c.caps[i] : ~(word_t)0;
            for (unsigned i = 0; i < c.nargs && i < 16; i++)
                w[8 + i] = c.args[i];
            s->culprit_len = 8 + (c.nargs < 16 ? c.nargs : 16);
            fuzz_stop();
        }
        /* Its pool runs dry when it deleted or moved most of what it was given: ask for a new one. */
        if (s->calls % FUZZ_EPOCH == 0 || (s->calls % 64 == 0 && own_cnode(&f) == FS_CNODE &&
                                             f.kind[FS_CNODE] != K_CSPACE)) {
            s->want_rebuild = 1;
            fuzz_stop();
        }
    }
    fuzz_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* The root task's side. */

struct fuzzer {
    struct thread t;            /* its TCB, VSpace, addresses; t.self = FS_SELF */
    cptr_t cnode;               /* its CNode, with the guard that makes a word resolve in one level */
    cptr_t ipc_frame;
    cptr_t ut_pool;             /* the untyped its pool objects come from */
    cptr_t ut_own;              /* the untyped a copy of which it retypes from */
    cptr_t irq;                 /* its IRQ handler, or 0 */
    struct fuzz_stats *stats;   /* as the root task sees it */
    struct thread ticker;
    volatile word_t stuck_at;   /* written by the ticker: calls + 1 when it saw the fuzzer stopped */
    word_t last_calls, rebuilt_at;
    uint64_t last_progress;     /* cycle count when its calls last moved */
    word_t restarts, rebuilds;
    bool done;
};

static struct fuzzer fz[MAX_FUZZERS];
static word_t nfuzz;
static word_t ticker_patience;
static uint64_t timer_patience; /* cycles without a call before the timer restarts a fuzzer */
static cptr_t wake_ticker_cap;  /* the wake notification, badged WAKE_TICKER, for the tickers */

static struct {
    cptr_t ep[3], ntfn[2];
    cptr_t fault_ep;
} shared;

/* Runs only while everything else on its core is blocked (its priority is the lowest in use). */
static void ticker(void *argp)
{
    struct fuzzer *f = argp;
    word_t last = f->stats->calls, n = 0;
    for (;;) {
        sys_yield();
        word_t c = f->stats->calls;
        if (c != last) {
            last = c;
            n = 0;
        } else if (++n >= ticker_patience) {
            f->stuck_at = c + 1;
            sys_signal(wake_ticker_cap);
            n = 0;
            if (f->done)
                return;
        }
    }
}

static word_t in_fuzz_cnode(struct fuzzer *f, word_t slot, word_t type, word_t bits)
{
    return untyped_retype(f->ut_pool, type, bits, f->cnode, 0, 0, slot, 1);
}

static word_t copy_in(struct fuzzer *f, word_t slot, cptr_t src, word_t rights)
{
    return cnode_copy(f->cnode, slot, WORD_BITS, ROOT_SLOT_CNODE, src, ROOT_DEPTH, rights);
}

static word_t mint_in(struct fuzzer *f, word_t slot, cptr_t src, word_t rights, word_t badge)
{
    return cnode_mint(f->cnode, slot, WORD_BITS, ROOT_SLOT_CNODE, src, ROOT_DEPTH, rights, badge);
}

/* Empty a slot of a fuzzer's CNode; a revoke first for what a plain delete refuses. */
static void clear_slot(struct fuzzer *f, word_t slot)
{
    if (cnode_delete(f->cnode, slot, WORD_BITS) != E_OK) {
        cnode_revoke(f->cnode, slot, WORD_BITS);
        cnode_delete(f->cnode, slot, WORD_BITS);
    }
}

/* Revoke what the fuzzer made, empty its CNode and put a new pool in.  Errors are left as they
 * are: the fuzzer copes with a missing capability. */
static void fuzzer_rebuild(struct fuzzer *f, word_t index)
{
    cnode_revoke(ROOT_SLOT_CNODE, f->ut_pool, ROOT_DEPTH);
    cnode_revoke(ROOT_SLOT_CNODE, f->ut_own, ROOT_DEPTH);
    /* The pool's slots, and the churn slots the fuzzer believes full (a stale belief leaves a cap
     * behind, which it finds again later). */
    for (word_t s = 1; s < FUZZ_SLOTS; s++)
        if (s < FS_FIRST_FREE || f->stats->kind[s] != K_EMPTY || f->rebuilds == 0)
            clear_slot(f, s);
    copy_in(f, FS_CNODE, f->cnode, RIGHTS_ALL);
    copy_in(f, FS_VSPACE, f->t.vspace, RIGHTS_ALL);
    copy_in(f, FS_SELF, f->t.tcb, RIGHTS_ALL);
    if (f->irq)
        copy_in(f, FS_IRQ, f->irq, RIGHTS_ALL);
    copy_in(f, FS_EP0, shared.ep[0], RIGHTS_ALL);
    copy_in(f, FS_EP1, shared.ep[1], RIGHTS_ALL);
    mint_in(f, FS_EP_BADGED, shared.ep[0], RIGHTS_ALL, 0x100 + index);
    mint_in(f, FS_EP_SEND, shared.ep[2], RIGHT_WRITE | RIGHT_GRANT, 0x200 + index);
    copy_in(f, FS_NTFN0, shared.ntfn[0], RIGHTS_ALL);
    mint_in(f, FS_NTFN_BADGED, shared.ntfn[0], RIGHTS_ALL, (word_t)1 << (index % (WORD_BITS - 1)));
    copy_in(f, FS_NTFN1, shared.ntfn[1], RIGHTS_ALL);
    for (word_t p = 0; p < MAX_PEERS && p + 1 < nfuzz; p++)
        copy_in(f, FS_PEER0 + p, fz[(index + 1 + p) % nfuzz].t.tcb, RIGHTS_ALL);
    in_fuzz_cnode(f, FS_EP_PRIV, OBJ_ENDPOINT, 0);
    in_fuzz_cnode(f, FS_TCB_SPARE, OBJ_TCB, 0);
    in_fuzz_cnode(f, FS_VSPACE_SPARE, OBJ_VSPACE, 0);
    in_fuzz_cnode(f, FS_CNODE_SPARE, OBJ_CNODE, 4);
    for (word_t s = FS_FRAME0; s <= FS_FRAME3; s++)
        in_fuzz_cnode(f, s, OBJ_FRAME, 0);
    in_fuzz_cnode(f, FS_PT0, OBJ_PAGE_TABLE, 0);
    in_fuzz_cnode(f, FS_PT1, OBJ_PAGE_TABLE, 0);
    copy_in(f, FS_UNTYPED, f->ut_own, RIGHTS_ALL);
    f->stats->fresh = 1;
    f->stats->want_rebuild = 0;
    f->rebuilt_at = f->stats->calls;
    f->rebuilds++;
}

/* Put the fuzzer back as it was made (its space, CNode, fault handler, priority, core) and start
 * it again with a new seed.  Restarts happen in the fuzzer's order of events only, so on one core
 * the seeds follow each other the same way in every run. */
static word_t verbose;

static void fuzzer_restart(struct fuzzer *f, word_t index)
{
    tcb_suspend(f->t.tcb);
    if (verbose)
        printf("fuzz: restart %lu at %lu: sysno %lu cap %lx %s label %lu\n", (unsigned long)index,
               (unsigned long)f->stats->calls, (unsigned long)f->stats->last[0],
               (unsigned long)f->stats->last[1], kind_names[f->stats->last[2] % K_COUNT],
               (unsigned long)f->stats->last[3]);
    /* A Call that never came back went to an endpoint, whatever the fuzzer thought: it would
     * otherwise aim there again with the same belief after the restart. */
    word_t last_cap = f->stats->last[1];
    if ((f->stats->last[0] == SYS_CALL || f->stats->last[0] == SYS_SEND) && last_cap < FUZZ_SLOTS &&
        f->stats->last[2] != K_EP && f->stats->last[2] != K_NTFN)
        f->stats->kind[last_cap] = K_EP;
    if (f->stats->calls >= cfgs[index].quota) {
        f->done = true;
        return;
    }
    if (f->stats->want_rebuild || f->stats->calls - f->rebuilt_at >= FUZZ_EPOCH)
        fuzzer_rebuild(f, index);
    clear_slot(f, FS_FAULT);
    mint_in(f, FS_FAULT, shared.fault_ep, RIGHT_WRITE | RIGHT_GRANT_REPLY, index + 1);
    tcb_unbind_notification(f->t.tcb);
    tcb_configure(f->t.tcb, FS_FAULT, f->cnode, 0, f->t.vspace, f->t.ipc_vaddr, f->ipc_frame);
    tcb_set_priority(f->t.tcb, FUZZ_PRIO);
    tcb_set_affinity(f->t.tcb, index);
    f->restarts++;
    cfgs[index].seed = cfgs[index].seed * 6364136223846793005ULL + 1442695040888963407ULL;
    f->last_calls = f->stats->calls;
    f->last_progress = arch_cycles();
    thread_start(&f->t, fuzz_thread, &cfgs[index]);
}

/* Map `n` fresh frames at vaddr of the fuzzer's space; the first one's cap in *first. */
static word_t map_fresh(cptr_t vspace, word_t vaddr, word_t n, cptr_t *first)
{
    for (word_t i = 0; i < n; i++) {
        cptr_t fr;
        word_t st = obj_alloc(OBJ_FRAME, 0, &fr);
        if (st == E_OK)
            st = map_frame(fr, vspace, vaddr + i * PAGE_SIZE, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
        if (st != E_OK)
            return st;
        if (i == 0 && first)
            *first = fr;
    }
    return E_OK;
}

/* The fuzzer's thread, space and memory; the pool comes with the first rebuild. */
static word_t fuzzer_make(struct fuzzer *f, word_t index, word_t own_bits)
{
    word_t st;
    cptr_t raw;
    memset(&f->t, 0, sizeof(f->t));
    if ((st = obj_alloc(OBJ_CNODE, FUZZ_BITS, &raw)) != E_OK ||
        (st = obj_alloc(OBJ_TCB, 0, &f->t.tcb)) != E_OK ||
        (st = obj_alloc(OBJ_VSPACE, 0, &f->t.vspace)) != E_OK ||
        (st = obj_alloc(OBJ_UNTYPED, 19, &f->ut_pool)) != E_OK ||
        (st = obj_alloc(OBJ_UNTYPED, own_bits, &f->ut_own)) != E_OK)
        return st;
    f->cnode = slot_alloc();
    if ((st = cnode_mint(ROOT_SLOT_CNODE, f->cnode, ROOT_DEPTH, ROOT_SLOT_CNODE, raw, ROOT_DEPTH,
                         RIGHTS_ALL, cspace_guard_data(FUZZ_BITS))) != E_OK)
        return st;

    /* The image, read-only: copies of the root task's frame caps at the same addresses. */
    word_t nframes = bootinfo->user_image_frames.end - bootinfo->user_image_frames.start;
    for (word_t i = 0; i < nframes; i++) {
        cptr_t copy = slot_alloc();
        if (!copy)
            return E_NOT_ENOUGH_MEMORY;
        st = cnode_copy(ROOT_SLOT_CNODE, copy, ROOT_DEPTH, ROOT_SLOT_CNODE,
                        bootinfo->user_image_frames.start + i, ROOT_DEPTH, RIGHTS_ALL);
        if (st == E_OK)
            st = map_frame(copy, f->t.vspace, bootinfo->user_image_vaddr + i * PAGE_SIZE, RIGHT_READ,
                           VM_DEFAULT);
        if (st != E_OK)
            return st;
    }
    if ((st = map_fresh(f->t.vspace, FUZZ_IPC_VADDR(index), 1, &f->ipc_frame)) != E_OK ||
        (st = map_fresh(f->t.vspace, FUZZ_STACK_VADDR(index), STACK_SIZE / PAGE_SIZE, NULL)) != E_OK)
        return st;
    f->t.ipc_vaddr = FUZZ_IPC_VADDR(index);
    f->t.stack_top = FUZZ_STACK_VADDR(index) + STACK_SIZE;
    f->t.self = FS_SELF;

    cptr_t sf, sc = slot_alloc();
    f->stats = frame_new_mapped(&sf);
    if (!f->stats || !sc)
        return E_NOT_ENOUGH_MEMORY;
    if ((st = cnode_copy(ROOT_SLOT_CNODE, sc, ROOT_DEPTH, ROOT_SLOT_CNODE, sf, ROOT_DEPTH,
                         RIGHTS_ALL)) != E_OK ||
        (st = map_frame(sc, f->t.vspace, FUZZ_STATS_VADDR(index), RIGHT_READ | RIGHT_WRITE,
                        VM_DEFAULT)) != E_OK)
        return st;

    /* An IRQ handler for an IRQ nothing raises (not the device timer), if the port has one. */
    static word_t next_irq = 10;
    f->irq = slot_alloc();
    for (; next_irq < 256; next_irq++) {
        if (next_irq == bootinfo->timer_irq)
            continue;
        if (irq_control_get(ROOT_SLOT_IRQ_CONTROL, next_irq, ROOT_SLOT_CNODE, f->irq,
                            ROOT_DEPTH) == E_OK)
            break;
    }
    if (next_irq++ >= 256) {
        slot_free(f->irq);
        f->irq = 0;
    }

    struct thread_opts o = { .prio = TICKER_PRIO, .core = index };
    return thread_create(&f->ticker, &o);
}

/* The final record: totals, statuses, the calls and successes per kind of target. */
static char detail[1536];

static void summarise(word_t calls, word_t failed_checks)
{
    word_t restarts = 0, rebuilds = 0, ipc = 0, recvd = 0, digest = 0;
    word_t status[E_COUNT + 1] = { 0 }, kc[K_COUNT] = { 0 }, ko[K_COUNT] = { 0 };
    for (word_t i = 0; i < nfuzz; i++) {
        struct fuzz_stats *s = fz[i].stats;
        restarts += fz[i].restarts;
        rebuilds += fz[i].rebuilds;
        ipc += s->ipc_ok;
        recvd += s->caps_received;
        digest = digest * 31 + s->digest;
        for (unsigned k = 0; k <= E_COUNT; k++)
            status[k] += s->status[k];
        for (unsigned k = 0; k < K_COUNT; k++) {
            kc[k] += s->kind_calls[k];
            ko[k] += s->kind_ok[k];
        }
    }
    int len = snprintf(detail, sizeof(detail),
                       "%lu calls on %lu cores, %lu restarts, %lu rebuilds, %lu IPC transfers, "
                       "%lu caps received, digest %lx",
                       (unsigned long)calls, (unsigned long)nfuzz, (unsigned long)restarts,
                       (unsigned long)rebuilds, (unsigned long)ipc, (unsigned long)recvd,
                       (unsigned long)digest);
    if (failed_checks)
        len += snprintf(detail + len, sizeof(detail) - len,
                        "; INVARIANT CHECKER FAILED %lu times mid-run", (unsigned long)failed_checks);
    len += snprintf(detail + len, sizeof(detail) - len, "; statuses:");
    for (unsigned k = 0; k < E_COUNT && len < (int)sizeof(detail); k++)
        if (status[k])
            len += snprintf(detail + len, sizeof(detail) - len, " %s=%lu", status_name(k),
                            (unsigned long)status[k]);
    len += snprintf(detail + len, sizeof(detail) - len, "; targets (calls/ok):");
    for (unsigned k = 0; k < K_COUNT && len < (int)sizeof(detail); k++)
        len += snprintf(detail + len, sizeof(detail) - len, " %s=%lu/%lu", kind_names[k],
                        (unsigned long)kc[k], (unsigned long)ko[k]);
}

int app_fuzz(void)
{
    word_t calls = arg_word("calls", 1000000);
    verbose = arg_word("verbose", 0);
    uint64_t seed = arg_word("seed", 1);
    nfuzz = bootinfo->ncores < MAX_FUZZERS ? bootinfo->ncores : MAX_FUZZERS;
    /* On one core a stopped fuzzer has no partner that could wake it: restart at once. */
    ticker_patience = nfuzz == 1 ? 2 : 100;
    /* Long: under TCG on a loaded host a virtual CPU may not run for a good while. */
    timer_patience = bootinfo->cycle_hz && !arg_word("icount", 0) ? (uint64_t)bootinfo->cycle_hz * 3
                                                                    : 3000000000ULL;
    tcb_set_priority(ROOT_SLOT_TCB, ROOT_FUZZ_PRIO);
    printf("fuzz: %lu calls on %lu cores, seed %llu\n", (unsigned long)calls, (unsigned long)nfuzz,
           (unsigned long long)seed);

    struct arena a;
    word_t st = arena_begin(&a, nfuzz <= 4 ? 26 : 27);
    cptr_t wake = 0, timer = 0;
    for (unsigned i = 0; i < 3 && st == E_OK; i++)
        st = obj_alloc(OBJ_ENDPOINT, 0, &shared.ep[i]);
    for (unsigned i = 0; i < 2 && st == E_OK; i++)
        st = obj_alloc(OBJ_NOTIFICATION, 0, &shared.ntfn[i]);
    if (st == E_OK)
        st = obj_alloc(OBJ_ENDPOINT, 0, &shared.fault_ep);
    if (st == E_OK)
        st = obj_alloc(OBJ_NOTIFICATION, 0, &wake);
    if (st == E_OK) {
        wake_ticker_cap = slot_alloc();
        st = cnode_mint(ROOT_SLOT_CNODE, wake_ticker_cap, ROOT_DEPTH, ROOT_SLOT_CNODE, wake,
                        ROOT_DEPTH, RIGHT_WRITE, WAKE_TICKER);
    }
    for (word_t i = 0; i < nfuzz && st == E_OK; i++) {
        cfgs[i].seed = seed * 0x2545F4914F6CDD1DULL + i + 1;
        cfgs[i].quota = calls / nfuzz + (i < calls % nfuzz);
        cfgs[i].index = i;
        cfgs[i].ncores = bootinfo->ncores;
        cfgs[i].check = arg_word("check", 0);
        st = fuzzer_make(&fz[i], i, nfuzz <= 4 ? 22 : 20);
    }
    if (st != E_OK) {
        printf("@@ {\"test\": \"fuzz\", \"status\": \"fail\", \"detail\": \"setup: %s\"}\n",
               status_name(st));
        return 1;
    }
    /* The device timer wakes the root task now and then: the last resort against a fuzzer that
     * a thread of its own keeps off its core (so its ticker never runs). */
    if (bootinfo->timer_irq != ~(word_t)0) {
        timer = slot_alloc();
        cptr_t tb = slot_alloc();
        if (irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, timer,
                            ROOT_DEPTH) != E_OK ||
            cnode_mint(ROOT_SLOT_CNODE, tb, ROOT_DEPTH, ROOT_SLOT_CNODE, wake, ROOT_DEPTH,
                       RIGHT_WRITE, WAKE_TIMER) != E_OK ||
            irq_handler_set_notification(timer, tb) != E_OK || irq_handler_ack(timer) != E_OK)
            timer = 0;
    }
    word_t failed_at_start;
    sys_debug_check_counted(&failed_at_start);
    for (word_t i = 0; i < nfuzz; i++) {
        fuzzer_rebuild(&fz[i], i);
        fz[i].rebuilds = 0;
    }
    for (word_t i = 0; i < nfuzz; i++) {
        thread_start(&fz[i].ticker, ticker, &fz[i]);
        fuzzer_restart(&fz[i], i);
        fz[i].restarts = 0;
    }

    word_t next_report = calls / 10 + 1, finished = 0;
    while (finished < nfuzz) {
        word_t w = 0;
        sys_wait(wake, &w);
        if ((w & WAKE_TIMER) && timer)
            irq_handler_ack(timer);
        /* Fault messages are taken and never answered: the sender stays blocked until a restart
         * (or for good, for a thread a fuzzer made).  Only on a ticker's word, so that on one
         * core this happens at the same points of every run. */
        for (int k = 0; k < 8 && (w & WAKE_TICKER); k++) {
            struct msg m = { 0 };
            if (sys_nbrecv(shared.fault_ep, &m) != E_OK)
                break;
        }
        word_t sum = 0;
        finished = 0;
        for (word_t i = 0; i < nfuzz; i++) {
            struct fuzzer *f = &fz[i];
            word_t c = f->stats->calls;
            sum += c < cfgs[i].quota ? c : cfgs[i].quota;
            if (f->stats->culprit_len) {
                const volatile word_t *cw = f->stats->culprit;
                printf("fuzz: thread %lu: invariant broken after sysno %lu cap %lx (%s) label %lu "
                       "-> %s; caps %lx %lx %lx; args", (unsigned long)i, (unsigned long)cw[0],
                       (unsigned long)cw[1], kind_names[cw[2] % K_COUNT], (unsigned long)cw[3],
                       status_name(cw[4]), (unsigned long)cw[5], (unsigned long)cw[6],
                       (unsigned long)cw[7]);
                for (word_t k = 8; k < f->stats->culprit_len; k++)
                    printf(" %lx", (unsigned long)cw[k]);
                printf("\n");
                sys_debug_halt(1);
            }
            if (f->done) {
                finished++;
                continue;
            }
            bool stuck = f->stuck_at == c + 1;
            f->stuck_at = 0;
            uint64_t now = arch_cycles();
            if (c != f->last_calls && !stuck) {
                f->last_calls = c;
                f->last_progress = now;
                continue;
            }
            if (stuck || ((w & WAKE_TIMER) && now - f->last_progress > timer_patience))
                fuzzer_restart(f, i);
        }
        if (sum >= next_report) {
            printf("fuzz: %lu of %lu calls\n", (unsigned long)sum, (unsigned long)calls);
            next_report += calls / 10 + 1;
        }
    }

    for (word_t i = 0; i < nfuzz; i++) {
        tcb_suspend(fz[i].t.tcb);
        tcb_suspend(fz[i].ticker.tcb);
    }
    if (timer)
        irq_handler_clear(timer);
    /* The kernel's count, not what the fuzzers read back: they rewrite each other's registers. */
    word_t failed_at_end;
    word_t check1 = sys_debug_check_counted(&failed_at_end);
    word_t mid = failed_at_end - failed_at_start - (check1 != E_OK);
    for (unsigned k = 0; verbose && k < K_COUNT; k++) {
        printf("fuzz: %s:", kind_names[k]);
        for (unsigned e = 0; e <= E_COUNT; e++) {
            word_t n = 0;
            for (word_t i = 0; i < nfuzz; i++)
                n += fz[i].stats->kind_status[k][e];
            if (n)
                printf(" %s=%lu", status_name(e), (unsigned long)n);
        }
        printf("\n");
        printf("fuzz:   lookup failures (kind/arg):");
        for (unsigned x = 0; x < 5; x++)
            for (unsigned y = 0; y < 8; y++) {
                word_t n = 0;
                for (word_t i = 0; i < nfuzz; i++)
                    n += fz[i].stats->lookup_fail[k][x][y];
                if (n)
                    printf(" %u/%u=%lu", x, y, (unsigned long)n);
            }
        printf("\n");
    }
    /* Summed up before the teardown: the stats pages go with the arena. */
    summarise(calls, mid);
    arena_end(&a);
    word_t check2 = sys_debug_check();
    bool ok = check1 == E_OK && check2 == E_OK && mid == 0;
    if (ok)
        printf("@@ {\"test\": \"fuzz\", \"status\": \"pass\", \"detail\": \"%s\"}\n", detail);
    else
        printf("@@ {\"test\": \"fuzz\", \"status\": \"fail\", \"detail\": \"invariant checker: %s "
               "at the end, %s after teardown, %lu failures mid-run; %s\"}\n", status_name(check1),
               status_name(check2), (unsigned long)mid, detail);
    return ok ? 0 : 1;
}
