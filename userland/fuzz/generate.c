/*
 * The fuzzer's call generator (fuzz.h): picks a slot by the kind it
 * believes the slot holds, a label that fits, and arguments mixing valid,
 * boundary and garbage values; mutates messages now and then; and learns
 * from each result what the slots hold.  Runs in the fuzzer's space.
 */
#include "fuzz.h"

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
cptr_t fuzz_own_cnode(struct fstate *f)
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
    cptr_t own = fuzz_own_cnode(f);
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
    cptr_t own = fuzz_own_cnode(f);
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
        TCB_SET_TLS_BASE,
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
    case TCB_SET_TLS_BASE:
        arg(c, chance(f, 70) ? rnd_vaddr(f, 8) : rnd_word(f));
        break;
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
        xcap(c, fuzz_own_cnode(f));
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
        b->receive_cnode = chance(f, 80) ? fuzz_own_cnode(f) : 0;
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
void fuzz_build(struct fstate *f, struct call *c)
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
        c->cap = fuzz_own_cnode(f);
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
void fuzz_track(struct fstate *f, const struct call *c, word_t st, const struct msg *m)
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
        else if (c->label >= TCB_READ_REGISTERS && c->label <= TCB_SET_TLS_BASE)
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

void fuzz_pool_kinds(uint8_t *k)
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
