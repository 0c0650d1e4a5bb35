/*
 * System calls: IPC, notifications and the debug calls, built on the
 * port's arch_syscall() (docs/userland.md).  A struct msg carries the
 * message info, the badge and MR0..MR3; longer messages continue in the
 * calling thread's IPC buffer (ipcbuf()->msg[i], i >= ARCH_MSG_REGS).
 */
#ifndef SYS_H
#define SYS_H

#include <abi/errors.h>
#include <abi/kstats.h>
#include <abi/msginfo.h>
#include <abi/syscalls.h>
#include <abi/types.h>
#include <syscall_arch.h>

#include "thread_local.h"

struct msg {
    word_t info;                /* message info (abi/msginfo.h) */
    word_t badge;               /* out: the sender's badge or the notification word */
    word_t mr[ARCH_MSG_REGS];   /* MR0..MR3 */
};

/* Set / read message register i, wherever it lives. */
static inline void msg_set(struct msg *m, unsigned i, word_t v)
{
    if (i < ARCH_MSG_REGS)
        m->mr[i] = v;
    else
        ipcbuf()->msg[i] = v;
}

static inline word_t msg_get(const struct msg *m, unsigned i)
{
    return i < ARCH_MSG_REGS ? m->mr[i] : ipcbuf()->msg[i];
}

static inline word_t sys_raw(word_t sysno, cptr_t cap, struct msg *m)
{
    word_t c = cap;
    word_t st = arch_syscall(sysno, &c, &m->info, m->mr);
    m->badge = c;
    return st;
}

/* Each returns the status; the message in *m is replaced by what came back. */
static inline word_t sys_call(cptr_t cap, struct msg *m)      { return sys_raw(SYS_CALL, cap, m); }
static inline word_t sys_send(cptr_t cap, struct msg *m)      { return sys_raw(SYS_SEND, cap, m); }
static inline word_t sys_nbsend(cptr_t cap, struct msg *m)    { return sys_raw(SYS_NBSEND, cap, m); }

/*
 * A receive sends nothing, but the registers of the convention are inputs
 * too: they go in as zero, so that *m may be uninitialised and no stale
 * stack words reach the kernel.
 */
static inline word_t sys_recv_raw(word_t sysno, cptr_t cap, struct msg *m)
{
    *m = (struct msg){ 0 };
    return sys_raw(sysno, cap, m);
}

static inline word_t sys_recv(cptr_t cap, struct msg *m)      { return sys_recv_raw(SYS_RECV, cap, m); }
static inline word_t sys_nbrecv(cptr_t cap, struct msg *m)    { return sys_recv_raw(SYS_NBRECV, cap, m); }
static inline word_t sys_reply(struct msg *m)                 { return sys_raw(SYS_REPLY, 0, m); }
static inline word_t sys_reply_recv(cptr_t cap, struct msg *m) { return sys_raw(SYS_REPLY_RECV, cap, m); }

static inline word_t sys_yield(void)
{
    struct msg m = { 0 };
    return sys_raw(SYS_YIELD, 0, &m);
}

/* Notifications: Signal is Send on a notification, Wait is Recv, Poll is NBRecv. */
static inline word_t sys_signal(cptr_t ntfn)
{
    struct msg m = { 0 };
    return sys_raw(SYS_SEND, ntfn, &m);
}

static inline word_t sys_wait(cptr_t ntfn, word_t *word)
{
    struct msg m = { 0 };
    word_t st = sys_raw(SYS_RECV, ntfn, &m);
    if (word)
        *word = m.badge;
    return st;
}

static inline word_t sys_poll(cptr_t ntfn, word_t *word)
{
    struct msg m = { 0 };
    word_t st = sys_raw(SYS_NBRECV, ntfn, &m);
    if (word)
        *word = m.badge;
    return st;
}

/* Debug calls (docs/abi.md). */
void sys_debug_puts(const char *s, word_t len);
_Noreturn void sys_debug_halt(word_t status);
word_t sys_debug_check(void);
/* sys_debug_check(), and how many checks have failed since boot, this one included. */
word_t sys_debug_check_counted(word_t *failed_so_far);
word_t sys_debug_lockstats(word_t reset);
word_t sys_debug_core(void);
/*
 * Make the next `points` preemption points on the caller's core raise an
 * interrupt (0 disarms).  Returns the system calls restarted at a
 * preemption point on this core so far; *unused: armed points not reached.
 */
word_t sys_debug_preempt(word_t points, word_t *unused);
/*
 * The kernel's accounting of core `core` into values[] (enum kstats_value,
 * abi/kstats.h); flags KSTATS_PRINT, KSTATS_TIME_ON, KSTATS_TIME_OFF; `tag`
 * labels printed records.  Returns the status.
 */
word_t sys_debug_kstats(word_t core, word_t flags, word_t tag, word_t values[KSTATS_VALUES]);
/*
 * SYS_DEBUG_INVARIANTS with op (enum invariants_op, abi/syscalls.h); for
 * INVARIANTS_FAILURES, *failures (may be NULL) gets the checks failed since
 * boot.  Returns the status.
 */
word_t sys_debug_invariants(word_t op, word_t *failures);

#endif
