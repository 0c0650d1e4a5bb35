/* Faults: each kind delivered to a fault endpoint and resumed by a reply; no handler: suspended. */
#include "test.h"

static volatile word_t fault_result;

static void run_illegal(void *arg)  { (void)arg; fault_result = arch_fault_illegal(); }
static void run_general(void *arg)  { (void)arg; fault_result = arch_fault_general(); }
static void run_divide(void *arg)   { (void)arg; fault_result = arch_fault_divide(); }
static void run_read(void *arg)     { fault_result = arch_fault_read((word_t)arg); }
static void run_write(void *arg)    { fault_result = arch_fault_write((word_t)arg); }
static void run_syscall(void *arg)  { fault_result = arch_fault_syscall((word_t)arg); }

/* Start fn(arg) with a fault endpoint; receive its fault message into *m. */
static struct thread *fault_start(thread_fn fn, void *arg, cptr_t ep, struct msg *m, word_t *st)
{
    fault_result = 0;
    /* At our priority, so that our yields while polling let it run. */
    struct thread *t = spawn(fn, arg, TEST_PRIO, 0, ep);
    if (!t)
        return NULL;
    *st = recv_timeout(ep, m, WAIT_MS);
    return t;
}

static void reply_skip(const char *resume)
{
    struct msg r = { .info = msginfo_new(0, 0, 0, 1), .mr = { (word_t)resume } };
    sys_reply(&r);
}

static void check_exception(thread_fn fn, word_t exc, const char *at, const char *resume)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m;
    word_t st;
    struct thread *t = fault_start(fn, NULL, ep, &m, &st);
    CHECK(t);
    CHECK_OK(st);
    CHECK_EQ(msginfo_label(m.info), FAULT_USER_EXCEPTION);
    CHECK_EQ(m.mr[0], (word_t)at);
    CHECK(m.mr[1] <= t->stack_top && m.mr[1] > t->stack_top - STACK_SIZE);
    CHECK_EQ(m.mr[2], exc);
    reply_skip(resume);
    CHECK(wait_eq(&fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}

TEST(fault_illegal_instruction)
{
    check_exception(run_illegal, ARCH_EXC_ILLEGAL, arch_fault_illegal_at, arch_fault_illegal_resume);
}

TEST(fault_general_protection)
{
    check_exception(run_general, ARCH_EXC_GENERAL, arch_fault_general_at, arch_fault_general_resume);
}

TEST(fault_divide_by_zero)
{
    check_exception(run_divide, ARCH_EXC_DIVIDE, arch_fault_divide_at, arch_fault_divide_resume);
}

#define UNMAPPED 0x6f000000UL

TEST(fault_vm_read_skip)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m;
    word_t st;
    CHECK(fault_start(run_read, (void *)(UNMAPPED + 0x18), ep, &m, &st));
    CHECK_OK(st);
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[0], (word_t)arch_fault_read_at);
    CHECK_EQ(m.mr[1], UNMAPPED + 0x18);
    CHECK_EQ(m.mr[2], 0);
    reply_skip(arch_fault_read_resume);
    CHECK(wait_eq(&fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}

TEST(fault_vm_map_and_retry)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m;
    word_t st;
    word_t addr = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK(fault_start(run_write, (void *)addr, ep, &m, &st));
    CHECK_OK(st);
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[1], addr);
    /* Map a frame there and resume where it faulted: the write now succeeds. */
    cptr_t f = obj_new(OBJ_FRAME, 0);
    CHECK(f);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, addr, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
    struct msg r = { .info = msginfo_new(0, 0, 0, 0) };
    sys_reply(&r);
    fault_result = 77;
    for (int i = 0; i < 100 && *(volatile word_t *)addr != 1; i++)
        sys_yield();
    CHECK_EQ(*(volatile word_t *)addr, 1);
}

TEST(fault_vm_write_read_only)
{
    cptr_t ep = ep_new(), f = obj_new(OBJ_FRAME, 0);
    CHECK(ep && f);
    word_t addr = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, addr, RIGHT_READ, VM_DEFAULT));
    CHECK_EQ(*(volatile word_t *)addr, 0);   /* readable */
    struct msg m;
    word_t st;
    CHECK(fault_start(run_write, (void *)addr, ep, &m, &st));
    CHECK_OK(st);
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[1], addr);
    reply_skip(arch_fault_write_resume);
    CHECK(wait_eq(&fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
    CHECK_EQ(*(volatile word_t *)addr, 0);
}

TEST(fault_vm_instruction_fetch)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct thread *t = spawn_unstarted(TEST_PRIO, 0, ep);
    CHECK(t);
    CHECK_OK(thread_restart_at(t, UNMAPPED + 0x40, t->stack_top, NULL, NULL));
    struct msg m;
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[0], UNMAPPED + 0x40);
    CHECK_EQ(m.mr[1], UNMAPPED + 0x40);
    CHECK_EQ(m.mr[2], 1);
}

