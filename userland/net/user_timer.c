/* The user-level timer's ticks on a notification (user_timer.h). */
#include "user_timer.h"

cptr_t user_timer_attach(cptr_t notification, word_t badge)
{
    cptr_t handler = slot_alloc(), badged = slot_alloc();
    if (!handler || !badged || bootinfo->timer_irq == ~0UL)
        return 0;
    if (cnode_mint(ROOT_SLOT_CNODE, badged, ROOT_DEPTH, ROOT_SLOT_CNODE, notification, ROOT_DEPTH,
                   RIGHT_WRITE, badge) != E_OK ||
        irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, handler,
                        ROOT_DEPTH) != E_OK ||
        irq_handler_set_notification(handler, badged) != E_OK)
        return 0;
    return handler;
}
