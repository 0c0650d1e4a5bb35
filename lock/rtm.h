/*
 * Lock elision with Intel RTM (TSX), x86_64 only.  Used by lock/rtm.c.
 *
 * Algorithm: speculative lock elision, Rajwar and Goodman, MICRO 2001, in
 * the form of Figure 1 of the paper ("An Evaluation of Coarse-Grained
 * Locking for Multicore Microkernels" §3.4, "For a Microkernel, a Big Lock
 * Is Fine" §3.3): run the critical section as a hardware transaction; read
 * the fallback lock inside it so that the lock is in the transaction's read
 * set; abort explicitly if it is held; after an abort wait until the lock
 * is free and retry, up to RTM_ATTEMPTS_THRESHOLD (lock/rtm_tunables.h);
 * then take the lock for real.  At the end XTEST says which of the two
 * happened: XEND commits, otherwise the lock is released.  The fallback is
 * the CLH lock of lock/clh.h.  The explicit-abort-code naming and the
 * adaptive skip counter follow glibc's x86 elision
 * (sysdeps/unix/sysv/linux/x86/elision-lock.c).
 *
 * Why reading the lock word is enough: a transaction that saw the lock
 * free has its tail word and tail node in its read set.  A core taking the
 * lock for real swaps the tail, a write to that line, and the hardware
 * aborts every transaction that read it before the writer proceeds into
 * its critical section.  So a transaction never runs concurrently with a
 * lock holder, and transactions among themselves are serialisable at
 * cache-line granularity.
 *
 * Fairness and progress: transactions guarantee neither ("For a
 * Microkernel, a Big Lock Is Fine" §3.3.1); the threshold bounds the
 * attempts, after which progress and FIFO order are those of the CLH lock.
 * Transactions can be starved by a stream of fallback holders, but then
 * they fall back and queue like everyone else.
 *
 * Memory ordering: a committed transaction is ordered like a LOCK-prefixed
 * instruction (Intel SDM vol. 1, 16.3.6), so the elided section needs no
 * other barrier; the fallback path has the CLH lock's ordering.
 *
 * Hardware assumptions: RTM present and usable, which the kernel's boot
 * probe (lock_rtm_probe(), lock/lock.h) establishes before any of this
 * runs: in KVM guests XBEGIN raises #GP although CPUID advertises RTM, and
 * XTEST raises #UD without RTM.  The instructions are written as mnemonics
 * in inline asm (lock/x86_64/rtm_insn.h) so the kernel needs no -mrtm.
 */
#ifndef LOCK_RTM_H
#define LOCK_RTM_H

#include "lockdefs.h"
#include "clh.h"
#include "cpu_relax.h"
#include "rtm_insn.h"
#include "rtm_tunables.h"
#include "lock.h"

/* Barrier instructions, for LOCKSTATS: XBEGIN orders nothing; a commit
 * orders like a LOCK-prefixed instruction. */
#define RTM_BEGIN_BARRIERS  0
#define RTM_COMMIT_BARRIERS 1

/* Explicit abort codes of the lock layer (XABORT immediates). */
#define LOCK_ABORT_LOCK_HELD  0x4c  /* 'L' as in Figure 1: the fallback lock was held */
#define LOCK_ABORT_NEEDS_LOCK 0x58  /* kernel_lock_require_exclusive(): redo holding the lock */

/* Per-core elision state, written only by its core. */
struct rtm_core {
    _Alignas(LOCK_CACHE_LINE) unsigned skip;  /* entries left to take the lock directly */
};

_Static_assert(sizeof(struct rtm_core) == LOCK_CACHE_LINE, "per-core RTM state on its own line");

/* Count one abort by cause in st (NULL: not counting). */
static inline void rtm_count_abort(struct lock_stats *st, unsigned status)
{
    if (st == NULL) {
        return;
    }
    if (status & RTM_STATUS_EXPLICIT) {
        if (RTM_STATUS_CODE(status) == LOCK_ABORT_LOCK_HELD) {
            st->rtm_aborts_lock_held++;
        } else {
            st->rtm_aborts_explicit++;
        }
    } else if (status & RTM_STATUS_CONFLICT) {
        st->rtm_aborts_conflict++;
    } else if (status & RTM_STATUS_CAPACITY) {
        st->rtm_aborts_capacity++;
    } else {
        st->rtm_aborts_other++;
    }
}

/* Whether another transaction may succeed after this abort. */
static inline bool rtm_worth_retrying(unsigned status)
{
    if (status & RTM_STATUS_EXPLICIT) {
        return RTM_STATUS_CODE(status) == LOCK_ABORT_LOCK_HELD;
    }
    return (status & RTM_STATUS_RETRY) != 0;
}

/*
 * Enter the critical section guarded by `lock` on `core`.  Returns true
 * inside a transaction (the lock elided), false holding the lock.  Aborts,
 * fallbacks and fallback acquisitions that waited are counted in st unless
 * it is NULL.  The transaction may span the return
 * to the caller and beyond: an abort rolls memory, the stack included, back
 * to the XBEGIN here.
 */
static LOCK_INLINE bool rtm_elide_acquire(struct clh_lock *lock, struct rtm_core *rc, unsigned core,
                                     lock_wait_fn hook, struct lock_stats *st)
{
    unsigned attempts = 0;

    if (rc->skip > 0) {
        rc->skip--;
    } else {
        for (;;) {
            unsigned status = rtm_begin();

            if (status == RTM_STARTED) {
                /* Puts the lock in the read set (see the header comment). */
                if (clh_is_locked(lock)) {
                    rtm_abort(LOCK_ABORT_LOCK_HELD);
                }
                return true;
            }
            rtm_count_abort(st, status);
            if (!rtm_worth_retrying(status)) {
                if (!(status & RTM_STATUS_EXPLICIT)) {
                    rc->skip = RTM_SKIP_AFTER_DOOMED;
                }
                break;
            }
            if (++attempts >= RTM_ATTEMPTS_THRESHOLD) {
                break;
            }
            /* Figure 1: wait for the lock to be free before retrying, or
             * the next transaction aborts on it at once. */
            while (clh_is_locked(lock)) {
                cpu_relax();
                hook();
            }
        }
    }
    bool waited = clh_acquire(lock, core, hook);
    if (st != NULL) {
        st->rtm_fallbacks++;
        st->contended += waited;
    }
    return false;
}

/*
 * Leave the section entered by rtm_elide_acquire(); returns true if it
 * committed.  c is the core's entry of the fallback lock.
 */
static LOCK_INLINE bool rtm_elide_release(struct clh_core *c)
{
    if (rtm_test()) {
        rtm_end();
        return true;
    }
    clh_release_as(c);
    return false;
}

#endif