TEST(fault_unknown_syscall)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m;
    word_t st;
    struct thread *t = fault_start(run_syscall, (void *)0x777, ep, &m, &st);
    CHECK(t);
    CHECK_OK(st);
    CHECK_EQ(msginfo_label(m.info), FAULT_UNKNOWN_SYSCALL);
    CHECK_EQ(m.mr[2], 0x777);
    word_t at = (word_t)arch_fault_syscall_at;
    CHECK(m.mr[0] == at || m.mr[0] == at + ARCH_SYSCALL_INSN_BYTES);
    test_note("reported ip %s the syscall instruction", m.mr[0] == at ? "at" : "after");
    reply_skip(arch_fault_syscall_resume);
    CHECK(wait_eq(&fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}

TEST(fault_badge_identifies_thread)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t b = mint(ep, RIGHTS_ALL, 0x5150);
    CHECK(b);
    struct msg m;
    word_t st;
    CHECK(fault_start(run_illegal, NULL, b, &m, &st));
    CHECK_OK(st);
    CHECK_EQ(m.badge, 0x5150);
    reply_skip(arch_fault_illegal_resume);
    CHECK(wait_eq(&fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}

TEST(fault_twice_same_thread)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m;
    word_t st;
    CHECK(fault_start(run_read, (void *)UNMAPPED, ep, &m, &st));
    CHECK_OK(st);
    /* Resume without fixing anything: the access faults again. */
    struct msg r = { .info = msginfo_new(0, 0, 0, 0) };
    sys_reply(&r);
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[1], UNMAPPED);
    reply_skip(arch_fault_read_resume);
    CHECK(wait_eq(&fault_result, ARCH_FAULT_SKIPPED, WAIT_MS));
}

static void check_suspended(struct thread *t, const char *at)
{
    for (int i = 0; i < 20; i++)
        sys_yield();
    CHECK_EQ(fault_result, 0);
    word_t regs[ARCH_USER_REGS];
    CHECK_OK(tcb_read_registers(t->tcb, 0, ARCH_USER_REGS, regs));
    CHECK_EQ(regs[ARCH_REG_IP], (word_t)at);
}

TEST(fault_no_handler_suspends)
{
    fault_result = 0;
    struct thread *t = spawn(run_illegal, NULL, TEST_PRIO + 1, 0, 0);
    CHECK(t);
    check_suspended(t, arch_fault_illegal_at);
}

TEST(fault_handler_not_an_endpoint)
{
    cptr_t n = ntfn_new();
    CHECK(n);
    fault_result = 0;
    struct thread *t = spawn(run_illegal, NULL, TEST_PRIO + 1, 0, n);
    CHECK(t);
    check_suspended(t, arch_fault_illegal_at);
}

TEST(fault_handler_deleted_while_blocked)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    fault_result = 0;
    struct thread *t = spawn(run_illegal, NULL, TEST_PRIO + 1, 0, ep);
    CHECK(t);
    /* It faulted and waits on the endpoint (nobody receives). Delete the endpoint. */
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, ep, ROOT_DEPTH));
    for (int i = 0; i < 20; i++)
        sys_yield();
    CHECK_EQ(fault_result, 0);
    word_t regs[ARCH_USER_REGS];
    CHECK_OK(tcb_read_registers(t->tcb, 0, ARCH_USER_REGS, regs));
    CHECK_EQ(regs[ARCH_REG_IP], (word_t)arch_fault_illegal_at);
}

static volatile word_t restarted;

static void mark_restarted(void *arg)
{
    (void)arg;
    restarted = 1;
}

TEST(fault_restart_by_write_registers)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m;
    word_t st;
    struct thread *t = fault_start(run_illegal, NULL, ep, &m, &st);
    CHECK(t);
    CHECK_OK(st);
    /* Instead of replying, restart the thread elsewhere: the pending fault is abandoned. */
    restarted = 0;
    CHECK_OK(tcb_suspend(t->tcb));
    CHECK_OK(thread_restart_at(t, (word_t)_thread_start, t->stack_top, mark_restarted, NULL));
    CHECK(wait_eq(&restarted, 1, WAIT_MS));
    /* Our reply now has no caller to go to. */
    struct msg r = { .info = msginfo_new(0, 0, 0, 0) };
    sys_reply(&r);
    CHECK_EQ(fault_result, 0);
}
