/*
 * APP=fuzz, the root task's side (fuzz.h): makes each fuzzer and its ticker,
 * builds and rebuilds its pool, restarts fuzzers that stopped, and writes
 * the final record.
 */
#include "fuzz.h"

static struct fuzz_cfg cfgs[MAX_FUZZERS];

static const char *const kind_names[K_COUNT] = {
    "garbage", "unknown", "untyped", "tcb", "endpoint", "notification", "cnode", "own_cnode",
    "frame", "page_table", "vspace", "irq_handler", "reply",
};

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

/* How the run ended. */
enum stop_reason { STOP_CALLS, STOP_SECONDS, STOP_INVARIANT };
static const char *const stop_names[] = { "calls", "seconds", "invariant" };

/* Totals over every fuzzer. */
struct totals {
    word_t calls, restarts, rebuilds, ipc, recvd, digest, check_not_ok;
    word_t status[E_COUNT + 1], kind_calls[K_COUNT], kind_ok[K_COUNT];
};

static void add_up(struct totals *t)
{
    memset(t, 0, sizeof(*t));
    for (word_t i = 0; i < nfuzz; i++) {
        struct fuzz_stats *s = fz[i].stats;
        t->calls += s->calls < cfgs[i].quota ? s->calls : cfgs[i].quota;
        t->restarts += fz[i].restarts;
        t->rebuilds += fz[i].rebuilds;
        t->ipc += s->ipc_ok;
        t->recvd += s->caps_received;
        t->check_not_ok += s->check_not_ok;
        t->digest = t->digest * 31 + s->digest;
        for (unsigned k = 0; k <= E_COUNT; k++)
            t->status[k] += s->status[k];
        for (unsigned k = 0; k < K_COUNT; k++) {
            t->kind_calls[k] += s->kind_calls[k];
            t->kind_ok[k] += s->kind_ok[k];
        }
    }
}

/* Guest seconds (tenths) since `since`: instructions / 1e9 under -icount. */
static word_t tenths_since(uint64_t since)
{
    uint64_t hz = bootinfo->cycle_hz ? bootinfo->cycle_hz : 1000000000ULL;
    return (word_t)((arch_cycles() - since) * 10 / hz);
}

/* One `fuzz_progress` record per fuzzer (docs/console.md). */
static void print_progress(uint64_t started, word_t failures)
{
    word_t t = tenths_since(started);
    for (word_t i = 0; i < nfuzz; i++)
        printf("@@ {\"fuzz_progress\": {\"core\": %lu, \"calls\": %lu, \"quota\": %lu, "
               "\"restarts\": %lu, \"rebuilds\": %lu, \"seconds\": %lu.%lu, \"failures\": %lu}}\n",
               (unsigned long)i, (unsigned long)fz[i].stats->calls, (unsigned long)cfgs[i].quota,
               (unsigned long)fz[i].restarts, (unsigned long)fz[i].rebuilds,
               (unsigned long)(t / 10), (unsigned long)(t % 10), (unsigned long)failures);
}

/* The final `fuzz` record: what a campaign's table shows (tools/fuzz_campaign.py).  Built whole
 * first: one printf is one line on the console, never split by another core's output. */
static char final_line[1024];

static void print_final(const struct totals *t, enum stop_reason why, word_t failures,
                        uint64_t started, bool ok)
{
    word_t secs = tenths_since(started);
    size_t size = sizeof(final_line);
    int len = snprintf(final_line, size,
                       "@@ {\"fuzz\": {\"calls\": %lu, \"cores\": %lu, \"restarts\": %lu, "
                       "\"rebuilds\": %lu, \"digest\": \"%lx\", \"check_every\": %lu, "
                       "\"checks_not_ok\": %lu, \"failures\": %lu, \"seconds\": %lu.%lu, "
                       "\"stopped_by\": \"%s\", \"verdict\": \"%s\", \"statuses\": {",
                       (unsigned long)t->calls, (unsigned long)nfuzz, (unsigned long)t->restarts,
                       (unsigned long)t->rebuilds, (unsigned long)t->digest,
                       (unsigned long)cfgs[0].check_every, (unsigned long)t->check_not_ok,
                       (unsigned long)failures, (unsigned long)(secs / 10),
                       (unsigned long)(secs % 10), stop_names[why], ok ? "pass" : "fail");
    const char *sep = "";
    for (unsigned k = 0; k < E_COUNT && len < (int)size; k++) {
        if (t->status[k]) {
            len += snprintf(final_line + len, size - len, "%s\"%s\": %lu", sep, status_name(k),
                            (unsigned long)t->status[k]);
            sep = ", ";
        }
    }
    printf("%s}}}\n", final_line);
}

