/*
 * Deleting capabilities and destroying objects (kernel/delete.c).
 *
 * Deleting the last capability to an object finalises the object: waiters
 * are cancelled, a TCB or address space in use on another core is taken
 * away from that core (request + IPI + acknowledgement) before the memory
 * can be reused.  Revoke deletes every descendant.  Both are long-running
 * and have preemption points (preemption.h): when an interrupt is pending they return
 * STATUS_PREEMPTED and the caller's system call restarts later, continuing
 * where it stopped (the work done so far is never undone).
 */
#ifndef KERNEL_DELETE_H
#define KERNEL_DELETE_H

#include "cap.h"
#include "invocation.h"

/* Delete the cap in slot (finalising its object if it is the last); may be preempted. */
enum status cte_delete(struct cte *slot);

/* Delete every descendant of slot; may be preempted. */
enum status cte_revoke(struct cte *slot);

/* Delete a cap known not to be final, or whose object needs no finalisation (no preemption). */
void cte_delete_one(struct cte *slot);

#endif
