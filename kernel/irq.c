/*
 * IRQ control and IRQ handlers.
 *
 *   IRQControl Get       MR0 irq, MR1 dest index, MR2 dest depth; extra 0 the dest CSpace root
 *   IRQHandler SetNotification  extra 0 a notification cap (with write right)
 *   IRQHandler Ack       unmask the IRQ (it was masked when delivered)
 *   IRQHandler Clear     forget the notification
 *
 * The table is protected by the write side under LOCK=fine, except that
 * irq_deliver reads it on the read side (entries only change on the write
 * side; line_open, below, is not in the table).
 */
#include "irq.h"
#include "core.h"
#include "cspace.h"
#include "invocation.h"
#include "notification.h"
#include "printf.h"
#include <arch.h>

struct irq_entry {
    uint8_t state;                  /* enum irq_state */
    struct notification *ntfn;
    word_t badge;
};

static struct irq_entry irq_table[IRQ_MAX];

/*
 * Whether each line should be open (unmasked): the kernel's latest decision,
 * made under the kernel lock (a delivery decides on the read side, which is
 * why it is an atomic).  The controller follows it only after the lock is
 * released, and two cores may apply one line's decisions in the other order
 * than they made them: the core that delivered an interrupt may still be on
 * its way out of the kernel when the driver it woke on another core has
 * cleared the device and called Ack.  Had each core applied its own decision,
 * the delivery's mask would land after the Ack's unmask and the line would
 * stay masked for good.  So the deferred work carries only the line's number
 * and reads the decision when it applies it, under the port's own lock
 * (arch_irq_follow()): whichever core applies last, the line ends as the
 * latest decision says.
 */
static bool line_open[IRQ_MAX];

static void line_decide(unsigned irq, bool open)
{
    __atomic_store_n(&line_open[irq], open, __ATOMIC_RELAXED);
    core_defer_irq(irq);
}

void irq_line_apply(unsigned irq)
{
    arch_irq_follow(irq, &line_open[irq]);
}

void irq_deliver(unsigned irq)
{
    if (irq >= IRQ_MAX)
        return;
    struct irq_entry *e = &irq_table[irq];
    /* The entry code masked it; it stays so until the user handler acknowledges it. */
    line_decide(irq, false);
    if (e->state == IRQ_HANDLER_ISSUED && e->ntfn)
        notification_signal(e->ntfn, e->badge);
}

void irq_handler_finalise(unsigned irq)
{
    if (irq >= IRQ_MAX)
        return;
    irq_table[irq].state = IRQ_INACTIVE;
    irq_table[irq].ntfn = NULL;
    line_decide(irq, false);
}

void irq_forget_notification(struct notification *n)
{
    for (unsigned i = 0; i < IRQ_MAX; i++) {
        if (irq_table[i].ntfn == n)
            irq_table[i].ntfn = NULL;
    }
}

/*
 * ---- Invocations.  The decode_* of each invocation makes every check
 * before any change, then makes the change, which cannot fail (through
 * its invoke_* where it has arguments to carry).
 */

/* An IRQ invocation, once decoded. */
struct irq_args {
    unsigned irq;
    struct cte *dest;               /* IRQControl Get: where the handler cap goes */
    struct notification *ntfn;      /* SetNotification */
    word_t badge;
};

static void invoke_irq_control_get(struct invocation *inv, const struct irq_args *a)
{
    struct cap c = cap_null();

    c.type = CAP_IRQ_HANDLER;
    c.irq = a->irq;
    c.rights = RIGHTS_ALL;
    irq_table[a->irq].state = IRQ_HANDLER_ISSUED;
    irq_table[a->irq].ntfn = NULL;
    cte_insert_child(inv->slot, a->dest, c);
}

enum status decode_irq_control_invocation(struct invocation *inv)
{
    struct irq_args a;

    if (inv->label != IRQ_CONTROL_GET)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (inv->length < 3 || inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    word_t irq = inv_mr(inv, 0);
    if (irq >= arch_irq_count() || irq >= IRQ_MAX)
        return inv_error(inv, E_RANGE, 0, MIN(arch_irq_count(), IRQ_MAX) - 1);
    if (arch_irq_reserved((unsigned)irq))
        return inv_error(inv, E_INVALID_ARGUMENT, 0, 0);
    if (irq_table[irq].state != IRQ_INACTIVE)
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    if (inv->extra[0]->cap.type != CAP_CNODE)
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    struct lookup_result r = cspace_lookup_slot(&inv->extra[0]->cap, inv_mr(inv, 1),
                                                (unsigned)inv_mr(inv, 2));
    if (r.failure)
        return inv_error(inv, E_FAILED_LOOKUP, r.failure, 1);
    if (!cap_is_null(&r.slot->cap))
        return E_DELETE_FIRST;
    a.irq = (unsigned)irq;
    a.dest = r.slot;
    invoke_irq_control_get(inv, &a);
    return E_OK;
}

static void invoke_irq_set_notification(const struct irq_args *a)
{
    irq_table[a->irq].ntfn = a->ntfn;
    irq_table[a->irq].badge = a->badge;
    line_decide(a->irq, true);
}

static enum status decode_irq_set_notification(struct invocation *inv, struct irq_args *a)
{
    if (inv->nextra < 1)
        return E_TRUNCATED_MESSAGE;
    const struct cap *n = &inv->extra[0]->cap;
    if (n->type != CAP_NOTIFICATION || !(n->rights & RIGHT_WRITE))
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    a->ntfn = n->obj;
    a->badge = n->badge;
    invoke_irq_set_notification(a);
    return E_OK;
}

enum status decode_irq_handler_invocation(struct invocation *inv)
{
    struct irq_args a = { .irq = (unsigned)inv->cap.irq };

    switch (inv->label) {
    case IRQ_HANDLER_ACK:
        line_decide(a.irq, true);
        return E_OK;
    case IRQ_HANDLER_SET_NOTIFICATION:
        return decode_irq_set_notification(inv, &a);
    case IRQ_HANDLER_CLEAR:
        irq_table[a.irq].ntfn = NULL;
        return E_OK;
    default:
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    }
}
