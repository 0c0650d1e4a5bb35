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
 * fuzz object is revoked and SYS_DEBUG_CHECK runs again.  The run fails
 * exactly when the kernel's count of failed checks moved (a status a
 * fuzzer reads back may have been rewritten by a peer holding its TCB).
 * The `fuzz` and `test` records say how many calls hit each kind of object
 * and the status counts.
 *
 * Files: generate.c builds calls and learns from their results, fuzzer.c
 * is the fuzzer thread, root.c the root task's side.  This header holds
 * what they share: the slot layout, the stats page and the configuration.
 */
#ifndef FUZZ_H
#define FUZZ_H

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
    volatile word_t last[4];        /* the call in progress: sysno, cap, kind, label */
    volatile word_t check_not_ok;   /* SYS_DEBUG_CHECK statuses read back other than E_OK */
    uint8_t kind[FUZZ_SLOTS];       /* the fuzzer's beliefs, kept over restarts */
};

/* Read-only for the fuzzers (the image is mapped read-only into their spaces). */
struct fuzz_cfg {
    uint64_t seed;              /* written by the root task before each (re)start */
    word_t quota;
    word_t index;
    word_t ncores;
    word_t check_every;         /* check=N: SYS_DEBUG_CHECK after every N-th call (0: never) */
};

/* ---- The fuzzer's side (generate.c, fuzzer.c).  Everything it writes is on its stack, its IPC
 * buffer or its stats page. */

struct fstate {
    uint64_t s;
    const struct fuzz_cfg *cfg;
    struct fuzz_stats *stats;
    struct ipc_buffer *buf;
    word_t vwant;               /* an address whose Frame Map lacked a table */
    word_t full_untyped;        /* an untyped that ran out of memory: worth a Revoke */
    uint8_t *kind;              /* in the stats page */
};

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

/* generate.c: build the next call, and learn from its result what the slots hold. */
void fuzz_build(struct fstate *f, struct call *c);
void fuzz_track(struct fstate *f, const struct call *c, word_t st, const struct msg *m);
/* The kinds of the pool as the root task builds it (generate.c). */
void fuzz_pool_kinds(uint8_t *k);
/* The slot the fuzzer believes holds its own CNode (generate.c). */
cptr_t fuzz_own_cnode(struct fstate *f);

/* fuzzer.c: the fuzzer thread; argp is its struct fuzz_cfg. */
void fuzz_thread(void *argp);

#endif
