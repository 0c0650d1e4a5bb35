/*
 * Per-core state, idle threads, cross-core requests and deferred hardware
 * work (see core.h for the protocol).
 */
#include "core.h"
#include "irq.h"
#include "printf.h"
#include "sched.h"
#include "vspace.h"
#include <arch.h>
#include <cpu_relax.h>

struct core cores[NCPUS];
unsigned ncores_online = 1;

#define IDLE_STACK_SIZE 1024

static struct tcb idle_tcbs[NCPUS] __attribute__((aligned(64)));
static char idle_stacks[NCPUS][IDLE_STACK_SIZE] __attribute__((aligned(16)));

void core_init(unsigned core)
{
    struct core *c = &cores[core];
    struct tcb *idle = &idle_tcbs[core];

    tcb_init(idle);
    idle->state = TS_IDLE;
    idle->affinity = core;
    idle->priority = 0;
    tcb_set_name(idle, "idle");
    arch_context_init_idle(&idle->context, (word_t)&idle_stacks[core][IDLE_STACK_SIZE]);

    object_lock_init(&c->sched_lock);
    c->idle = idle;
    c->current = idle;
    c->entry_thread = NULL;
    /* The boot code runs on the kernel-only space. */
    c->loaded_asid = 0;
    c->loaded_vspace_paddr = asid_table[0].root_paddr;
    /* Release: pairs with core_wait_initialised(); every field above is set first. */
    __atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
}

/*
 * The port counts a secondary online once it answers, before it has run
 * core_init().  Until it has, its struct core is not set up, yet other
 * cores would queue threads on it, send it requests and read its current
 * thread and loaded space.  Under -icount the boot core can run the root
 * task for a long time before a secondary's turn comes, so the boot core
 * waits here before it starts scheduling.
 */
void core_wait_initialised(unsigned ncores)
{
    for (unsigned core = 1; core < ncores; core++) {
        /* Acquire: pairs with the release in core_init(). */
        while (!__atomic_load_n(&cores[core].online, __ATOMIC_ACQUIRE))
            cpu_relax();
    }
}

/*
 * Serve request `seq` of this core's mailbox (core_serve_mailbox() saw it
 * with acquire order).  It touches only this core's own fields and its
 * hardware.
 */
void core_serve_request(struct core *c, uint32_t seq)
{
    struct mailbox *m = &c->mailbox;

    switch (m->kind) {
    case REQ_LEAVE_TCB:
        if (c->current == m->tcb)
            c->current = c->idle;
        if (c->entry_thread == m->tcb) {
            /* The entry spinning for the lock belonged to it: re-run it later. */
            if (c->entry_is_syscall)
                arch_context_restart_syscall(&m->tcb->context);
            c->entry_thread = NULL;
        }
        break;
    case REQ_LEAVE_VSPACE:
        /* A load deferred by this entry is of the space recorded as
         * loaded: leaving that space loads the kernel-only one now, and
         * nothing is left to load at exit. */
        if (c->loaded_asid == m->asid) {
            c->loaded_asid = 0;
            c->loaded_vspace_paddr = asid_table[0].root_paddr;
            core_load_vspace(c);
            c->deferred.load_vspace = false;
        }
        break;
    case REQ_TLB_FLUSH:
        arch_tlb_flush_local(m->asid, m->vaddr, m->whole_space);
        break;
    case REQ_RELEASE_CONTEXT:
        arch_core_release_context(&m->tcb->context);
        break;
    default:
        break;
    }
    /* Release pairs with the requester's acquire load of ack: our changes are done. */
    __atomic_store_n(&m->ack, seq, __ATOMIC_RELEASE);
}

/*
 * Ask `target` to do something now and wait until it has.  The caller holds
 * the kernel lock exclusively, so no other core posts to the same mailbox.
 */
void core_request(unsigned target, enum core_request_kind kind, struct tcb *tcb,
                  unsigned asid, word_t vaddr, bool whole_space)
{
    struct mailbox *m = &cores[target].mailbox;

    kernel_lock_require_exclusive();
    m->kind = kind;
    m->tcb = tcb;
    m->asid = asid;
    m->vaddr = vaddr;
    m->whole_space = whole_space;
    /* Release: the arguments above are visible before the new seq. */
    uint32_t seq = __atomic_add_fetch(&m->seq, 1, __ATOMIC_RELEASE);

    if (target == arch_core_id()) {
        core_serve_mailbox();
        return;
    }
    arch_send_ipi(target);
    /* Acquire pairs with the target's release store of ack. */
    while (__atomic_load_n(&m->ack, __ATOMIC_ACQUIRE) != seq) {
        core_serve_mailbox();
        cpu_relax();
    }
}

void core_defer_ipi(unsigned target)
{
    /* Relaxed: the IPI itself, sent after our lock release, orders it. */
    __atomic_store_n(&cores[target].mailbox.reschedule, true, __ATOMIC_RELAXED);
    if (target != arch_core_id()) {
        struct deferred_work *d = &my_core()->deferred;
        coreset_add(&d->ipi, target);
        d->pending = true;
    }
}

void core_defer_irq(unsigned irq)
{
    struct deferred_work *d = &my_core()->deferred;

    if (d->nirq == DEFERRED_IRQS_MAX) {
        /* Cannot happen: one entry records at most a few IRQ operations. */
        panic("deferred IRQ record full");
    }
    d->irq[d->nirq++] = (uint16_t)irq;
    d->pending = true;
}

/* After kernel_lock_release(), from core_run_deferred_work(): the IRQ and IPI work of this entry. */
void core_do_deferred_work(struct deferred_work *d)
{
    d->pending = false;
    for (unsigned i = 0; i < d->nirq; i++)
        irq_line_apply(d->irq[i]);
    d->nirq = 0;
    for (unsigned w = 0; w < ARRAY_SIZE(d->ipi.bits); w++) {
        word_t bits = d->ipi.bits[w];
        d->ipi.bits[w] = 0;
        while (bits) {
            unsigned b = (unsigned)__builtin_ctzl(bits);
            bits &= bits - 1;
            arch_send_ipi(w * WORD_BITS + b);
        }
    }
}
