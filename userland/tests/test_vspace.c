/* Address spaces: frames, page tables, rights and isolation. */
#include "test.h"

#define RW (RIGHT_READ | RIGHT_WRITE)

TEST(frame_map_unmap)
{
    cptr_t f = obj_new(OBJ_FRAME, 0);
    CHECK(f);
    word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT));
    volatile word_t *p = (volatile word_t *)v;
    CHECK_EQ(p[0], 0);      /* fresh frames are zero */
    p[0] = 0xabcdef;
    p[511] = 42;
    CHECK_EQ(p[0], 0xabcdef);
    CHECK_OK(frame_unmap(f));
    /* Map it again elsewhere: the contents stayed with the frame. */
    word_t v2 = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v2, RW, VM_DEFAULT));
    CHECK_EQ(((volatile word_t *)v2)[511], 42);
}

TEST(frame_get_address)
{
    cptr_t f = obj_new(OBJ_FRAME, 0), g = obj_new(OBJ_FRAME, 0);
    CHECK(f && g);
    word_t a, b;
    CHECK_OK(frame_get_address(f, &a));
    CHECK_OK(frame_get_address(g, &b));
    CHECK(a != b);
    CHECK_EQ(a & (PAGE_SIZE - 1), 0);
    cptr_t c = copy_cap(f, RIGHTS_ALL);
    word_t a2;
    CHECK_OK(frame_get_address(c, &a2));
    CHECK_EQ(a, a2);
    CHECK_ST(frame_get_address(ROOT_SLOT_TCB, &a2), E_ILLEGAL_OPERATION);
}

TEST(frame_map_errors)
{
    cptr_t f = obj_new(OBJ_FRAME, 0), g = obj_new(OBJ_FRAME, 0), ep = ep_new();
    CHECK(f && g && ep);
    word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT));
    /* Slot taken. */
    CHECK_ST(frame_map(g, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT), E_DELETE_FIRST);
    /* Misaligned. */
    CHECK_ST(frame_map(g, ROOT_SLOT_VSPACE, v + 0x10, RW, VM_DEFAULT), E_ALIGNMENT);
    /* Kernel half. */
    word_t st = frame_map(g, ROOT_SLOT_VSPACE, ARCH_KERNEL_VADDR, RW, VM_DEFAULT);
    CHECK(st == E_INVALID_ARGUMENT || st == E_RANGE);
    /* Not a VSpace. */
    CHECK_ST(frame_map(g, ep, v + PAGE_SIZE, RW, VM_DEFAULT), E_INVALID_CAPABILITY);
    /* Already mapped cap. */
    word_t v2 = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    st = map_frame(f, ROOT_SLOT_VSPACE, v2, RW, VM_DEFAULT);
    CHECK(st == E_ILLEGAL_OPERATION || st == E_DELETE_FIRST);
    /* Unmapping an unmapped frame is harmless. */
    CHECK_OK(frame_unmap(g));
    CHECK_ST(frame_map(g, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT), E_DELETE_FIRST);
}

TEST(frame_shared_between_addresses)
{
    cptr_t f = obj_new(OBJ_FRAME, 0);
    CHECK(f);
    cptr_t c = copy_cap(f, RIGHTS_ALL);
    CHECK(c);
    word_t v1 = vaddr_alloc(PAGE_SIZE, PAGE_SIZE), v2 = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v1, RW, VM_DEFAULT));
    CHECK_OK(map_frame(c, ROOT_SLOT_VSPACE, v2, RIGHT_READ, VM_DEFAULT));
    *(volatile word_t *)v1 = 0x5eed;
    CHECK_EQ(*(volatile word_t *)v2, 0x5eed);
}

TEST(frame_rights_limit_mapping)
{
    /* A read-only frame cap cannot be mapped writable: the mapping is read-only or refused. */
    cptr_t f = obj_new(OBJ_FRAME, 0);
    CHECK(f);
    cptr_t ro = copy_cap(f, RIGHT_READ);
    CHECK(ro);
    word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    word_t st = map_frame(ro, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT);
    if (st != E_OK) {
        test_note("refused: %s", status_name(st));
        return;
    }
    cptr_t ep = ep_new();
    CHECK(ep);
    /* A thread writing it faults. */
    struct thread *t = spawn_unstarted(TEST_PRIO, 0, ep);
    CHECK(t);
    word_t regs[ARCH_USER_REGS] = { 0 };
    regs[ARCH_REG_IP] = (word_t)arch_fault_write;
    regs[ARCH_REG_SP] = t->stack_top - 64;
    regs[ARCH_REG_ARG0] = v;
    regs[ARCH_REG_FLAGS] = ARCH_INITIAL_FLAGS;
    CHECK_OK(tcb_write_registers(t->tcb, 1, ARCH_USER_REGS, regs));
    struct msg m;
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[1], v);
}

