/* TCB invocations. */
#include "test.h"

static volatile word_t counter;

static void count_forever(void *arg)
{
    (void)arg;
    for (;;) {
        counter++;
        sys_yield();
    }
}

static void set_flag(void *arg)
{
    *(volatile word_t *)arg = 1;
}

TEST(tcb_thread_runs)
{
    static volatile word_t flag;
    flag = 0;
    CHECK(spawn(set_flag, (void *)&flag, TEST_PRIO, 0, 0));
    CHECK(wait_eq(&flag, 1, WAIT_MS));
}

TEST(tcb_suspend_resume)
{
    counter = 0;
    struct thread *t = spawn(count_forever, NULL, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_ge(&counter, 3, WAIT_MS));
    CHECK_OK(tcb_suspend(t->tcb));
    word_t c = counter;
    for (int i = 0; i < 50; i++)
        sys_yield();
    CHECK_EQ(counter, c);
    CHECK_OK(tcb_resume(t->tcb));
    CHECK(wait_ge(&counter, c + 3, WAIT_MS));
}

TEST(tcb_read_registers)
{
    counter = 0;
    struct thread *t = spawn(count_forever, NULL, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_ge(&counter, 2, WAIT_MS));
    word_t regs[ARCH_USER_REGS];
    CHECK_OK(tcb_read_registers(t->tcb, 1, ARCH_USER_REGS, regs));
    /* Its stack pointer is inside its stack; its ip inside the image. */
    CHECK(regs[ARCH_REG_SP] <= t->stack_top && regs[ARCH_REG_SP] > t->stack_top - STACK_SIZE);
    CHECK(regs[ARCH_REG_IP] >= 0x400000 && regs[ARCH_REG_IP] < 0x10000000);
    word_t c = counter;
    spin(100000);
    for (int i = 0; i < 20; i++)
        sys_yield();
    CHECK_EQ(counter, c);   /* suspended by the read */
}

TEST(tcb_write_registers_restart)
{
    static volatile word_t flag;
    flag = 0;
    counter = 0;
    struct thread *t = spawn(count_forever, NULL, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_ge(&counter, 2, WAIT_MS));
    /* Point it elsewhere: it starts over in set_flag. */
    CHECK_OK(tcb_suspend(t->tcb));
    CHECK_OK(thread_restart_at(t, (word_t)_thread_start, t->stack_top, set_flag, (void *)&flag));
    CHECK(wait_eq(&flag, 1, WAIT_MS));
}

TEST(tcb_write_registers_count)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    word_t regs[ARCH_USER_REGS] = { 0 };
    /* Fewer registers than the set is allowed; the rest stay. */
    CHECK_OK(tcb_write_registers(tcb, 0, 2, regs));
    const word_t args[] = { 0 };
    CHECK_ST(invoke(tcb, TCB_WRITE_REGISTERS, 1, args, 0, NULL, NULL), E_TRUNCATED_MESSAGE);
    /* A count beyond the register set, and one beyond the message. */
    const word_t big[] = { 0, ARCH_USER_REGS + 1 };
    CHECK_ST(invoke(tcb, TCB_WRITE_REGISTERS, 2, big, 0, NULL, NULL), E_RANGE);
    const word_t shortmsg[] = { 0, 5, 1, 2 };
    CHECK_ST(invoke(tcb, TCB_WRITE_REGISTERS, 4, shortmsg, 0, NULL, NULL), E_TRUNCATED_MESSAGE);
    CHECK_ST(tcb_read_registers(tcb, 0, ARCH_USER_REGS + 1, regs), E_RANGE);
    /* Not on oneself. */
    CHECK_ST(tcb_write_registers(ROOT_SLOT_TCB, 0, 2, regs), E_ILLEGAL_OPERATION);
    CHECK_ST(tcb_read_registers(ROOT_SLOT_TCB, 0, 2, regs), E_ILLEGAL_OPERATION);
}