/* The `test` record's detail: totals, statuses, the calls and successes per kind of target. */
static char detail[1536];

static void summarise(const struct totals *t, word_t failures)
{
    int len = snprintf(detail, sizeof(detail),
                       "%lu calls on %lu cores, %lu restarts, %lu rebuilds, %lu IPC transfers, "
                       "%lu caps received, digest %lx",
                       (unsigned long)t->calls, (unsigned long)nfuzz, (unsigned long)t->restarts,
                       (unsigned long)t->rebuilds, (unsigned long)t->ipc, (unsigned long)t->recvd,
                       (unsigned long)t->digest);
    if (failures)
        len += snprintf(detail + len, sizeof(detail) - len,
                        "; the kernel's invariant checker failed %lu times (its `invariant` "
                        "records give why)", (unsigned long)failures);
    len += snprintf(detail + len, sizeof(detail) - len, "; statuses:");
    for (unsigned k = 0; k < E_COUNT && len < (int)sizeof(detail); k++)
        if (t->status[k])
            len += snprintf(detail + len, sizeof(detail) - len, " %s=%lu", status_name(k),
                            (unsigned long)t->status[k]);
    len += snprintf(detail + len, sizeof(detail) - len, "; targets (calls/ok):");
    for (unsigned k = 0; k < K_COUNT && len < (int)sizeof(detail); k++)
        len += snprintf(detail + len, sizeof(detail) - len, " %s=%lu/%lu", kind_names[k],
                        (unsigned long)t->kind_calls[k], (unsigned long)t->kind_ok[k]);
}

