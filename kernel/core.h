/*
 * Per-core kernel state.
 *
 * Each core has its own current thread, idle thread, ready queues and
 * record of hardware work deferred until after the kernel lock is released
 * (seL4 BKL design: CR3 loads, IPIs and interrupt-controller accesses abort
 * RTM transactions and lengthen the critical section, so they run after
 * kernel_lock_release(); the two-phase system calls make this safe, since
 * nothing can fail once the execute phase has started).
 *
 * Cross-core requests.  A core that holds the kernel lock exclusively and
 * is about to free or change a TCB or address space that another core may
 * be using posts a request in that core's mailbox, sends an IPI at once and
 * waits for the acknowledgement, serving its own mailbox meanwhile.  The
 * target serves its mailbox on any kernel entry and while it spins for the
 * kernel lock (kernel_lock_wait_hook), touching only its own core state, so
 * it never needs the lock the requester holds.
 *
 * Locking (LOCK=fine):
 *   [o]  only the owning core touches it
 *   [q]  the core's ready-queue lock `sched_lock` (any core may enqueue)
 *   [x]  written by the owner under the kernel lock (read or write side) or
 *        while serving a request; read by an exclusive holder of the lock
 *   [m]  mailbox protocol: see the comments on struct mailbox
 */
#ifndef KERNEL_CORE_H
#define KERNEL_CORE_H

#include "types.h"
#include "tcb.h"
#include "core_account.h"
#include <arch.h>
#include <lock.h>

#define L2_BITMAP_WORDS (PRIORITY_COUNT / (8 * sizeof(word_t)))

struct ready_queue {
    struct tcb *head;
    struct tcb *tail;
};

enum core_request_kind {
    REQ_NONE = 0,
    REQ_LEAVE_TCB,      /* stop running `tcb` (switch to the idle thread) */
    REQ_LEAVE_VSPACE,   /* stop using the address space `asid` (load the kernel-only one) */
    REQ_TLB_FLUSH,      /* flush `asid` at `vaddr` (or the whole space) from this core's TLB */
    REQ_RELEASE_CONTEXT,/* give back the registers of `tcb` held lazily (arch_core_release_context()) */
};

/*
 * One request at a time per target core: only a core holding the kernel
 * lock exclusively posts requests, and it waits for each to be served.
 * The requester writes the arguments, then increments `seq` with release
 * order; the owner reads `seq` with acquire order, serves, and stores
 * `ack = seq` with release order, which pairs with the requester's acquire
 * load of `ack`.
 */
struct mailbox {
    uint32_t seq;           /* [m] requester: incremented per request */
    uint32_t ack;           /* [m] owner: last request served */
    uint32_t kind;          /* [m] enum core_request_kind */
    uint32_t asid;          /* [m] */
    struct tcb *tcb;        /* [m] */
    word_t vaddr;           /* [m] */
    bool whole_space;       /* [m] */
    bool reschedule;        /* [m] any core sets it (atomic store) before a reschedule IPI */
};

#define DEFERRED_IRQS_MAX 8

/*
 * Hardware work recorded under the lock and done after it is released.
 * The address-space load, which most IPCs between spaces record, has its
 * own flag and is done inline: the space to load is the one the switch
 * recorded as loaded (struct core: loaded_vspace_paddr, loaded_asid).  The
 * rest is done out of line when `pending`.
 */
struct deferred_work {
    bool pending;                   /* [o] an IPI or IRQ operation is recorded */
    bool load_vspace;               /* [o] load (loaded_vspace_paddr, loaded_asid) of the core */
    coreset_t ipi;                  /* [o] cores to send a reschedule IPI */
    unsigned nirq;                  /* [o] */
    uint16_t irq[DEFERRED_IRQS_MAX];    /* [o] lines whose mask the kernel decided (irq.c) */
};

struct core {
    struct tcb *current;            /* [x] the thread this core runs (its idle thread when none) */
    struct tcb *idle;               /* [o] this core's idle thread (kernel/core.c) */
    struct tcb *entry_thread;       /* [o] the thread whose entry (syscall, fault) is handled;
                                       NULL once a request or its deletion took it away */
    bool entry_is_syscall;          /* [o] that entry is a system call (restart it if taken away) */
    bool online;                    /* [o] set once, with release, when core_init() is done */
    unsigned loaded_asid;           /* [x] address space whose table the core runs on (0: none) */
    word_t loaded_vspace_paddr;     /* [x] */