TEST(tcb_copy_registers)
{
    counter = 0;
    struct thread *t = spawn(count_forever, NULL, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_ge(&counter, 2, WAIT_MS));
    CHECK_OK(tcb_suspend(t->tcb));
    struct thread *u = spawn_unstarted(TEST_PRIO, 0, 0);
    CHECK(u);
    CHECK_OK(tcb_copy_registers(u->tcb, t->tcb, 0, 0));
    word_t a[ARCH_USER_REGS], b[ARCH_USER_REGS];
    CHECK_OK(tcb_read_registers(t->tcb, 0, ARCH_USER_REGS, a));
    CHECK_OK(tcb_read_registers(u->tcb, 0, ARCH_USER_REGS, b));
    CHECK_EQ(a[ARCH_REG_IP], b[ARCH_REG_IP]);
    CHECK_EQ(a[ARCH_REG_SP], b[ARCH_REG_SP]);
    CHECK_ST(tcb_copy_registers(u->tcb, ROOT_SLOT_CNODE, 0, 0), E_INVALID_CAPABILITY);
}

TEST(tcb_set_priority_range)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    CHECK_OK(tcb_set_priority(tcb, 0));
    CHECK_OK(tcb_set_priority(tcb, 150));
    CHECK_ST(tcb_set_priority(tcb, 256), E_RANGE);
    /* Without the authority, the caller's own maximum (TEST_PRIO) bounds what it may give. */
    cptr_t saved = prio_authority;
    prio_authority = 0;
    word_t above = tcb_set_priority(tcb, TEST_PRIO + 1), at = tcb_set_priority(tcb, TEST_PRIO);
    prio_authority = saved;
    CHECK_EQ(above, E_RANGE);
    CHECK_EQ(at, E_OK);
    /* A TCB as authority gives its own maximum. */
    const word_t args[] = { 200 };
    const cptr_t caps[] = { ROOT_SLOT_CNODE };
    CHECK_ST(invoke(tcb, TCB_SET_PRIORITY, 1, args, 1, caps, NULL), E_INVALID_CAPABILITY);
}

TEST(tcb_set_affinity_range)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    CHECK_OK(tcb_set_affinity(tcb, ncores() - 1));
    word_t st = tcb_set_affinity(tcb, ncores());
    CHECK(st == E_RANGE || st == E_INVALID_ARGUMENT);
    st = tcb_set_affinity(tcb, 1000);
    CHECK(st == E_RANGE || st == E_INVALID_ARGUMENT);
}

TEST(tcb_set_ipc_buffer_checks)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0), f = obj_new(OBJ_FRAME, 0), ep = ep_new();
    CHECK(tcb && f && ep);
    CHECK_OK(tcb_set_ipc_buffer(tcb, 0x50000000, f));
    CHECK_OK(tcb_set_ipc_buffer(tcb, 0x50000008, f));
    CHECK_ST(tcb_set_ipc_buffer(tcb, 0x50000004, f), E_ALIGNMENT);
    /* The buffer must fit inside its frame. */
    CHECK_ST(tcb_set_ipc_buffer(tcb, 0x50000ff8, f), E_INVALID_ARGUMENT);
    /* A read-only frame cap cannot hold an IPC buffer. */
    cptr_t ro = copy_cap(f, RIGHT_READ);
    CHECK(ro);
    CHECK_ST(tcb_set_ipc_buffer(tcb, 0x50000000, ro), E_INVALID_CAPABILITY);
    CHECK_ST(tcb_set_ipc_buffer(tcb, 0x50000000, ep), E_INVALID_CAPABILITY);
}

