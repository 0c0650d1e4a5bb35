/* IPC: every mode, long messages, capability transfer, FIFO order. */
#include "test.h"

#define ROOT ROOT_SLOT_CNODE

struct server {
    cptr_t ep;
    volatile word_t count;
    volatile word_t last_label, last_badge, last_len;
    volatile word_t status;
    word_t words[MSG_MAX_LENGTH];
};

/* Receives once, then replies with label+1 and each MR + 1. */
static void echo_server(void *arg)
{
    struct server *s = arg;
    struct msg m = { 0 };
    word_t st = sys_recv(s->ep, &m);
    s->status = st;
    if (st != E_OK)
        return;
    word_t len = msginfo_length(m.info);
    for (word_t i = 0; i < len; i++)
        msg_set(&m, i, msg_get(&m, i) + 1);
    s->last_label = msginfo_label(m.info);
    s->last_badge = m.badge;
    s->last_len = len;
    m.info = msginfo_new(s->last_label + 1, 0, 0, len);
    sys_reply(&m);
    s->count++;
}

TEST(ipc_call_reply)
{
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(echo_server, &s, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(40, 0, 0, 4), .mr = { 1, 2, 3, 4 } };
    CHECK_OK(sys_call(s.ep, &m));
    CHECK_EQ(msginfo_label(m.info), 41);
    CHECK_EQ(msginfo_length(m.info), 4);
    CHECK_EQ(m.mr[0], 2);
    CHECK_EQ(m.mr[3], 5);
    CHECK(wait_eq(&s.count, 1, WAIT_MS));
}

TEST(ipc_call_long_message)
{
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(echo_server, &s, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(1, 0, 0, MSG_MAX_LENGTH) };
    for (unsigned i = 0; i < MSG_MAX_LENGTH; i++)
        msg_set(&m, i, 1000 + i);
    CHECK_OK(sys_call(s.ep, &m));
    CHECK_EQ(msginfo_length(m.info), MSG_MAX_LENGTH);
    for (unsigned i = 0; i < MSG_MAX_LENGTH; i++)
        CHECK_EQ(msg_get(&m, i), 1001 + i);
}

TEST(ipc_length_over_max)
{
    /* A length field above MSG_MAX_LENGTH is clamped (or refused), never overruns. */
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(echo_server, &s, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(1, 0, 0, 127) };
    word_t st = sys_call(s.ep, &m);
    if (st == E_OK)
        CHECK(msginfo_length(m.info) <= MSG_MAX_LENGTH);
    else
        test_note("length 127 refused: %s", status_name(st));
    CHECK(s.last_len <= MSG_MAX_LENGTH);
}

static void sender(void *arg)
{
    struct server *s = arg;
    struct msg m = { .info = msginfo_new(9, 0, 0, 2), .mr = { 11, 22 } };
    s->status = sys_send(s->ep, &m);
    s->count++;
}

TEST(ipc_send_recv)
{
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(sender, &s, TEST_PRIO + 1, 0, 0));
    CHECK_EQ(s.count, 0);   /* blocked: no receiver yet */
    struct msg m = { 0 };
    CHECK_OK(sys_recv(s.ep, &m));
    CHECK_EQ(msginfo_label(m.info), 9);
    CHECK_EQ(m.mr[0], 11);
    CHECK_EQ(m.mr[1], 22);
    CHECK(wait_eq(&s.count, 1, WAIT_MS));
    CHECK_OK(s.status);
}

TEST(ipc_nbsend_without_receiver)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m = { .info = msginfo_new(1, 0, 0, 1), .mr = { 5 } };
    CHECK_OK(sys_nbsend(ep, &m));          /* dropped: nobody waits */
    CHECK_ST(sys_nbrecv(ep, &m), E_WOULD_BLOCK);
}

