/*
 * An object invocation being decoded: who calls, with what message, on
 * which capability.
 *
 * Decode, then invoke (seL4's discipline, within one call).  A decode_*
 * function reads the arguments through inv_mr() and the extra caps through
 * inv->extra[], checks everything, and fills a small argument struct of its
 * object (struct cnode_args, tcb_args, retype_args...).  It changes nothing
 * while it checks, and it is the only place a user-visible error comes
 * from (inv_error()).  Once every check has passed it ends by calling the
 * matching invoke_* with that struct (a call with nothing to carry makes
 * its change directly); invoke_* changes state, sets result registers with
 * inv_result(), and cannot fail.
 *
 * Preemptible operations (Delete, Revoke, Retype, and TCB calls that
 * delete the caps they replace) have invoke_* steps that return enum
 * progress (preemption.h): PROGRESS_PREEMPTED is not an error.  The
 * decoder turns it into STATUS_PREEMPTED, which kernel/syscall.c never
 * shows the caller: it restarts the system call, whose decoder checks
 * again against the state as the stopped step left it.
 *
 * Caller holds the kernel lock exclusively (the write side under
 * LOCK=fine): object invocations are general work.
 */
#ifndef KERNEL_INVOCATION_H
#define KERNEL_INVOCATION_H

#include "types.h"
#include "cap.h"
#include "tcb.h"
#include <abi/msginfo.h>
#include <abi/invocation.h>

struct invocation {
    struct tcb *thread;             /* the caller */
    struct ipc_buffer *buffer;      /* its IPC buffer, or NULL */
    word_t label;                   /* enum invocation_label */
    unsigned length;                /* message registers supplied */
    unsigned nextra;                /* extra caps found */
    struct cte *slot;               /* the invoked capability's slot */
    struct cap cap;                 /* a copy of it */
    struct cte *extra[MSG_MAX_EXTRA_CAPS];  /* slots of the extra caps */
    unsigned nresults;              /* result MRs set */
    word_t err[2];                  /* error details, returned in MR0, MR1 */
    unsigned nerr;
};

/* Message register i of a thread (machine register or IPC buffer); 0 when unavailable. */
word_t get_mr(struct tcb *t, struct ipc_buffer *buf, unsigned i);
/* Set message register i; false when it would need an IPC buffer the thread lacks. */
bool set_mr(struct tcb *t, struct ipc_buffer *buf, unsigned i, word_t v);
/* How many message registers a thread can hold. */
unsigned mr_capacity(struct ipc_buffer *buf);

static inline word_t inv_mr(struct invocation *inv, unsigned i)
{
    return get_mr(inv->thread, inv->buffer, i);
}

static inline void inv_result(struct invocation *inv, unsigned i, word_t v)
{
    if (set_mr(inv->thread, inv->buffer, i, v) && i + 1 > inv->nresults)
        inv->nresults = i + 1;
}

/* Record an error's details (MR0, MR1) and return the status. */
static inline enum status inv_error(struct invocation *inv, enum status s, word_t d0, word_t d1)
{
    inv->err[0] = d0;
    inv->err[1] = d1;
    inv->nerr = 2;
    return s;
}

/* Decoders, one per object family. */
enum status decode_untyped_invocation(struct invocation *inv);
enum status decode_cnode_invocation(struct invocation *inv);
enum status decode_tcb_invocation(struct invocation *inv);
enum status decode_irq_control_invocation(struct invocation *inv);
enum status decode_irq_handler_invocation(struct invocation *inv);
enum status decode_frame_invocation(struct invocation *inv);
enum status decode_page_table_invocation(struct invocation *inv);
enum status decode_vspace_invocation(struct invocation *inv);
/* The port's I/O port caps (arch/x86_64/ioport.c); ports without I/O ports never make one. */
enum status arch_decode_io_port_invocation(struct invocation *inv);

/* From a decoder whose invoke_* stopped with PROGRESS_PREEMPTED: restart the call (not user-visible). */
#define STATUS_PREEMPTED ((enum status)E_COUNT)

#endif
