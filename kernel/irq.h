/*
 * Device interrupts delivered to user level.  Each IRQ has a kernel slot
 * holding the notification cap it signals (set by IRQHandler
 * SetNotification).  A delivered IRQ stays masked until the handler's
 * holder calls Ack; the controller follows these decisions after the
 * kernel lock is released (irq.c: line_open).
 */
#ifndef KERNEL_IRQ_H
#define KERNEL_IRQ_H

#include "types.h"
#include "cap.h"

#define IRQ_MAX 256

enum irq_state {
    IRQ_INACTIVE = 0,
    IRQ_HANDLER_ISSUED,     /* a handler cap exists */
};

/* Handle a device IRQ on this core.  Caller holds the kernel lock (the read side suffices). */
void irq_deliver(unsigned irq);
/* The last handler cap for irq was deleted.  Caller holds the write side. */
void irq_handler_finalise(unsigned irq);
/* A notification is being destroyed: no IRQ may signal it any more.  Caller holds the write side. */
struct notification;
void irq_forget_notification(struct notification *n);
/* After the kernel lock is released (deferred work): make irq's line follow the kernel's latest decision. */
void irq_line_apply(unsigned irq);

#endif