static void print_statuses_per_kind(void)
{
    for (unsigned k = 0; k < K_COUNT; k++) {
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
}

/* The kernel's count of failed checks: the only verdict (kernel/invariants.h). */
static word_t kernel_failures(void)
{
    word_t n = 0;
    sys_debug_invariants(INVARIANTS_FAILURES, &n);
    return n;
}

int app_fuzz(void)
{
    word_t seconds = arg_word("seconds", 0);
    word_t calls = arg_word("calls", seconds ? ~(word_t)0 : 1000000);
    word_t progress_every = arg_word("progress", 5);
    word_t inject_at = arg_word("inject", 0);
    verbose = arg_word("verbose", 0);
    uint64_t seed = arg_word("seed", 1);
    nfuzz = bootinfo->ncores < MAX_FUZZERS ? bootinfo->ncores : MAX_FUZZERS;
    /* On one core a stopped fuzzer has no partner that could wake it: restart at once. */
    ticker_patience = nfuzz == 1 ? 2 : 100;
    /* Long: under TCG on a loaded host a virtual CPU may not run for a good while. */
    uint64_t hz = bootinfo->cycle_hz ? bootinfo->cycle_hz : 1000000000ULL;
    timer_patience = bootinfo->cycle_hz && !arg_word("icount", 0) ? hz * 3 : 3000000000ULL;
    tcb_set_priority(ROOT_SLOT_TCB, ROOT_FUZZ_PRIO);
    printf("fuzz: %lu calls, %lu seconds (0: no limit) on %lu cores, seed %llu\n",
           (unsigned long)calls, (unsigned long)seconds, (unsigned long)nfuzz,
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
        cfgs[i].check_every = arg_word("check", 0);
        st = fuzzer_make(&fz[i], i, nfuzz <= 4 ? 22 : 20);
    }
    if (st != E_OK) {
        printf("@@ {\"test\": \"fuzz\", \"status\": \"fail\", \"detail\": \"setup: %s\"}\n",
               status_name(st));
        return 1;
    }
    /* The device timer wakes the root task now and then: the last resort against a fuzzer that
     * a thread of its own keeps off its core (so its ticker never runs), and the clock of the
     * time budget and the progress records. */
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
    word_t failures_at_start = kernel_failures();
    for (word_t i = 0; i < nfuzz; i++) {
        fuzzer_rebuild(&fz[i], i);
        fz[i].rebuilds = 0;
    }
    uint64_t started = arch_cycles();
    uint64_t deadline = started + (uint64_t)seconds * hz;
    uint64_t next_progress = started + (uint64_t)progress_every * hz;
    for (word_t i = 0; i < nfuzz; i++) {
        thread_start(&fz[i].ticker, ticker, &fz[i]);
        fuzzer_restart(&fz[i], i);
        fz[i].restarts = 0;
    }

    enum stop_reason why = STOP_CALLS;
    bool planted = false;
    word_t finished = 0, failures = 0;
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
        failures = kernel_failures() - failures_at_start;
        if (failures) {
            why = STOP_INVARIANT;
            break;
        }
        uint64_t now = arch_cycles();
        if (seconds && now >= deadline) {
            why = STOP_SECONDS;
            break;
        }
        if (progress_every && now >= next_progress) {
            print_progress(started, failures);
            next_progress = now + (uint64_t)progress_every * hz;
        }
        word_t sum = 0;
        finished = 0;
        for (word_t i = 0; i < nfuzz; i++) {
            struct fuzzer *f = &fz[i];
            word_t c = f->stats->calls;
            sum += c;
            if (f->done) {
                finished++;
                continue;
            }
            bool stuck = f->stuck_at == c + 1;
            f->stuck_at = 0;
            if (c != f->last_calls && !stuck) {
                f->last_calls = c;
                f->last_progress = now;
                continue;
            }
            if (stuck || ((w & WAKE_TIMER) && now - f->last_progress > timer_patience))
                fuzzer_restart(f, i);
        }
        /* A debug run that proves a broken invariant fails it (tests/test_fuzz.py). */
        if (inject_at && !planted && sum >= inject_at) {
            planted = true;
            printf("fuzz: planting a broken invariant after %lu calls: %s\n", (unsigned long)sum,
                   status_name(sys_debug_invariants(INVARIANTS_BREAK, NULL)));
        }
    }

    for (word_t i = 0; i < nfuzz; i++) {
        tcb_suspend(fz[i].t.tcb);
        tcb_suspend(fz[i].ticker.tcb);
    }
    if (timer)
        irq_handler_clear(timer);
    word_t check1 = sys_debug_check();
    if (planted)
        sys_debug_invariants(INVARIANTS_REPAIR, NULL);
    if (verbose)
        print_statuses_per_kind();
    /* Added up before the teardown: the stats pages go with the arena. */
    struct totals t;
    add_up(&t);
    print_progress(started, kernel_failures() - failures_at_start);
    arena_end(&a);
    word_t check2 = sys_debug_check();
    failures = kernel_failures() - failures_at_start;
    summarise(&t, failures);
    bool ok = failures == 0;
    print_final(&t, why, failures, started, ok);
    if (ok)
        printf("@@ {\"test\": \"fuzz\", \"status\": \"pass\", \"detail\": \"%s\"}\n", detail);
    else
        printf("@@ {\"test\": \"fuzz\", \"status\": \"fail\", \"detail\": \"stopped by %s; invariant "
               "checker: %s at the end, %s after teardown; %s\"}\n", stop_names[why],
               status_name(check1), status_name(check2), detail);
    return ok ? 0 : 1;
}
