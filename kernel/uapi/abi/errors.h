/*
 * The user-visible status of a system call.  Each port returns it in its
 * status register (docs/abi.md).  Only decode stages produce errors; the
 * execute stage of a call cannot fail.
 */
#ifndef ABI_ERRORS_H
#define ABI_ERRORS_H

enum status {
    E_OK = 0,
    E_INVALID_ARGUMENT,     /* an argument is out of its domain; MR0 = argument index */
    E_INVALID_CAPABILITY,   /* a capability is of the wrong type or lacks rights; MR0 = cap index */
    E_ILLEGAL_OPERATION,    /* the operation is not allowed on this object or in this state */
    E_RANGE,                /* a number is out of range; MR0, MR1 = allowed min, max */
    E_ALIGNMENT,            /* an address or size is misaligned */
    E_FAILED_LOOKUP,        /* a capability address does not resolve; MR0 = failure kind */
    E_TRUNCATED_MESSAGE,    /* the message is too short for the invocation */
    E_DELETE_FIRST,         /* the destination slot is not empty */
    E_REVOKE_FIRST,         /* the object has children; revoke before retyping */
    E_NOT_ENOUGH_MEMORY,    /* the untyped has too little free memory; MR0 = bytes free */
    E_WOULD_BLOCK,          /* a non-blocking receive found no sender */
    E_INVARIANT,            /* SYS_DEBUG_CHECK: the kernel invariant checker failed */
    E_UNKNOWN_SYSCALL,      /* never returned: an unknown number is a fault (abi/faults.h) */
    E_COUNT
};

#endif
