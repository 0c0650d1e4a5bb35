/*
 * The user-level timer (bootinfo->timer_irq, docs/userland.md) as ticks on
 * a notification: what drives lwIP's timers in the app `redis`.
 */
#ifndef NET_USER_TIMER_H
#define NET_USER_TIMER_H

#include <root.h>

/* The timer's IRQ handler, signalling `badge` on notification; 0 on failure.  Ack it after each tick. */
cptr_t user_timer_attach(cptr_t notification, word_t badge);

#endif