    struct object_lock sched_lock;  /* the ready-queue lock [q] under LOCK=fine */
    word_t ready_l1;                /* [q] bit i: ready_l2[i] != 0 (atomic stores: the
                                       fastpath reads it without [q], see sched_highest()) */
    word_t ready_l2[L2_BITMAP_WORDS];   /* [q] bit p: ready[p] is not empty (as ready_l1) */
    struct ready_queue ready[PRIORITY_COUNT];   /* [q] */

    struct deferred_work deferred;  /* [o] */
    struct mailbox mailbox;         /* [m] */
    bool tick_stopped;              /* [o] the timeslice timer is stopped: the core is idle */
    struct core_account account;    /* [o] written by this core only (kernel/accounting.h) */
} CACHE_ALIGNED;

_Static_assert(sizeof(struct core) % CACHE_LINE_SIZE == 0, "per-core state fills whole cache lines");
_Static_assert(L2_BITMAP_WORDS <= 8 * sizeof(word_t), "two bitmap levels cover every priority");
_Static_assert(NCPUS >= 1, "at least one core");

extern struct core cores[NCPUS];

/* The port's arch_this_core(): &cores[arch_core_id()], or a pointer it keeps at hand. */
#include <arch/this_core.h>

static inline struct core *my_core(void)
{
    return arch_this_core();
}

static inline struct tcb *current_thread(void)
{
    return my_core()->current;
}

/* Number of cores the kernel runs on (set at boot). */
extern unsigned ncores_online;

/* kernel/core.c */
void core_init(unsigned core);
/* Boot core: wait until cores 1..ncores-1 have run core_init(). */
void core_wait_initialised(unsigned ncores);
void core_serve_request(struct core *c, uint32_t seq);
void core_request(unsigned target, enum core_request_kind kind, struct tcb *tcb,
                  unsigned asid, word_t vaddr, bool whole_space);
void core_defer_ipi(unsigned target);
void core_defer_irq(unsigned irq);
void core_do_deferred_work(struct deferred_work *d);

/* Whether c's mailbox holds a request not yet served (c is this core). */
static ALWAYS_INLINE bool core_mailbox_pending(struct core *c)
{
    /* Relaxed: serving it loads seq again with acquire order (core_serve_mailbox()). */
    return __atomic_load_n(&c->mailbox.seq, __ATOMIC_RELAXED) != c->mailbox.ack;
}

/*
 * Serve this core's mailbox.  Runs on every kernel entry, while spinning
 * for the kernel lock and while waiting for another core's
 * acknowledgement, never holding anything the requester could need.  The
 * check is inline because almost every entry finds nothing to do.
 */
static ALWAYS_INLINE void core_serve_mailbox(void)
{
    struct core *c = my_core();
    /* Acquire pairs with the requester's release increment: the arguments are visible. */
    uint32_t seq = __atomic_load_n(&c->mailbox.seq, __ATOMIC_ACQUIRE);

    /* ack is written only by this core. */
    if (unlikely(seq != c->mailbox.ack))
        core_serve_request(c, seq);
}

/* After kernel_lock_release(): the IRQ and IPI work of this entry, if it recorded any. */
static ALWAYS_INLINE void core_run_deferred_irq_ipi(struct core *c)
{
    if (unlikely(c->deferred.pending))
        core_do_deferred_work(&c->deferred);
}

/*
 * After kernel_lock_release(): load the address space that this core's
 * last vspace_switch() recorded as loaded (the slow path's deferred work,
 * core_run_deferred_work(); the IPC fastpath reads the same record just
 * before the release).  Reading the record rather than a copy of it keeps
 * a cancelled switch harmless: a REQ_LEAVE_VSPACE served in between has
 * recorded, and loaded, the kernel-only space.
 */
static ALWAYS_INLINE void core_load_vspace(struct core *c)
{
    arch_vspace_load(c->loaded_vspace_paddr, c->loaded_asid);
}

/* After kernel_lock_release(): the hardware side of this entry, if it recorded any. */
static ALWAYS_INLINE void core_run_deferred_work(struct core *c)
{
    struct deferred_work *d = &c->deferred;

    if (d->load_vspace) {
        d->load_vspace = false;
        core_load_vspace(c);
    }
    core_run_deferred_irq_ipi(c);
}

#endif
