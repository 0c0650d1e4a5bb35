/*
 * Thread control blocks.
 *
 * A TCB is retyped from untyped memory (2^TCB_BITS bytes) or, for the idle
 * threads, lives in kernel/core.c.  Its own capability slots hold copies of
 * the capabilities it runs with (CSpace root, VSpace root, IPC buffer
 * frame), so those objects stay alive while the thread uses them, plus the
 * master reply cap and the caller slot (kernel/reply.c).
 *
 * Locking under LOCK=fine (the big-reader lock is always held, read or
 * write side, while any field is touched; the write side excludes every
 * reader, so ENTRY_GENERAL code needs no object lock):
 *   [t]  the TCB's own object lock `lock`; the IPC fastpath writes these
 *        fields of its running thread and of its partner holding only the
 *        endpoint's lock (docs/locking.md, "Why `fine`'s fastpath may hold only the endpoint lock")
 *   [q]  the ready-queue lock of core `affinity` (struct core.sched_lock)
 *   [e]  the lock of the endpoint or notification the thread waits on
 *   [a]  only core `affinity` touches it (its scheduler, its timer, the IPC
 *        fastpath's direct switch), or the write side
 *   [w]  written only under the write side; read freely under either side
 */
#ifndef KERNEL_TCB_H
#define KERNEL_TCB_H

#include "types.h"
#include "cap.h"
#include <abi/faults.h>
#include <abi/invocation.h>
#include <abi/ipc_buffer.h>
#include <lock.h>

enum thread_state {
    TS_INACTIVE = 0,        /* not runnable: new, or suspended */
    TS_RUNNING,             /* runnable: resumes in user mode where it left */
    TS_RESTART,             /* runnable: re-executes its interrupted system call */
    TS_BLOCKED_SEND,        /* queued on blocked_on (an endpoint) to send */
    TS_BLOCKED_RECV,        /* queued on blocked_on (an endpoint) to receive */
    TS_BLOCKED_REPLY,       /* waiting for a reply cap to be used */
    TS_BLOCKED_NOTIFICATION,/* queued on blocked_on (a notification) */
    TS_IDLE,                /* a core's idle thread */
};

enum tcb_slot {
    TCB_SLOT_CSPACE = 0,    /* CNode cap: the thread's CSpace root */
    TCB_SLOT_VSPACE,        /* VSpace cap: its address space */
    TCB_SLOT_IPC_BUFFER,    /* frame cap holding its IPC buffer */
    TCB_SLOT_REPLY,         /* its master reply cap (CAPF_MASTER) */
    TCB_SLOT_CALLER,        /* the reply cap of the last Call it received */
    TCB_SLOT_COUNT
};

#define TCB_BITS        11  /* log2 bytes of a TCB object */
#define PRIORITY_COUNT  256
#define TIMESLICE_TICKS 5   /* timer ticks per timeslice */

/* What a thread blocked in IPC was doing: enum ipc_flags in blocked_flags. */
enum ipc_flags {
    IPCF_CALL       = 1 << 0,   /* blocked sending a Call (wants a reply cap) */
    IPCF_GRANT      = 1 << 1,   /* the send cap had RIGHT_GRANT */
    IPCF_GRANT_REPLY = 1 << 2,  /* the send cap had RIGHT_GRANT_REPLY */
    IPCF_FAULT      = 1 << 3,   /* the message is the fault message in fault[] */
};

struct endpoint;
struct notification;

struct tcb {
    struct arch_context context;        /* [t] user registers (saved by the port's entry code),
                                           TLS base and lazily switched FPU state (kernel/arch.h) */
    struct cte slots[TCB_SLOT_COUNT];   /* [w] (caller slot: [t]) see enum tcb_slot */
    struct object_lock lock;            /* the object lock [t] under LOCK=fine */

    uint8_t state;                      /* [t] enum thread_state */
    uint8_t priority;                   /* [w] 0..255, higher runs first */
    uint8_t max_priority;               /* [w] highest priority it may give itself or others */
    uint8_t blocked_flags;              /* [t] enum ipc_flags while blocked sending */
    uint8_t in_ready_queue;             /* [q] queued on core `affinity`'s ready queue */
    uint8_t fault_type;                 /* [t] enum fault_type pending (IPCF_FAULT) */
    unsigned affinity;                  /* [w] the core it runs on; changed only by SetAffinity */
    unsigned timeslice;                 /* [a] timer ticks left */

    struct tcb *sched_next;             /* [q] ready queue links */
    struct tcb *sched_prev;
    struct tcb *ep_next;                /* [e] endpoint / notification wait queue links */
    struct tcb *ep_prev;
    void *blocked_on;                   /* [t][e] the endpoint or notification waited on */
    word_t blocked_badge;               /* [t] badge of the cap it sends through */

    word_t ipc_buffer_vaddr;            /* [w] user address of the IPC buffer (frame in slots) */
    cptr_t fault_endpoint;              /* [w] looked up in its CSpace when it faults */
    struct notification *bound_notification;    /* [w] */
    word_t fault[4];                    /* [t] fault message words (abi/faults.h) */

    char name[TCB_NAME_MAX];            /* [w] for fault records and debugging */
};

_Static_assert(sizeof(struct tcb) <= (1u << TCB_BITS), "a TCB fits its object size");

static inline struct arch_context *tcb_context(struct tcb *t)
{
    return &t->context;
}

static inline struct tcb *tcb_from_context(struct arch_context *ctx)
{
    return container_of(ctx, struct tcb, context);
}

static inline bool tcb_runnable(const struct tcb *t)
{
    return t->state == TS_RUNNING || t->state == TS_RESTART;
}

/*
 * The kernel mapping of a thread's IPC buffer, or NULL when it has none
 * (no frame cap in its slot, or the address does not fit the frame).  This
 * is the only way the kernel reads or writes user memory.  Either side of
 * the kernel lock: the slot and the address are [w].
 */
struct ipc_buffer *tcb_ipc_buffer(struct tcb *t);

/*
 * kernel/tcb.c.  Caller holds the write side (LOCK=fine) or the big lock:
 * these change [w] fields, and suspend, resume and finalise touch the
 * ready queues of any core and may wait for another core to let go of t.
 */
void tcb_init(struct tcb *t);
void tcb_set_name(struct tcb *t, const char *name);
void tcb_suspend(struct tcb *t);
void tcb_resume(struct tcb *t);
void tcb_finalise(struct tcb *t);
void tcb_install_master_reply(struct tcb *t);
struct invocation;
enum status decode_tcb_invocation(struct invocation *inv);

#endif