TEST(tcb_configure_checks)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0), f = obj_new(OBJ_FRAME, 0), ep = ep_new();
    CHECK(tcb && f && ep);
    CHECK_OK(tcb_configure(tcb, 0, ROOT_SLOT_CNODE, 0, ROOT_SLOT_VSPACE, 0x50000000, f));
    CHECK_ST(tcb_configure(tcb, 0, ep, 0, ROOT_SLOT_VSPACE, 0x50000000, f), E_INVALID_CAPABILITY);
    CHECK_ST(tcb_configure(tcb, 0, ROOT_SLOT_CNODE, 0, ep, 0x50000000, f), E_INVALID_CAPABILITY);
    CHECK_ST(tcb_configure(tcb, 0, ROOT_SLOT_CNODE, 0, ROOT_SLOT_VSPACE, 0x50000003, f), E_ALIGNMENT);
    /* Guard data that does not fit the word, and a guard value wider than its length. */
    CHECK_ST(tcb_configure(tcb, 0, ROOT_SLOT_CNODE, 63, ROOT_SLOT_VSPACE, 0x50000000, f), E_INVALID_ARGUMENT);
    CHECK_EQ(invoke_last_detail(0), 1);
    word_t length = WORD_BITS - ROOT_CNODE_BITS;
    CHECK_ST(tcb_configure(tcb, 0, ROOT_SLOT_CNODE, guard_data_new(length, (word_t)1 << length), ROOT_SLOT_VSPACE,
                           0x50000000, f), E_INVALID_ARGUMENT);
    CHECK_OK(tcb_configure(tcb, 0, ROOT_SLOT_CNODE, guard_data_new(length, 0), ROOT_SLOT_VSPACE,
                           0x50000000, f));
}

TEST(tcb_set_space)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0), vs = obj_new(OBJ_VSPACE, 0), ep = ep_new();
    CHECK(tcb && vs && ep);
    CHECK_OK(tcb_set_space(tcb, ep, ROOT_SLOT_CNODE, 0, vs));
    CHECK_ST(tcb_set_space(tcb, ep, vs, 0, vs), E_INVALID_CAPABILITY);
}

TEST(tcb_set_name)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    CHECK_OK(tcb_set_name(tcb, "test-thread"));
    CHECK_OK(tcb_set_name(tcb, "a-name-longer-than-thirty-two-characters"));
}

TEST(tcb_invocation_unknown_label)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    CHECK_ST(invoke(tcb, FRAME_MAP, 0, NULL, 0, NULL, NULL), E_ILLEGAL_OPERATION);
    CHECK_ST(invoke(tcb, INV_COUNT + 5, 0, NULL, 0, NULL, NULL), E_ILLEGAL_OPERATION);
}

TEST(tcb_resume_unconfigured)
{
    /* A TCB without a CSpace must not run: Resume refuses it. */
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    CHECK_ST(tcb_resume(tcb), E_ILLEGAL_OPERATION);
    /* Suspending a thread that never ran is harmless. */
    CHECK_OK(tcb_suspend(tcb));
}

TEST(tcb_delete_running_thread)
{
    counter = 0;
    struct thread *t = spawn(count_forever, NULL, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_ge(&counter, 2, WAIT_MS));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, t->tcb, ROOT_DEPTH));
    word_t c = counter;
    for (int i = 0; i < 50; i++)
        sys_yield();
    CHECK_EQ(counter, c);
}

TEST(tcb_exit_suspends_self)
{
    static volatile word_t flag;
    flag = 0;
    struct thread *t = spawn(set_flag, (void *)&flag, TEST_PRIO, 0, 0);
    CHECK(t);
    CHECK(wait_eq(&flag, 1, WAIT_MS));
    for (int i = 0; i < 5; i++)
        sys_yield();
    /* It suspended itself in thread_exit: its ip stays put. */
    word_t a[ARCH_USER_REGS], b[ARCH_USER_REGS];
    CHECK_OK(tcb_read_registers(t->tcb, 0, ARCH_USER_REGS, a));
    for (int i = 0; i < 5; i++)
        sys_yield();
    CHECK_OK(tcb_read_registers(t->tcb, 0, ARCH_USER_REGS, b));
    CHECK_EQ(a[ARCH_REG_IP], b[ARCH_REG_IP]);
}
