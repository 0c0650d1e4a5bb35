/*
 * Per-core accounting of where the time goes (kernel/accounting.c).
 *
 * Each core counts its kernel entries by cause and the time its idle
 * thread runs, always; on request (SYS_DEBUG_KSTATS with KSTATS_TIME_ON)
 * it also splits the rest into time in the kernel and time in user
 * threads.  Time is in the arch's cycle counter units (arch_cycles()),
 * which under QEMU's -icount are executed instructions.
 *
 * The hooks: accounting_enter() first thing in every kernel entry,
 * accounting_exit() last thing before returning to the current thread.
 */
#ifndef KERNEL_ACCOUNTING_H
#define KERNEL_ACCOUNTING_H

#include "types.h"
#include "core.h"

/*
 * Turn timing on or off on every core (struct core_account.timing); each
 * core sees the change at its next entry or exit.
 */
void accounting_set_timing(bool on);

/* Whether timing is on (every core's word says the same once set). */
bool accounting_timing(void);

void accounting_enter_stamped(struct core_account *a);
void accounting_exit_stamped(struct core_account *a, const struct core *c);

/*
 * Whether this entry on c (this core) needs only its count: no stamp from
 * the last exit to charge, timing off.  Then accounting_enter() is
 * accounting_count_entry().
 */
static inline __attribute__((always_inline)) bool accounting_enter_is_count_only(struct core *c)
{
    struct core_account *a = &c->account;

    return (a->exit_stamp | __atomic_load_n(&a->timing, __ATOMIC_RELAXED)) == 0;
}

static inline __attribute__((always_inline)) void accounting_count_entry(struct core *c, enum entry_cause cause)
{
    struct core_account *a = &c->account;

    __atomic_store_n(&a->entries[cause], a->entries[cause] + 1, __ATOMIC_RELAXED);
}

static inline void accounting_count_tick(struct core *c)
{
    struct core_account *a = &c->account;

    __atomic_store_n(&a->ticks, a->ticks + 1, __ATOMIC_RELAXED);
}

/*
 * First thing in every kernel entry, while the core's current thread is
 * still the interrupted one; c is this core (my_core()).  Always inlined:
 * these hooks run on the IPC fastpath, where a call would cost more than
 * the counting.
 */
static inline __attribute__((always_inline)) void accounting_enter(struct core *c, enum entry_cause cause)
{
    accounting_count_entry(c, cause);
    if (unlikely(!accounting_enter_is_count_only(c)))
        accounting_enter_stamped(&c->account);
}

/* Last thing before returning to c->current (c is this core's state). */
static inline __attribute__((always_inline)) void accounting_exit(struct core *c)
{
    struct core_account *a = &c->account;

    if (unlikely(a->entry_stamp || c->current == c->idle))
        accounting_exit_stamped(a, c);
}

/* accounting_exit() after the fastpath, which never returns to the idle thread. */
static inline __attribute__((always_inline)) void accounting_exit_switched(struct core *c)
{
    struct core_account *a = &c->account;

    if (unlikely(a->entry_stamp))
        accounting_exit_stamped(a, c);
}

/* SYS_DEBUG_KSTATS (kernel/kstats.c) needs no more than these. */
struct kstats_snapshot {
    word_t entries[ENTRY_CAUSES];
    word_t idle;
    word_t kernel;
    word_t user;
    word_t ticks;
    word_t now;
};

/*
 * Core `core`'s counters now, the idle period it is in (if any) included.
 * Caller holds the kernel lock exclusively (it reads cores[core].current).
 */
void accounting_read(unsigned core, struct kstats_snapshot *s);

#endif
