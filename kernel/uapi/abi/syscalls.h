/*
 * System call numbers.  Every call but the debug calls takes a capability
 * address; invocations of kernel objects are Call (or Send) on the object's
 * capability with an invocation label in the message info (abi/invocation.h).
 * The register convention of each port is in docs/abi.md.
 */
#ifndef ABI_SYSCALLS_H
#define ABI_SYSCALLS_H

/* The two numbers the kernel's entry code tests, before any C runs (the IPC fastpath). */
#define SYSNO_CALL          1
#define SYSNO_REPLY_RECV    7

#ifndef __ASSEMBLY__

enum syscall {
    SYS_CALL = 1,       /* send, then wait for the reply on the caller's reply slot */
    SYS_SEND,           /* blocking send */
    SYS_NBSEND,         /* send if a receiver waits, else drop; never blocks */
    SYS_RECV,           /* blocking receive on an endpoint or notification */
    SYS_NBRECV,         /* receive if a sender waits; status E_WOULD_BLOCK otherwise */
    SYS_REPLY,          /* reply to the last caller */
    SYS_REPLY_RECV,     /* reply, then receive (the server loop) */
    SYS_YIELD,          /* give up the rest of the timeslice */
    /* Debug calls (DEBUG and benchmark builds; documented in docs/abi.md). */
    SYS_DEBUG_PUTS,     /* print MR-packed bytes to the console: length in MR0.. */
    SYS_DEBUG_HALT,     /* end the run: print the done record, exit QEMU with status */
    SYS_DEBUG_CHECK,    /* run the kernel invariant checker; status E_OK or E_INVARIANT */
    SYS_DEBUG_LOCKSTATS,/* print and (MR0 != 0) reset the lock statistics */
    SYS_DEBUG_CORE,     /* return the index of the core the caller runs on in MR0 */
    SYS_DEBUG_PREEMPT,  /* arm MR0 preemption points on this core; MR0 restarts, MR1 unused points */
    SYS_DEBUG_KSTATS,   /* per-core accounting: read, print, time on/off (abi/kstats.h) */
    SYS_DEBUG_INVARIANTS,   /* MR0 = enum invariants_op below */
    SYS_COUNT
};

/* SYS_DEBUG_INVARIANTS: read the checker's failure count, or (DEBUG, root thread) plant one. */
enum invariants_op {
    INVARIANTS_FAILURES,    /* MR0 := checks failed since boot; nothing is checked */
    INVARIANTS_BREAK,       /* plant one broken invariant (E_ILLEGAL_OPERATION if impossible) */
    INVARIANTS_REPAIR,      /* take it away again */
};

_Static_assert(SYS_CALL == SYSNO_CALL && SYS_REPLY_RECV == SYSNO_REPLY_RECV, "entry code's numbers");
#endif

#endif