TEST(ipc_nbsend_to_waiter)
{
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(echo_server, &s, TEST_PRIO + 1, 0, 0));
    struct msg m = { .info = msginfo_new(17, 0, 0, 1), .mr = { 5 } };
    CHECK_OK(sys_nbsend(s.ep, &m));
    CHECK_EQ(s.last_label, 17);
}

TEST(ipc_nbrecv_would_block)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    struct msg m = { 0 };
    CHECK_ST(sys_nbrecv(ep, &m), E_WOULD_BLOCK);
}

TEST(ipc_nbrecv_gets_waiting_sender)
{
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(sender, &s, TEST_PRIO + 1, 0, 0));
    struct msg m = { 0 };
    CHECK_OK(sys_nbrecv(s.ep, &m));
    CHECK_EQ(msginfo_label(m.info), 9);
    CHECK_EQ(m.mr[1], 22);
}

static void reply_recv_server(void *arg)
{
    struct server *s = arg;
    struct msg m = { 0 };
    word_t st = sys_recv(s->ep, &m);
    while (st == E_OK) {
        s->count++;
        m.info = msginfo_new(msginfo_label(m.info), 0, 0, 1);
        m.mr[0] = m.mr[0] * 2;
        st = sys_reply_recv(s->ep, &m);
    }
    s->status = st;
}

TEST(ipc_reply_recv_loop)
{
    static struct server s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(reply_recv_server, &s, TEST_PRIO + 1, 0, 0));
    for (word_t i = 0; i < 100; i++) {
        struct msg m = { .info = msginfo_new(i, 0, 0, 1), .mr = { i } };
        CHECK_OK(sys_call(s.ep, &m));
        CHECK_EQ(m.mr[0], 2 * i);
        CHECK_EQ(msginfo_label(m.info), i);
    }
    CHECK_EQ(s.count, 100);
}

TEST(ipc_reply_without_caller)
{
    struct msg m = { .info = msginfo_new(0, 0, 0, 0) };
    /* Nothing to reply to: a no-op that returns. */
    sys_reply(&m);
    CHECK(1);
}

TEST(ipc_call_needs_grant_reply)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t w = mint(ep, RIGHT_WRITE, 0);
    CHECK(w);
    struct msg m = { .info = msginfo_new(1, 0, 0, 0) };
    CHECK_ST(sys_call(w, &m), E_INVALID_CAPABILITY);
}

TEST(ipc_recv_needs_read)
{
    cptr_t ep = ep_new();
    CHECK(ep);
    cptr_t w = mint(ep, RIGHT_WRITE | RIGHT_GRANT_REPLY, 0);
    CHECK(w);
    struct msg m = { 0 };
    CHECK_ST(sys_recv(w, &m), E_INVALID_CAPABILITY);
    CHECK_ST(sys_reply_recv(w, &m), E_INVALID_CAPABILITY);
}

TEST(ipc_recv_on_non_endpoint)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    struct msg m = { 0 };
    CHECK_ST(sys_recv(tcb, &m), E_INVALID_CAPABILITY);
    CHECK_ST(sys_nbrecv(ROOT_SLOT_CNODE, &m), E_INVALID_CAPABILITY);
}

/* ---- FIFO order of queued senders */

struct fifo {
    cptr_t ep;
    volatile word_t started;
};

static void fifo_sender(void *arg)
{
    struct fifo *f = arg;
    word_t me = f->started++;
    struct msg m = { .info = msginfo_new(me, 0, 0, 1), .mr = { me } };
    sys_send(f->ep, &m);
}

TEST(ipc_fifo_senders)
{
    static struct fifo f;
    f.ep = ep_new();
    f.started = 0;
    CHECK(f.ep);
    /* Higher priority senders run at once and queue in creation order. */
    for (int i = 0; i < 5; i++)
        CHECK(spawn(fifo_sender, &f, TEST_PRIO + 1, 0, 0));
    CHECK_EQ(f.started, 5);
    for (word_t i = 0; i < 5; i++) {
        struct msg m = { 0 };
        CHECK_OK(sys_recv(f.ep, &m));
        CHECK_EQ(m.mr[0], i);
    }
}

