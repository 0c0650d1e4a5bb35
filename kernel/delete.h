/*
 * Deleting capabilities and destroying objects (kernel/delete.c).
 *
 * Deleting the last capability to an object finalises the object: waiters
 * are cancelled, a TCB or address space in use on another core is taken
 * away from that core (request + IPI + acknowledgement) before the memory
 * can be reused.  The last cap of a container with contents becomes a
 * zombie until the container is empty.  Revoke deletes every descendant.
 * Both are long-running and have preemption points (preemption.h): when an
 * interrupt is pending they return PROGRESS_PREEMPTED and the caller's
 * system call restarts later, continuing where it stopped (the work done
 * so far is never undone).  They cannot fail, whatever the containers
 * hold: any depth of nesting and any cycle is deleted.
 *
 * Caller holds the kernel lock exclusively (the write side under
 * LOCK=fine): deletion changes the CDT and may finalise any object.
 */
#ifndef KERNEL_DELETE_H
#define KERNEL_DELETE_H

#include "cap.h"
#include "preemption.h"

/* Delete the cap in slot (finalising its object if it is the last); may be preempted. */
enum progress cte_delete(struct cte *slot);

/* Delete every descendant of slot; may be preempted. */
enum progress cte_revoke(struct cte *slot);

#endif