TEST(frame_delete_unmaps)
{
    cptr_t f = obj_new(OBJ_FRAME, 0), ep = ep_new();
    CHECK(f && ep);
    word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT));
    *(volatile word_t *)v = 1;
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, f, ROOT_DEPTH));
    struct thread *t = spawn_unstarted(TEST_PRIO, 0, ep);
    CHECK(t);
    word_t regs[ARCH_USER_REGS] = { 0 };
    regs[ARCH_REG_IP] = (word_t)arch_fault_read;
    regs[ARCH_REG_SP] = t->stack_top - 64;
    regs[ARCH_REG_ARG0] = v;
    regs[ARCH_REG_FLAGS] = ARCH_INITIAL_FLAGS;
    CHECK_OK(tcb_write_registers(t->tcb, 1, ARCH_USER_REGS, regs));
    struct msg m;
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[1], v);
}

TEST(page_table_map_unmap)
{
    /* Far from anything else, so every level below the root is missing. */
    word_t v = ARCH_FAR_VADDR;
    cptr_t f = obj_new(OBJ_FRAME, 0);
    CHECK(f);
    CHECK_ST(frame_map(f, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT), E_FAILED_LOOKUP);
    cptr_t pts[4];
    int n = 0;
    word_t st;
    while ((st = frame_map(f, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT)) == E_FAILED_LOOKUP && n < 4) {
        pts[n] = obj_new(OBJ_PAGE_TABLE, 0);
        CHECK(pts[n]);
        CHECK_OK(page_table_map(pts[n], ROOT_SLOT_VSPACE, v, VM_DEFAULT));
        n++;
    }
    CHECK_OK(st);
    test_note("%d page tables installed", n);
    CHECK(n >= 1);
    *(volatile word_t *)v = 3;
    /* A page table already there: mapping another one at the same place is refused. */
    cptr_t extra = obj_new(OBJ_PAGE_TABLE, 0);
    CHECK(extra);
    st = page_table_map(extra, ROOT_SLOT_VSPACE, v, VM_DEFAULT);
    CHECK(st == E_DELETE_FIRST || st == E_ILLEGAL_OPERATION);
    /* Mapping a mapped table again is refused. */
    st = page_table_map(pts[n - 1], ROOT_SLOT_VSPACE, ARCH_FAR_VADDR_2, VM_DEFAULT);
    CHECK(st == E_ILLEGAL_OPERATION || st == E_DELETE_FIRST);
    /* Unmap the lowest table: the frame's mapping goes with it and the frame can map again. */
    CHECK_OK(page_table_unmap(pts[n - 1]));
    CHECK_OK(frame_unmap(f));
    CHECK_ST(frame_map(f, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT), E_FAILED_LOOKUP);
}

TEST(page_table_map_errors)
{
    cptr_t pt = obj_new(OBJ_PAGE_TABLE, 0), ep = ep_new();
    CHECK(pt && ep);
    CHECK_ST(page_table_map(pt, ep, ARCH_FAR_VADDR, VM_DEFAULT), E_INVALID_CAPABILITY);
    word_t st = page_table_map(pt, ROOT_SLOT_VSPACE, ARCH_KERNEL_VADDR + ARCH_LARGE_PAGE_SIZE, VM_DEFAULT);
    CHECK(st == E_INVALID_ARGUMENT || st == E_RANGE);
    CHECK_ST(invoke(pt, FRAME_MAP, 0, NULL, 0, NULL, NULL), E_ILLEGAL_OPERATION);
}

TEST(large_frame_map)
{
    cptr_t lf = obj_new(OBJ_LARGE_FRAME, 0);
    CHECK(lf);
    word_t v = vaddr_alloc(ARCH_LARGE_PAGE_SIZE, ARCH_LARGE_PAGE_SIZE);
    vaddr_alloc(ARCH_LARGE_PAGE_SIZE, PAGE_SIZE);
    CHECK_ST(frame_map(lf, ROOT_SLOT_VSPACE, v + PAGE_SIZE, RW, VM_DEFAULT), E_ALIGNMENT);
    CHECK_OK(map_frame(lf, ROOT_SLOT_VSPACE, v, RW, VM_DEFAULT));
    volatile word_t *p = (volatile word_t *)v;
    p[0] = 1;
    p[ARCH_LARGE_PAGE_SIZE / sizeof(word_t) - 1] = 2;
    CHECK_EQ(p[0] + p[ARCH_LARGE_PAGE_SIZE / sizeof(word_t) - 1], 3);
}

