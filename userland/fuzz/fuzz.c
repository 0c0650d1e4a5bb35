/*
 * APP=fuzz: random invocations against the kernel from every core.
 *
 * Each fuzz thread runs in its own address space (the root task's image
 * mapped read-only, its own stack and IPC buffer) with its own CNode of
 * FUZZ_SLOTS slots, which holds a pool of valid capabilities to objects
 * made for it: endpoints, notifications, frames, page tables, a VSpace, an
 * untyped, spare TCBs, its own CNode.  It never holds a capability to
 * anything of the root task, so nothing it does can reach the root task.
 * It makes `calls=N` (default 1000000, split between the threads) random
 * system calls: random syscall numbers (mostly Call, NBSend, NBRecv),
 * random labels, random capability addresses (mostly from its pool), random
 * arguments and random pointers.  Its only memory writes outside its stack
 * go to a stats page shared with the root task.
 *
 * The root task is each thread's fault handler (badge = thread index): a
 * faulted thread is restarted with a new seed, and so is one that made no
 * progress for a while (blocked for good on some endpoint).  At the end,
 * every fuzz object is revoked and SYS_DEBUG_CHECK must pass.
 */
#include <apps.h>
#include <arch_user.h>
#include <thread.h>

#define FUZZ_BITS   6
#define FUZZ_SLOTS  (1 << FUZZ_BITS)
#define FUZZ_STATS_VADDR 0x32000000UL
#define MAX_FUZZERS BOOTINFO_MAX_CORES

/* Slots of a fuzz CNode.  Its cap carries a guard, so a slot is (index, WORD_BITS) as in the root CNode. */
enum {
    FS_NULL = 0,
    FS_CNODE,           /* its own CNode */
    FS_VSPACE,          /* a spare VSpace (not its own) */
    FS_UNTYPED,
    FS_EP0, FS_EP1, FS_EP2,
    FS_NTFN0, FS_NTFN1,
    FS_FRAME0, FS_FRAME1, FS_FRAME2,
    FS_PT0, FS_PT1,
    FS_TCB0, FS_TCB1,
    FS_EP_BADGED,
    FS_FIRST_FREE,
};

struct fuzz_stats {
    volatile word_t calls;          /* calls made by the current incarnation */
    volatile word_t status_hist[E_COUNT + 1];
};

struct fuzz_cfg {
    uint64_t seed;
    word_t calls;
};

static struct fuzz_cfg cfgs[MAX_FUZZERS];

static const word_t interesting[] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 21, 31, 32, 63, 64, 65, 127, 128, 255, 256, 4095, 4096,
    0x400000, 0x10000000, 0x10001000, 0x20000000, 0x7ffffffff000UL, 0x800000000000UL,
    0xffff800000000000UL, 0xffffffff80000000UL, ~0UL, ~0UL >> 1, FUZZ_STATS_VADDR,
};

static word_t rnd_arg(uint64_t *s)
{
    uint64_t r = xorshift64(s);
    switch (r % 8) {
    case 0:
    case 1:
        return interesting[(r >> 8) % ARRAY_SIZE(interesting)];
    case 2:
    case 3:
        return (r >> 8) % FUZZ_SLOTS;                   /* a slot index */
    case 4:
        return ((r >> 8) % 0x40000) << 12;              /* a page-aligned user address */
    case 5:
        return (r >> 8) % 16;
    default:
        return xorshift64(s);                            /* anything */
    }
}

static cptr_t rnd_cap(uint64_t *s)
{
    uint64_t r = xorshift64(s);
    if (r % 16 == 0)
        return xorshift64(s);
    return (r >> 8) % FUZZ_SLOTS;
}

static word_t rnd_sysno(uint64_t *s)
{
    uint64_t r = xorshift64(s) % 100;
    if (r < 60)
        return SYS_CALL;
    if (r < 75)
        return SYS_NBSEND;
    if (r < 88)
        return SYS_NBRECV;
    if (r < 92)
        return SYS_YIELD;
    if (r < 94)
        return SYS_REPLY;
    if (r < 95)
        return SYS_SEND;
    if (r < 96)
        return SYS_RECV;
    if (r < 97)
        return SYS_REPLY_RECV;
    if (r < 98)
        return SYS_DEBUG_CORE;
    /* Unknown numbers fault; the root task restarts the thread. */
    return SYS_COUNT + 1 + xorshift64(s) % 1000;
}

