/*
 * The Intel RTM (TSX) instructions, x86_64 only: XBEGIN, XEND, XTEST and
 * XABORT as inline assembly, and the abort status bits XBEGIN leaves in
 * EAX.  The elision algorithm that uses them is lock/rtm.h.  Written as
 * mnemonics so the kernel needs no -mrtm; run them only after the boot
 * probe found RTM usable (lock/rtm.h says why).
 */
#ifndef LOCK_ARCH_RTM_INSN_H
#define LOCK_ARCH_RTM_INSN_H

#include <stdbool.h>

/* What rtm_begin() returns when the transaction has started. */
#define RTM_STARTED (~0u)

/* XBEGIN abort status in EAX (Intel SDM vol. 1, table 16-1). */
#define RTM_STATUS_EXPLICIT (1u << 0)   /* XABORT; code in bits 31:24 */
#define RTM_STATUS_RETRY    (1u << 1)   /* the CPU thinks a retry may succeed */
#define RTM_STATUS_CONFLICT (1u << 2)   /* another core touched our read or write set */
#define RTM_STATUS_CAPACITY (1u << 3)   /* the footprint overflowed the cache */
#define RTM_STATUS_DEBUG    (1u << 4)
#define RTM_STATUS_NESTED   (1u << 5)
#define RTM_STATUS_CODE(s)  (((s) >> 24) & 0xffu)

/* Start a transaction: RTM_STARTED, or after an abort the abort status. */
static inline unsigned rtm_begin(void)
{
    unsigned status = RTM_STARTED;

    /* On abort the CPU restores registers, puts the status in EAX and
     * resumes at label 1, i.e. right here with status != RTM_STARTED. */
    __asm__ volatile("xbegin 1f\n1:" : "+a"(status) : : "memory");
    return status;
}

/* Commit.  Caller must be inside a transaction. */
static inline void rtm_end(void)
{
    __asm__ volatile("xend" : : : "memory");
}

/* How many of n empty transactions commit: host tools probe with it whether RTM works. */
static inline int rtm_empty_commits(int n)
{
    int committed = 0;

    for (int i = 0; i < n; i++) {
        if (rtm_begin() == RTM_STARTED) {
            rtm_end();
            committed++;
        }
    }
    return committed;
}

/* Whether the caller runs inside a transaction. */
static inline bool rtm_test(void)
{
    unsigned char inside;

    __asm__ volatile("xtest\n\tsetnz %0" : "=q"(inside) : : "memory", "cc");
    return inside != 0;
}

/* Abort with an 8-bit immediate code; a no-op outside a transaction. */
#define rtm_abort(code) __asm__ volatile("xabort %0" : : "i"(code) : "memory")

#endif
