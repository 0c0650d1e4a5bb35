/*
 * The kernel invariant checker and its verdict (kernel/invariants.c).
 *
 * A check that fails prints why (`invariant failed: ...`) and an
 * `invariant` record naming, for every core, the last system call it
 * served before the check (docs/console.md): in a fuzz run that is the
 * kernel's own account of which call broke what.  The kernel counts the
 * failed checks; a run's verdict comes from that count, never from the
 * status a thread reads back, which another thread may have rewritten
 * (TCB WriteRegisters) between the kernel's return and the read.
 */
#ifndef KERNEL_INVARIANTS_H
#define KERNEL_INVARIANTS_H

#include "types.h"
#include "tcb.h"

/* Run every check; on a failure print the reason and the record, count it and return false. */
bool kernel_check_invariants(void);
/* Checks failed since boot. */
word_t invariant_failures(void);

/*
 * DEBUG builds: note the system call t makes on this core (number, label)
 * at its start, the type of the capability it names once looked up, and its
 * status at its end (t still the entering thread; a call that blocked, was
 * preempted or faulted has no status).  Written by this core only, under
 * the kernel lock; read by the checker, which holds the lock exclusively.
 * The IPC fastpath does not call these: a call it completes leaves the
 * previous record in place.
 */
void invocation_note_start(struct tcb *t, word_t sysno);
void invocation_note_cap(unsigned cap_type);
void invocation_note_end(struct tcb *t);

/*
 * SYS_DEBUG_INVARIANTS with INVARIANTS_BREAK / INVARIANTS_REPAIR
 * (DEBUG builds, root thread only): plant one broken invariant that
 * nothing else repairs or trips over, or take it away again.  E_OK, or
 * E_ILLEGAL_OPERATION when that is impossible (already planted, nothing
 * planted, no core offline to name).
 */
enum status invariants_break(struct tcb *caller);
enum status invariants_repair(void);

#endif