static void fuzz_thread(void *arg)
{
    const struct fuzz_cfg *cfg = arg;
    struct fuzz_stats *stats = (struct fuzz_stats *)FUZZ_STATS_VADDR;
    uint64_t s = cfg->seed ^ (stats->calls * 0x9e3779b97f4a7c15ULL);
    if (!s)
        s = 1;
    struct ipc_buffer *b = ipcbuf();
    while (stats->calls < cfg->calls) {
        word_t sysno = rnd_sysno(&s);
        uint64_t r = xorshift64(&s);
        word_t label = r % 4 ? 1 + (r >> 8) % (INV_COUNT - 1) : (r >> 8) % 64;
        word_t len = (r >> 16) % 10;
        word_t ncaps = (r >> 24) % 4;
        struct msg m = { .info = msginfo_new(label, 0, ncaps, len) };
        for (word_t i = 0; i < len; i++)
            msg_set(&m, i, rnd_arg(&s));
        for (word_t i = 0; i < ncaps && i < MSG_MAX_EXTRA_CAPS; i++)
            b->caps[i] = rnd_cap(&s);
        if (xorshift64(&s) % 8 == 0) {
            b->receive_cnode = FS_CNODE;
            b->receive_index = rnd_arg(&s) % FUZZ_SLOTS;
            b->receive_depth = WORD_BITS;
        }
        cptr_t cap = rnd_cap(&s);
        /* A Call or Send on an endpoint blocks until the root task restarts the thread: keep
         * those rare (the slots move, so this only lowers the odds). */
        bool ep_slot = (cap >= FS_EP0 && cap <= FS_EP2) || cap == FS_EP_BADGED || cap == FUZZ_SLOTS - 1;
        if (ep_slot && (sysno == SYS_CALL || sysno == SYS_SEND) && xorshift64(&s) % 16)
            sysno = SYS_NBSEND;
        word_t st = sys_raw(sysno, cap, &m);
        stats->status_hist[st < E_COUNT ? st : E_COUNT]++;
        stats->calls++;
    }
    for (;;)
        sys_yield();
}

struct fuzzer {
    struct thread t;
    cptr_t cnode;               /* in the root CNode */
    struct fuzz_stats *stats;   /* as the root task sees it */
    word_t last_calls;
    uint64_t last_progress;
    word_t restarts, faults;
};

static struct fuzzer fz[MAX_FUZZERS];

static word_t put(cptr_t cnode, word_t slot, word_t type, word_t bits)
{
    cptr_t tmp;
    word_t st = obj_alloc(type, bits, &tmp);
    if (st == E_OK)
        st = cnode_move(cnode, slot, WORD_BITS, ROOT_SLOT_CNODE, tmp, ROOT_DEPTH);
    slot_free(tmp);
    return st;
}

