/* Notifications: badges OR, Wait, Poll, bound notifications. */
#include "test.h"

TEST(ntfn_signal_poll)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    word_t w = 123;
    CHECK_ST(sys_poll(n, &w), E_WOULD_BLOCK);
    cptr_t b = mint(n, RIGHTS_ALL, 0x4);
    CHECK(b);
    CHECK_OK(sys_signal(b));
    CHECK_OK(sys_poll(n, &w));
    CHECK_EQ(w, 0x4);
    CHECK_ST(sys_poll(n, &w), E_WOULD_BLOCK);
}

TEST(ntfn_badges_or)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    cptr_t a = mint(n, RIGHTS_ALL, 0x1), b = mint(n, RIGHTS_ALL, 0x10), c = mint(n, RIGHTS_ALL, 0x100);
    CHECK(a && b && c);
    CHECK_OK(sys_signal(a));
    CHECK_OK(sys_signal(b));
    CHECK_OK(sys_signal(b));
    CHECK_OK(sys_signal(c));
    word_t w;
    CHECK_OK(sys_wait(n, &w));   /* pending: returns at once */
    CHECK_EQ(w, 0x111);
}

static volatile word_t waited, wait_word;

static void waiter(void *arg)
{
    word_t w = 0;
    if (sys_wait((cptr_t)arg, &w) == E_OK) {
        wait_word = w;
        waited++;
    }
}

TEST(ntfn_wait_blocks_until_signal)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    cptr_t b = mint(n, RIGHTS_ALL, 0x20);
    waited = wait_word = 0;
    CHECK(spawn(waiter, (void *)n, TEST_PRIO + 1, 0, 0));
    CHECK_EQ(waited, 0);
    CHECK_OK(sys_signal(b));
    CHECK(wait_eq(&waited, 1, WAIT_MS));
    CHECK_EQ(wait_word, 0x20);
}

TEST(ntfn_several_waiters)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    cptr_t b = mint(n, RIGHTS_ALL, 1);
    waited = 0;
    for (int i = 0; i < 3; i++)
        CHECK(spawn(waiter, (void *)n, TEST_PRIO + 1, 0, 0));
    for (word_t i = 1; i <= 3; i++) {
        CHECK_OK(sys_signal(b));
        CHECK(wait_eq(&waited, i, WAIT_MS));   /* one signal wakes one waiter */
    }
}

TEST(ntfn_signal_needs_write)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    cptr_t ro = mint(n, RIGHT_READ, 0);
    CHECK(ro);
    CHECK_ST(sys_signal(ro), E_INVALID_CAPABILITY);
    cptr_t wo = mint(n, RIGHT_WRITE, 1);
    CHECK(wo);
    CHECK_ST(sys_poll(wo, NULL), E_INVALID_CAPABILITY);
}

struct bound {
    cptr_t ep;
    volatile word_t got, badge, label;
};

static void bound_receiver(void *arg)
{
    struct bound *b = arg;
    struct msg m = { 0 };
    if (sys_recv(b->ep, &m) == E_OK) {
        b->badge = m.badge;
        b->label = msginfo_label(m.info);
        b->got = 1;
    }
}

TEST(ntfn_bound_delivers_during_recv)
{
    static struct bound b;
    memset((void *)&b, 0, sizeof(b));
    b.ep = ep_new();
    cptr_t n = ntfn_new();
    CHECK(b.ep && n);
    struct thread *t = spawn_unstarted(TEST_PRIO + 1, 0, 0);
    CHECK(t);
    CHECK_OK(tcb_bind_notification(t->tcb, n));
    CHECK_OK(thread_start(t, bound_receiver, &b));
    CHECK_EQ(b.got, 0);
    cptr_t nb = mint(n, RIGHTS_ALL, 0x8);
    CHECK_OK(sys_signal(nb));
    CHECK(wait_eq(&b.got, 1, WAIT_MS));
    CHECK_EQ(b.badge, 0x8);
}

TEST(ntfn_bind_twice)
{
    cptr_t n = ntfn_new(), n2 = ntfn_new();
    cptr_t tcb = obj_new(OBJ_TCB, 0), tcb2 = obj_new(OBJ_TCB, 0);
    CHECK(n && n2 && tcb && tcb2);
    CHECK_OK(tcb_bind_notification(tcb, n));
    CHECK_ST(tcb_bind_notification(tcb, n2), E_ILLEGAL_OPERATION);    /* TCB already bound */
    CHECK_ST(tcb_bind_notification(tcb2, n), E_ILLEGAL_OPERATION);    /* notification already bound */
    CHECK_OK(tcb_unbind_notification(tcb));
    CHECK_ST(tcb_unbind_notification(tcb), E_ILLEGAL_OPERATION);
    CHECK_OK(tcb_bind_notification(tcb2, n));
}

TEST(ntfn_bind_wrong_type)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0), ep = ep_new();
    CHECK(tcb && ep);
    CHECK_ST(tcb_bind_notification(tcb, ep), E_INVALID_CAPABILITY);
}

TEST(ntfn_delete_wakes_waiter)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    waited = 0;
    struct thread *t = spawn(waiter, (void *)n, TEST_PRIO + 1, 0, 0);
    CHECK(t);
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, n, ROOT_DEPTH));
    /* The waiter is no longer blocked on a dead object: it must not be woken as if signalled. */
    spin(1000);
    CHECK_EQ(waited, 0);
    word_t regs[ARCH_USER_REGS];
    CHECK_OK(tcb_read_registers(t->tcb, 1, ARCH_USER_REGS, regs));
}

TEST(ntfn_signal_unbadged)
{
    /*
     * A signal through a cap with badge 0 is still a signal: the notification
     * becomes active with an empty word, and the next Poll consumes it.
     */
    cptr_t n = ntfn_new();
    CHECK(n);
    CHECK_OK(sys_signal(n));
    CHECK_OK(sys_debug_check());
    word_t w = 99;
    word_t st = sys_poll(n, &w);
    CHECK(st == E_OK && w == 0);
    CHECK(sys_poll(n, &w) == E_WOULD_BLOCK);
    CHECK_OK(sys_debug_check());
}