/* ---- capability transfer */

struct xfer {
    cptr_t ep;
    cptr_t recv_slot;
    volatile word_t done, info, badge0, status;
};

static void cap_receiver(void *arg)
{
    struct xfer *x = arg;
    struct ipc_buffer *b = ipcbuf();
    b->receive_cnode = ROOT_SLOT_CNODE;
    b->receive_index = x->recv_slot;
    b->receive_depth = ROOT_DEPTH;
    struct msg m = { 0 };
    x->status = sys_recv(x->ep, &m);
    x->info = m.info;
    x->badge0 = b->badges[0];
    x->done = 1;
}

TEST(ipc_cap_transfer)
{
    static struct xfer x;
    memset((void *)&x, 0, sizeof(x));
    x.ep = ep_new();
    x.recv_slot = slot_alloc();
    cptr_t payload = ntfn_new();
    CHECK(x.ep && payload);
    CHECK(spawn(cap_receiver, &x, TEST_PRIO + 1, 0, 0));
    ipcbuf()->caps[0] = payload;
    struct msg m = { .info = msginfo_new(1, 0, 1, 0) };
    CHECK_OK(sys_send(x.ep, &m));
    CHECK(wait_eq(&x.done, 1, WAIT_MS));
    CHECK_OK(x.status);
    CHECK_EQ(msginfo_extra_caps(x.info), 1);
    CHECK_EQ(msginfo_caps_unwrapped(x.info), 0);
    /* The received cap works: signal through it, poll the original. */
    CHECK_OK(sys_signal(x.recv_slot));
    word_t w;
    CHECK_OK(sys_poll(payload, &w));
}

TEST(ipc_cap_transfer_needs_grant)
{
    static struct xfer x;
    memset((void *)&x, 0, sizeof(x));
    x.ep = ep_new();
    x.recv_slot = slot_alloc();
    cptr_t payload = ntfn_new();
    cptr_t nogrant = mint(x.ep, RIGHT_WRITE | RIGHT_READ, 0);
    CHECK(x.ep && payload && nogrant);
    CHECK(spawn(cap_receiver, &x, TEST_PRIO + 1, 0, 0));
    ipcbuf()->caps[0] = payload;
    struct msg m = { .info = msginfo_new(1, 0, 1, 0) };
    CHECK_OK(sys_send(nogrant, &m));
    CHECK(wait_eq(&x.done, 1, WAIT_MS));
    /* The message arrives without the cap. */
    CHECK_EQ(msginfo_extra_caps(x.info), 0);
    struct msg probe = { 0 };
    CHECK_ST(sys_nbsend(x.recv_slot, &probe), E_FAILED_LOOKUP);
}

TEST(ipc_cap_unwrapped_badge)
{
    /* Sending a badged cap to the endpoint it names unwraps it to its badge. */
    static struct xfer x;
    memset((void *)&x, 0, sizeof(x));
    x.ep = ep_new();
    x.recv_slot = slot_alloc();
    CHECK(x.ep);
    cptr_t badged = mint(x.ep, RIGHTS_ALL, 0xbeef);
    CHECK(badged);
    CHECK(spawn(cap_receiver, &x, TEST_PRIO + 1, 0, 0));
    ipcbuf()->caps[0] = badged;
    struct msg m = { .info = msginfo_new(1, 0, 1, 0) };
    CHECK_OK(sys_send(x.ep, &m));
    CHECK(wait_eq(&x.done, 1, WAIT_MS));
    CHECK_EQ(msginfo_extra_caps(x.info), 1);
    CHECK_EQ(msginfo_caps_unwrapped(x.info), 1);
    CHECK_EQ(x.badge0, 0xbeef);
}