static word_t fuzzer_make(struct fuzzer *f, word_t index, cptr_t fault_ep, word_t core)
{
    word_t st;
    cptr_t raw;
    if ((st = obj_alloc(OBJ_CNODE, FUZZ_BITS, &raw)) != E_OK)
        return st;
    /* A cap to the CNode whose guard makes a whole word resolve in one level. */
    f->cnode = slot_alloc();
    if ((st = cnode_mint(ROOT_SLOT_CNODE, f->cnode, ROOT_DEPTH, ROOT_SLOT_CNODE, raw, ROOT_DEPTH,
                         RIGHTS_ALL, cspace_guard_data(FUZZ_BITS))) != E_OK)
        return st;
    /* Its pool, all inside its own CNode. */
    if ((st = cnode_copy(f->cnode, FS_CNODE, WORD_BITS, ROOT_SLOT_CNODE, f->cnode, ROOT_DEPTH,
                         RIGHTS_ALL)) != E_OK)
        return st;
    static const struct { word_t slot, type, bits; } pool[] = {
        { FS_VSPACE, OBJ_VSPACE, 0 }, { FS_UNTYPED, OBJ_UNTYPED, 16 },
        { FS_EP0, OBJ_ENDPOINT, 0 }, { FS_EP1, OBJ_ENDPOINT, 0 }, { FS_EP2, OBJ_ENDPOINT, 0 },
        { FS_NTFN0, OBJ_NOTIFICATION, 0 }, { FS_NTFN1, OBJ_NOTIFICATION, 0 },
        { FS_FRAME0, OBJ_FRAME, 0 }, { FS_FRAME1, OBJ_FRAME, 0 }, { FS_FRAME2, OBJ_FRAME, 0 },
        { FS_PT0, OBJ_PAGE_TABLE, 0 }, { FS_PT1, OBJ_PAGE_TABLE, 0 },
        { FS_TCB0, OBJ_TCB, 0 }, { FS_TCB1, OBJ_TCB, 0 },
    };
    for (unsigned i = 0; i < ARRAY_SIZE(pool); i++)
        if ((st = put(f->cnode, pool[i].slot, pool[i].type, pool[i].bits)) != E_OK)
            return st;
    if ((st = cnode_mint(f->cnode, FS_EP_BADGED, WORD_BITS, f->cnode, FS_EP0, WORD_BITS, RIGHTS_ALL,
                         0x5a)) != E_OK)
        return st;

    /* Its thread: a fresh space with the image read-only; the fault endpoint is in its CNode. */
    cptr_t fep = slot_alloc();
    if ((st = cnode_mint(ROOT_SLOT_CNODE, fep, ROOT_DEPTH, ROOT_SLOT_CNODE, fault_ep, ROOT_DEPTH,
                         RIGHT_WRITE | RIGHT_GRANT_REPLY, index + 1)) != E_OK)
        return st;
    const word_t fault_slot = FUZZ_SLOTS - 1;
    if ((st = cnode_move(f->cnode, fault_slot, WORD_BITS, ROOT_SLOT_CNODE, fep, ROOT_DEPTH)) != E_OK)
        return st;
    struct thread_opts o = {
        .prio = DEFAULT_PRIO, .core = core, .fault_ep = fault_slot, .cspace = f->cnode,
        .image_rights = RIGHT_READ,
    };
    if ((st = thread_create_space(&f->t, &o)) != E_OK)
        return st;
    /* The stats page, shared. */
    cptr_t sf;
    f->stats = frame_new_mapped(&sf);
    if (!f->stats)
        return E_NOT_ENOUGH_MEMORY;
    cptr_t sc = slot_alloc();
    if ((st = cnode_copy(ROOT_SLOT_CNODE, sc, ROOT_DEPTH, ROOT_SLOT_CNODE, sf, ROOT_DEPTH,
                         RIGHTS_ALL)) != E_OK)
        return st;
    return map_frame(sc, f->t.vspace, FUZZ_STATS_VADDR, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
}

static void fuzzer_restart(struct fuzzer *f, struct fuzz_cfg *cfg)
{
    tcb_suspend(f->t.tcb);
    f->restarts++;
    cfg->seed = cfg->seed * 6364136223846793005ULL + 1442695040888963407ULL;
    thread_start(&f->t, fuzz_thread, cfg);
}

int app_fuzz(void)
{
    word_t calls = arg_word("calls", 1000000);
    uint64_t seed = arg_word("seed", 1);
    word_t n = bootinfo->ncores;
    if (n > MAX_FUZZERS)
        n = MAX_FUZZERS;
    tcb_set_priority(ROOT_SLOT_TCB, DEFAULT_PRIO);
    printf("fuzz: %lu calls on %lu cores, seed %llu\n", (unsigned long)calls, (unsigned long)n,
           (unsigned long long)seed);

    struct arena a;
    word_t st = arena_begin(&a, 24);
    cptr_t fault_ep = st == E_OK ? obj_new(OBJ_ENDPOINT, 0) : 0;
    for (word_t i = 0; i < n && fault_ep && st == E_OK; i++) {
        cfgs[i].seed = seed * 0x2545F4914F6CDD1DULL + i + 1;
        cfgs[i].calls = calls / n + (i < calls % n);
        st = fuzzer_make(&fz[i], i, fault_ep, i);
    }
    if (!fault_ep || st != E_OK) {
        printf("@@ {\"test\": \"fuzz\", \"status\": \"fail\", \"detail\": \"setup: %s\"}\n",
               status_name(st));
        return 1;
    }
    /* A thread that made no call for this long is blocked for good (about 5 ms). */
    uint64_t quiet = bootinfo->cycle_hz && !arg_word("icount", 0) ? bootinfo->cycle_hz / 200 : 5000000ULL;
    for (word_t i = 0; i < n; i++) {
        thread_start(&fz[i].t, fuzz_thread, &cfgs[i]);
        fz[i].last_progress = arch_cycles();
    }

    word_t total_faults = 0, next_report = calls / 10 + 1, last_sum = 0;
    uint64_t last_sum_change = arch_cycles();
    for (;;) {
        struct msg m;
        word_t rs = sys_nbrecv(fault_ep, &m);
        if (rs == E_OK && m.badge >= 1 && m.badge <= n) {
            struct fuzzer *f = &fz[m.badge - 1];
            f->faults++;
            total_faults++;
            fuzzer_restart(f, &cfgs[m.badge - 1]);
        }
        word_t sum = 0, finished = 0;
        uint64_t now = arch_cycles();
        for (word_t i = 0; i < n; i++) {
            word_t c = fz[i].stats->calls;
            sum += c < cfgs[i].calls ? c : cfgs[i].calls;
            finished += c >= cfgs[i].calls;
            if (c != fz[i].last_calls) {
                fz[i].last_calls = c;
                fz[i].last_progress = now;
            } else if (c < cfgs[i].calls && now - fz[i].last_progress > quiet) {
                /* Blocked for good (a Recv nobody answers): start over where it was. */
                fuzzer_restart(&fz[i], &cfgs[i]);
                fz[i].last_progress = now;
            }
        }
        if (sum != last_sum) {
            last_sum = sum;
            last_sum_change = now;
        } else if (now - last_sum_change > 1000 * quiet) {
            /* Nothing moves even after restarts: say who is stuck, once per period. */
            for (word_t i = 0; i < n; i++)
                printf("fuzz: stalled: thread %lu at %lu of %lu calls, %lu restarts, %lu faults\n",
                       (unsigned long)i, (unsigned long)fz[i].stats->calls,
                       (unsigned long)cfgs[i].calls, (unsigned long)fz[i].restarts,
                       (unsigned long)fz[i].faults);
            last_sum_change = now;
        }
        if (sum >= next_report) {
            printf("fuzz: %lu of %lu calls, %lu faults\n", (unsigned long)sum, (unsigned long)calls,
                   (unsigned long)total_faults);
            next_report += calls / 10 + 1;
        }
        if (finished == n)
            break;
        sys_yield();
    }

    word_t restarts = 0;
    word_t hist[E_COUNT + 1] = { 0 };
    for (word_t i = 0; i < n; i++) {
        tcb_suspend(fz[i].t.tcb);
        restarts += fz[i].restarts;
        for (unsigned k = 0; k <= E_COUNT; k++)
            hist[k] += fz[i].stats->status_hist[k];
    }
    word_t check1 = sys_debug_check();
    arena_end(&a);
    word_t check2 = sys_debug_check();
    char detail[300];
    int len = snprintf(detail, sizeof(detail), "%lu calls, %lu faults, %lu restarts; statuses:",
                       (unsigned long)calls, (unsigned long)total_faults, (unsigned long)restarts);
    for (unsigned k = 0; k < E_COUNT && len < (int)sizeof(detail); k++)
        if (hist[k])
            len += snprintf(detail + len, sizeof(detail) - len, " %s=%lu", status_name(k),
                            (unsigned long)hist[k]);
    bool ok = check1 == E_OK && check2 == E_OK;
    if (!ok)
        snprintf(detail, sizeof(detail), "invariant checker: %s during, %s after teardown",
                 status_name(check1), status_name(check2));
    printf("@@ {\"test\": \"fuzz\", \"status\": \"%s\", \"detail\": \"%s\"}\n", ok ? "pass" : "fail",
           detail);
    return ok ? 0 : 1;
}