/* ---- separate address spaces */

static volatile word_t space_flag;

static void set_space_flag(void *arg)
{
    space_flag = (word_t)arg;
}

TEST(vspace_new_space_runs_image)
{
    space_flag = 0;
    struct thread t;
    struct thread_opts o = { .prio = TEST_PRIO + 1 };
    CHECK_OK(thread_create_space(&t, &o));
    CHECK(t.vspace != ROOT_SLOT_VSPACE);
    CHECK_OK(thread_start(&t, set_space_flag, (void *)0x1234));
    /* The image frames are shared, so its write to .bss is seen here. */
    CHECK(wait_eq(&space_flag, 0x1234, WAIT_MS));
}

static void read_addr(void *arg)
{
    space_flag = arch_fault_read((word_t)arg);
}

TEST(vspace_isolation)
{
    /* A frame mapped only in the root task's space faults in the other space. */
    cptr_t f;
    volatile word_t *p = frame_new_mapped(&f);
    CHECK(p);
    *p = 0x600d;
    cptr_t ep = ep_new();
    CHECK(ep);
    space_flag = 0;
    struct thread t;
    struct thread_opts o = { .prio = TEST_PRIO, .fault_ep = ep };
    CHECK_OK(thread_create_space(&t, &o));
    CHECK_OK(thread_start(&t, read_addr, (void *)p));
    struct msg m;
    CHECK_OK(recv_timeout(ep, &m, WAIT_MS));
    CHECK_EQ(msginfo_label(m.info), FAULT_VM);
    CHECK_EQ(m.mr[1], (word_t)p);
    CHECK_EQ(m.mr[0], (word_t)arch_fault_read_at);
    /* Map the same frame there too (a copy of the cap) and retry: now it reads the value. */
    cptr_t c = copy_cap(f, RIGHTS_ALL);
    CHECK(c);
    CHECK_OK(map_frame(c, t.vspace, (word_t)p, RIGHT_READ, VM_DEFAULT));
    struct msg r = { .info = msginfo_new(0, 0, 0, 0) };
    sys_reply(&r);
    CHECK(wait_eq(&space_flag, 0x600d, WAIT_MS));
}

static volatile word_t space_counter;

static void count_in_space(void *arg)
{
    (void)arg;
    for (;;) {
        space_counter++;
        sys_yield();
    }
}

TEST(vspace_delete_while_running)
{
    space_counter = 0;
    cptr_t ep = ep_new();
    CHECK(ep);
    struct thread t;
    struct thread_opts o = { .prio = TEST_PRIO, .fault_ep = ep };
    CHECK_OK(thread_create_space(&t, &o));
    CHECK_OK(thread_start(&t, count_in_space, NULL));
    CHECK(wait_ge(&space_counter, 3, WAIT_MS));
    /* Its address space goes away under it (revoke first: its TCB holds a derived cap that
     * keeps the space alive): it can no longer run its code. */
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, t.vspace, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, t.vspace, ROOT_DEPTH));
    for (int i = 0; i < 20; i++)
        sys_yield();
    word_t c = space_counter;
    for (int i = 0; i < 20; i++)
        sys_yield();
    CHECK_EQ(space_counter, c);
    struct msg m;
    word_t st = sys_nbrecv(ep, &m);
    test_note("after deletion: %s, label %lu", status_name(st), (unsigned long)msginfo_label(m.info));
}

TEST(vspace_two_spaces_same_address)
{
    /* The same virtual address in two spaces holds different frames. */
    struct thread a, b;
    struct thread_opts o = { .prio = TEST_PRIO - 1 };
    CHECK_OK(thread_create_space(&a, &o));
    CHECK_OK(thread_create_space(&b, &o));
    cptr_t fa = obj_new(OBJ_FRAME, 0), fb = obj_new(OBJ_FRAME, 0);
    CHECK(fa && fb);
    word_t v = 0x40000000UL;
    CHECK_OK(map_frame(fa, a.vspace, v, RW, VM_DEFAULT));
    CHECK_OK(map_frame(fb, b.vspace, v, RW, VM_DEFAULT));
    word_t pa, pb;
    CHECK_OK(frame_get_address(fa, &pa));
    CHECK_OK(frame_get_address(fb, &pb));
    CHECK(pa != pb);
}