TEST(ipc_cap_transfer_bad_cptr)
{
    static struct xfer x;
    memset((void *)&x, 0, sizeof(x));
    x.ep = ep_new();
    x.recv_slot = slot_alloc();
    CHECK(x.ep);
    CHECK(spawn(cap_receiver, &x, TEST_PRIO + 1, 0, 0));
    ipcbuf()->caps[0] = slot_alloc();   /* empty */
    struct msg m = { .info = msginfo_new(1, 0, 1, 0) };
    word_t st = sys_send(x.ep, &m);
    if (st == E_OK) {
        CHECK(wait_eq(&x.done, 1, WAIT_MS));
        CHECK_EQ(msginfo_extra_caps(x.info), 0);
    } else {
        CHECK_EQ(st, E_FAILED_LOOKUP);
        test_note("refused at send");
    }
}

/* ---- reply caps */

struct saver {
    cptr_t ep;
    cptr_t reply_slot;
    volatile word_t saved, status, first, second;
    volatile word_t client_done, client_label, client_mr0;
};

/* Receives a Call, saves the reply cap, replies through it, then tries it again. */
static void saving_server(void *arg)
{
    struct saver *s = arg;
    struct msg m = { 0 };
    if (sys_recv(s->ep, &m) != E_OK)
        return;
    s->status = cnode_save_caller(ROOT_SLOT_CNODE, s->reply_slot, ROOT_DEPTH);
    s->saved = 1;
    m.info = msginfo_new(77, 0, 0, 1);
    m.mr[0] = 78;
    s->first = 1000 + sys_send(s->reply_slot, &m);
    m.info = msginfo_new(79, 0, 0, 0);
    s->second = 1000 + sys_send(s->reply_slot, &m);
}

static void saving_client(void *arg)
{
    struct saver *s = arg;
    struct msg m = { .info = msginfo_new(1, 0, 0, 0) };
    if (sys_call(s->ep, &m) == E_OK) {
        s->client_label = msginfo_label(m.info);
        s->client_mr0 = m.mr[0];
    }
    s->client_done = 1;
}

TEST(ipc_save_caller_reply)
{
    /* Client and server are both helper threads, so a broken reply path cannot hang the suite. */
    static struct saver s;
    memset((void *)&s, 0, sizeof(s));
    s.ep = ep_new();
    s.reply_slot = slot_alloc();
    CHECK(s.ep);
    CHECK(spawn(saving_server, &s, TEST_PRIO + 1, 0, 0));
    CHECK(spawn(saving_client, &s, TEST_PRIO + 1, 0, 0));
    CHECK(wait_ge(&s.second, 1000, WAIT_MS));
    CHECK_OK(s.status);
    CHECK_EQ(s.first, 1000 + E_OK);
    CHECK(wait_eq(&s.client_done, 1, WAIT_MS));
    CHECK_EQ(s.client_label, 77);
    CHECK_EQ(s.client_mr0, 78);
    /* A reply cap is used up by the reply. */
    CHECK(s.second != 1000 + E_OK);
}

TEST(ipc_save_caller_nothing)
{
    /* No pending caller: SaveCaller leaves the slot empty. */
    cptr_t slot = slot_alloc();
    word_t st = cnode_save_caller(ROOT_SLOT_CNODE, slot, ROOT_DEPTH);
    CHECK(st == E_OK || st == E_ILLEGAL_OPERATION);
    struct msg m = { 0 };
    CHECK_ST(sys_nbsend(slot, &m), E_FAILED_LOOKUP);
}

/*
 * The IPC fastpath (kernel/fastpath.c) leaves two cases of a Call to the
 * slow path; the two tests below check that path's semantics in them.
 */
struct keeping_server {
    cptr_t ep;
    volatile word_t received;
    volatile word_t first_label, second_label;
};

