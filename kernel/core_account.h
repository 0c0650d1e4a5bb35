/*
 * A core's account of where its time goes: the counters of
 * kernel/accounting.h, kept in the core's own block (struct core) so that
 * the entry and exit hooks reach them through the core pointer they have.
 */
#ifndef KERNEL_CORE_ACCOUNT_H
#define KERNEL_CORE_ACCOUNT_H

#include "types.h"

enum entry_cause {
    ENTRY_CAUSE_SYSCALL,
    ENTRY_CAUSE_INTERRUPT,
    ENTRY_CAUSE_FAULT,
    ENTRY_CAUSES
};

/*
 * Only the owning core writes its account; SYS_DEBUG_KSTATS reads other
 * cores' accounts, so the writes are relaxed atomic stores (a single
 * writer needs no read-modify-write) and a reader sees each word whole.
 *
 * exit_stamp is nonzero exactly when the last return to a thread read the
 * counter (a return to the idle thread, or any return while timing is on):
 * the next entry then charges the time since to idle or user.  entry_stamp
 * is nonzero exactly inside an entry that began while timing was on; its
 * exit charges the kernel time and stamps the return.  So with timing off
 * an entry and exit to and from a user thread cost a counter increment and
 * two tests (three on the slow path, which may return to the idle thread),
 * and never read the counter.  Timing turned on by another core starts at
 * this core's next entry; turned off, it stops at the exit of the entry
 * under way.
 *
 * timing says whether this core splits its time into kernel and user
 * (KSTATS_TIME_ON): there is no global flag, only this word in each core's
 * account, which the entry tests beside exit_stamp (two words of one
 * line) and which accounting_set_timing() writes for every core at once.
 * The owner only reads it.
 */
struct core_account {
    word_t entries[ENTRY_CAUSES];
    word_t idle;
    word_t kernel;
    word_t user;
    word_t ticks;       /* timer ticks taken while the timer ran (kernel/sched.c) */
    word_t exit_stamp;
    word_t entry_stamp;
    word_t timing;      /* nonzero: timing is on (written by accounting_set_timing() only) */
};

#endif
