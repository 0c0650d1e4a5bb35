/*
 * Per-core accounting: kernel entries by cause, idle time, and on request
 * kernel and user time (kernel/accounting.h has the protocol of the stamps).
 *
 * Why at entry and exit rather than in the idle loop: the idle thread runs
 * until an interrupt enters the kernel, and every switch to it ends in a
 * return from the kernel, so stamping the return to idle and the next
 * entry measures idle time exactly, with no code in the idle loop and no
 * idle test on the fastpath's exit, which never returns to the idle thread.
 */
#include "accounting.h"
#include <arch.h>

void accounting_set_timing(bool on)
{
    /* Relaxed: each core sees the change at its next entry or exit, which is all timing promises. */
    for (unsigned i = 0; i < NCPUS; i++)
        __atomic_store_n(&cores[i].account.timing, on, __ATOMIC_RELAXED);
}

bool accounting_timing(void)
{
    return __atomic_load_n(&cores[0].account.timing, __ATOMIC_RELAXED) != 0;
}

static void add_relaxed(word_t *counter, word_t amount)
{
    __atomic_store_n(counter, *counter + amount, __ATOMIC_RELAXED);
}

void accounting_enter_stamped(struct core_account *a)
{
    const struct core *c = my_core();
    word_t now = arch_cycles();

    if (a->exit_stamp) {
        word_t since = now - a->exit_stamp;

        __atomic_store_n(&a->exit_stamp, 0, __ATOMIC_RELAXED);
        if (c->current == c->idle)
            /* Release: a reader that sees this idle total sees the stamp cleared (accounting_read). */
            __atomic_store_n(&a->idle, a->idle + since, __ATOMIC_RELEASE);
        else
            add_relaxed(&a->user, since);
    }
    /* As for exit_stamp: a zero reading would look unstamped. */
    if (__atomic_load_n(&a->timing, __ATOMIC_RELAXED))
        a->entry_stamp = now ? now : 1;
}

void accounting_exit_stamped(struct core_account *a, const struct core *c)
{
    word_t now = arch_cycles();
    bool timing = __atomic_load_n(&a->timing, __ATOMIC_RELAXED) != 0;

    if (a->entry_stamp) {
        add_relaxed(&a->kernel, now - a->entry_stamp);
        a->entry_stamp = 0;
    }
    /* A zero reading would look unstamped; losing one unit is harmless. */
    if (timing || c->current == c->idle)
        __atomic_store_n(&a->exit_stamp, now ? now : 1, __ATOMIC_RELAXED);
}

void accounting_read(unsigned core, struct kstats_snapshot *s)
{
    const struct core *c = &cores[core];
    const struct core_account *a = &c->account;

    /* Acquire pairs with the release in accounting_enter_stamped(). */
    s->idle = __atomic_load_n(&a->idle, __ATOMIC_ACQUIRE);
    word_t exit_stamp = __atomic_load_n(&a->exit_stamp, __ATOMIC_RELAXED);
    s->now = arch_cycles();
    for (unsigned i = 0; i < ENTRY_CAUSES; i++)
        s->entries[i] = __atomic_load_n(&a->entries[i], __ATOMIC_RELAXED);
    s->kernel = __atomic_load_n(&a->kernel, __ATOMIC_RELAXED);
    s->user = __atomic_load_n(&a->user, __ATOMIC_RELAXED);
    s->ticks = __atomic_load_n(&a->ticks, __ATOMIC_RELAXED);
    /*
     * Another core idling now has not been charged for this period yet.
     * If it has been charged by the time we read the total, the acquire
     * above makes us see its stamp cleared, so no period is counted twice.
     */
    if (core != arch_core_id() && c->current == c->idle && exit_stamp && s->now > exit_stamp)
        s->idle += s->now - exit_stamp;
}