/* Receives twice without answering the first caller, then answers the second. */
static void server_keeping_first_reply_cap(void *arg)
{
    struct keeping_server *s = arg;
    struct msg m = { 0 };
    if (sys_recv(s->ep, &m) != E_OK)
        return;
    s->first_label = msginfo_label(m.info);
    s->received = 1;
    /* Blocks with the first caller's reply cap still in its caller slot. */
    if (sys_recv(s->ep, &m) != E_OK)
        return;
    s->second_label = msginfo_label(m.info);
    s->received = 2;
    m.info = msginfo_new(s->second_label + 1, 0, 0, 0);
    sys_reply(&m);
}

struct one_call {
    cptr_t ep;
    volatile word_t done;
};

static void call_and_record(void *arg)
{
    struct one_call *c = arg;
    struct msg m = { .info = msginfo_new(7, 0, 0, 0) };
    sys_call(c->ep, &m);
    c->done = 1;
}

TEST(ipc_call_to_receiver_holding_reply_cap)
{
    static struct keeping_server s;
    static struct one_call first;
    memset((void *)&s, 0, sizeof(s));
    memset((void *)&first, 0, sizeof(first));
    s.ep = first.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(server_keeping_first_reply_cap, &s, TEST_PRIO + 1, 0, 0));
    struct thread *caller = spawn(call_and_record, &first, TEST_PRIO + 1, 0, 0);
    CHECK(caller);
    CHECK(wait_eq(&s.received, 1, WAIT_MS));
    CHECK_EQ(s.first_label, 7);
    /* The receiver's stale reply cap is dropped, and this call gets the answer. */
    struct msg m = { .info = msginfo_new(40, 0, 0, 0) };
    CHECK_OK(sys_call(s.ep, &m));
    CHECK_EQ(msginfo_label(m.info), 41);
    CHECK_EQ(s.second_label, 40);
    /* The first caller, whose reply cap went, still waits. */
    CHECK_EQ(first.done, 0);
    CHECK_OK(tcb_suspend(caller->tcb));
}

struct two_level_client {
    cptr_t ep;
    volatile word_t done, status, label, mr0;
};

static void call_through_own_cspace(void *arg)
{
    struct two_level_client *c = arg;
    struct msg m = { .info = msginfo_new(5, 0, 0, 1), .mr = { 10 } };
    c->status = sys_call(c->ep, &m);
    c->label = msginfo_label(m.info);
    c->mr0 = m.mr[0];
    c->done = 1;
}

TEST(ipc_call_through_two_level_cspace)
{
    static struct server s;
    static struct two_level_client c;
    memset((void *)&s, 0, sizeof(s));
    memset((void *)&c, 0, sizeof(c));
    s.ep = c.ep = ep_new();
    CHECK(s.ep);
    CHECK(spawn(echo_server, &s, TEST_PRIO + 1, 0, 0));
    /*
     * A one-bit top level whose slot 0 holds the root CNode, guarded by the
     * bits in between: small cptrs name the same slots as in the root CNode.
     */
    cptr_t top = obj_new(OBJ_CNODE, 1);
    CHECK(top);
    CHECK_OK(cnode_mint(top, 0, 1, ROOT, ROOT, ROOT_DEPTH, RIGHTS_ALL, WORD_BITS - 1 - ROOT_CNODE_BITS));
    /* At this thread's priority: it cannot suspend itself (no TCB cap in
     * its CSpace), so once done it yields until suspended below. */
    struct thread t;
    struct thread_opts o = { .prio = TEST_PRIO, .core = 0, .cspace = top };
    CHECK_OK(thread_create_space(&t, &o));
    CHECK_OK(thread_start(&t, call_through_own_cspace, &c));
    CHECK(wait_eq(&c.done, 1, WAIT_MS));
    CHECK_OK(c.status);
    CHECK_EQ(c.label, 6);
    CHECK_EQ(c.mr0, 11);
    CHECK_EQ(s.last_label, 5);
    CHECK_OK(tcb_suspend(t.tcb));
}
