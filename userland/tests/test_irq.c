/* IRQ control and handlers, with the port's user-level timer IRQ (bootinfo->timer_irq). */
#include "test.h"

/* Poll the notification until it has a word, for at most about `seconds` of the cycle counter. */
static word_t wait_timeout(cptr_t n, word_t *w, word_t seconds)
{
    uint64_t hz = bootinfo->cycle_hz ? bootinfo->cycle_hz : 1000000000ULL;
    uint64_t start = arch_cycles();
    while (arch_cycles() - start < seconds * hz) {
        word_t st = sys_poll(n, w);
        if (st != E_WOULD_BLOCK)
            return st;
        spin(1000);
    }
    return E_WOULD_BLOCK;
}

TEST(irq_control_get_errors)
{
    cptr_t s = slot_alloc();
    word_t st = irq_control_get(ROOT_SLOT_IRQ_CONTROL, 100000, ROOT_SLOT_CNODE, s, ROOT_DEPTH);
    CHECK(st == E_RANGE || st == E_INVALID_ARGUMENT);
    cptr_t ep = ep_new();
    CHECK(ep);
    CHECK_ST(irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, ep,
                             ROOT_DEPTH), E_DELETE_FIRST);
    CHECK_ST(irq_control_get(ROOT_SLOT_TCB, 1, ROOT_SLOT_CNODE, s, ROOT_DEPTH), E_ILLEGAL_OPERATION);
}

TEST(irq_handler_issued_once)
{
    CHECK(bootinfo->timer_irq != ~0UL);
    cptr_t h = slot_alloc(), h2 = slot_alloc();
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, h, ROOT_DEPTH));
    word_t st = irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, h2, ROOT_DEPTH);
    CHECK(st == E_REVOKE_FIRST || st == E_ILLEGAL_OPERATION || st == E_DELETE_FIRST);
    test_note("second Get: %s", status_name(st));
    /* After deleting the handler it can be had again. */
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, h, ROOT_DEPTH));
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, h2, ROOT_DEPTH));
}

TEST(irq_timer_delivery)
{
    CHECK(bootinfo->timer_irq != ~0UL);
    cptr_t h = slot_alloc();
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, h, ROOT_DEPTH));
    cptr_t n = ntfn_new();
    CHECK(n);
    cptr_t nb = mint(n, RIGHTS_ALL, 0x40);
    CHECK(nb);
    CHECK_OK(irq_handler_set_notification(h, nb));
    CHECK_OK(irq_handler_ack(h));
    /* Three ticks, each waited for and acknowledged; the note gives the time between them. */
    uint64_t first = 0;
    for (int i = 0; i < 3; i++) {
        word_t w = 0;
        CHECK_OK(wait_timeout(n, &w, 5));
        CHECK_EQ(w, 0x40);
        if (i == 0)
            first = arch_cycles();
        CHECK_OK(irq_handler_ack(h));
    }
    if (bootinfo->cycle_hz)
        test_note("2 ticks in %lu us", (unsigned long)((arch_cycles() - first) * 1000000 / bootinfo->cycle_hz));
    /* Without an Ack, at most one more signal arrives. */
    word_t w;
    wait_timeout(n, &w, 1);
    spin(2000000);
    for (int i = 0; i < 200; i++)
        sys_yield();
    CHECK_ST(sys_poll(n, &w), E_WOULD_BLOCK);
    CHECK_OK(irq_handler_clear(h));
    CHECK_OK(irq_handler_ack(h));
}

TEST(irq_handler_wrong_cap)
{
    cptr_t h = slot_alloc();
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, h, ROOT_DEPTH));
    cptr_t ep = ep_new();
    CHECK(ep);
    CHECK_ST(irq_handler_set_notification(h, ep), E_INVALID_CAPABILITY);
    CHECK_ST(invoke(h, TCB_SUSPEND, 0, NULL, 0, NULL, NULL), E_ILLEGAL_OPERATION);
}
