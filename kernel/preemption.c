/*
 * Preemption points, their restart count, and the debug hook that makes
 * them fire on demand.
 *
 * The state is per core and touched only by its own core ([o] in
 * kernel/core.h's terms): a preemption point runs on the core doing the
 * long operation, and the debug call arms the core it runs on.
 */
#include "preemption.h"
#include "core.h"
#include <arch.h>

struct preemption_state {
    word_t armed;       /* next preemption points that raise an interrupt first */
    word_t restarts;    /* system calls that stopped at a preemption point */
} CACHE_ALIGNED;

_Static_assert(sizeof(struct preemption_state) % CACHE_LINE_SIZE == 0,
               "each core's preemption state fills its own cache lines");

static struct preemption_state preemption[NCPUS];

/* Polls of the interrupt controller before an IPI to self must be visible as pending. */
#define SELF_IPI_POLLS 100000

/*
 * An IPI to this core is a real interrupt: it is pending in the interrupt
 * controller until the core leaves the kernel and takes it, exactly like a
 * device interrupt that arrives during the operation.  Delivery to oneself
 * is not instantaneous on every implementation, hence the bounded wait.
 */
static void raise_interrupt_here(void)
{
    arch_send_ipi(arch_core_id());
    for (unsigned i = 0; i < SELF_IPI_POLLS && !arch_interrupt_pending(); i++)
        ;
}

bool preemption_point(void)
{
    struct preemption_state *p = &preemption[arch_core_id()];

    /*
     * A call whose thread is gone (its deletion took the caller's own TCB)
     * has nobody to restart it: stopped here, its deletion would stay half
     * done, and the zombie left could sit in a cycle that no later deletion
     * reaches (docs/kernel.md, "Replacing a thread's caps").  It runs on to
     * the end.
     */
    if (unlikely(!my_core()->entry_thread))
        return false;

    if (unlikely(p->armed)) {
        p->armed--;
        raise_interrupt_here();
    }
    return arch_interrupt_pending();
}

void preemption_restart_counted(void)
{
    preemption[arch_core_id()].restarts++;
}

void preemption_debug_arm(word_t points, word_t *restarts, word_t *unused)
{
    struct preemption_state *p = &preemption[arch_core_id()];

    *restarts = p->restarts;
    *unused = p->armed;
    p->armed = points;
}
