/*
 * lwIP in the guest without a NIC (docs/network.md): TCP clients and the
 * tests' own TCP server (lwip_test_server.c), or the stack's side of the socket
 * link (userland/net/socket_server.c), talk over lwIP's loopback
 * interface on the test's own thread.  The server runs an echo protocol that
 * asks for the close at a 'Q'.  Each test checks what arrived byte for byte,
 * and that every connection's memory went back to lwIP's pools.
 *
 * Waits are bounded by lwIP's own clock (sys_now), generously: the stack
 * makes progress on every pump, and only the flood waits for TCP's SYN
 * retransmission timer.
 */
#include "test.h"
#include "lwip/init.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "socket_link.h"
#include "socket_server.h"
#include "lwip_test_server.h"

#define LWIP_WAIT_MS 60000  /* lwIP's own clock, sys_now() */

/* ---- the echo protocol */

static bool echo_used[TCP_SERVER_MAX_CONNS];
static unsigned echo_opened, echo_closed;
static unsigned echo_opens_to_fail;     /* as if out of memory: open fails this many times */

static void *echo_open(void *ctx)
{
    (void)ctx;
    if (echo_opens_to_fail) {
        echo_opens_to_fail--;
        return NULL;
    }
    for (unsigned i = 0; i < ARRAY_SIZE(echo_used); i++)
        if (!echo_used[i]) {
            echo_used[i] = true;
            echo_opened++;
            return &echo_used[i];
        }
    return NULL;
}

/* Echo everything before a 'Q'; at a 'Q' ask for the close. */
static bool echo_input(void *conn, const void *data, size_t len, tcp_server_out_fn out, void *out_ctx)
{
    (void)conn;
    const char *p = data;
    size_t n = 0;
    while (n < len && p[n] != 'Q')
        n++;
    out(out_ctx, p, n);
    return n == len;
}

static void echo_close(void *conn)
{
    *(bool *)conn = false;
    echo_closed++;
}

static const struct tcp_server_protocol echo = { echo_open, echo_input, echo_close, NULL };

/* ---- the stack */

static void stack_init(void)
{
    static bool ready;
    if (!ready) {
        lwip_init();
        ready = true;
    }
}

/* The socket link under test, which every pump serves while it is set. */
static struct socket_link *test_link;

/* Deliver what the loopback interface queued, run lwIP's timers, and serve the link. */
static void pump(void)
{
    netif_poll_all();
    sys_check_timeouts();
    if (test_link)
        socket_link_pass();
}

static bool wait_for(bool (*cond)(void *), void *arg)
{
    u32_t start = sys_now();
    while (!cond(arg)) {
        if ((u32_t)(sys_now() - start) > LWIP_WAIT_MS)
            return false;
        pump();
    }
    return true;
}

/* Memory that lives only while connections do: it must come back when they are gone. */
struct usage {
    unsigned pcbs;      /* TCP pcbs, leaving out TIME-WAIT ones (they expire on their own) */
    unsigned segs;
    unsigned pbufs;
    unsigned heap;
};

static struct usage usage_now(void)
{
    unsigned tw = 0;
    for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
        tw++;
    return (struct usage){
        .pcbs = lwip_stats.memp[MEMP_TCP_PCB]->used - tw,
        .segs = lwip_stats.memp[MEMP_TCP_SEG]->used,
        .pbufs = lwip_stats.memp[MEMP_PBUF_POOL]->used + lwip_stats.memp[MEMP_PBUF]->used,
        .heap = lwip_stats.mem.used,
    };
}

#define CHECK_USAGE(before)                                     \
    do {                                                        \
        struct usage after_ = usage_now();                      \
        CHECK_EQ(after_.pcbs, (before).pcbs);                   \
        CHECK_EQ(after_.segs, (before).segs);                   \
        CHECK_EQ(after_.pbufs, (before).pbufs);                 \
        CHECK_EQ(after_.heap, (before).heap);                   \
    } while (0)

/* ---- a client */

struct client {
    struct tcp_pcb *pcb;
    bool connected, peer_closed, error;
    const uint8_t *tx;
    size_t tx_len, tx_done;
    uint8_t *rx;
    size_t rx_cap, rx_len;
    bool overflow;
    bool paused;            /* hold what arrives without acknowledging it to the window */
    struct pbuf *held;
    bool close_when_echoed; /* close as soon as rx_len reaches tx_len */
};

static void client_send(struct client *c)
{
    while (c->pcb && c->tx_done < c->tx_len) {
        size_t n = c->tx_len - c->tx_done;
        if (n > tcp_sndbuf(c->pcb))
            n = tcp_sndbuf(c->pcb);
        if (!n || tcp_write(c->pcb, c->tx + c->tx_done, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        c->tx_done += n;
    }
    if (c->pcb)
        tcp_output(c->pcb);
}

static void client_take(struct client *c, struct pbuf *p)
{
    if (c->rx_len + p->tot_len > c->rx_cap)
        c->overflow = true;
    else
        c->rx_len += pbuf_copy_partial(p, c->rx + c->rx_len, p->tot_len, 0);
    tcp_recved(c->pcb, p->tot_len);
    pbuf_free(p);
}

static void client_close(struct client *c)
{
    if (c->pcb && tcp_close(c->pcb) == ERR_OK) {
        tcp_arg(c->pcb, NULL);
        c->pcb = NULL;
    }
}

static err_t client_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)pcb;
    (void)err;
    struct client *c = arg;
    if (!c) {
        if (p)
            pbuf_free(p);
        return ERR_OK;
    }
    if (!p) {
        c->peer_closed = true;
        return ERR_OK;
    }
    if (c->paused) {
        if (c->held)
            pbuf_cat(c->held, p);
        else
            c->held = p;
        return ERR_OK;
    }
    client_take(c, p);
    if (c->close_when_echoed && c->rx_len == c->tx_len)
        client_close(c);
    return ERR_OK;
}

static err_t client_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)pcb;
    (void)len;
    if (arg)
        client_send(arg);
    return ERR_OK;
}

static void client_err(void *arg, err_t err)
{
    (void)err;
    struct client *c = arg;
    if (c) {
        c->pcb = NULL;
        c->error = true;
    }
}

static err_t client_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)pcb;
    (void)err;
    struct client *c = arg;
    c->connected = true;
    client_send(c);
    return ERR_OK;
}

static bool client_connect(struct client *c, u16_t port)
{
    c->pcb = tcp_new();
    if (!c->pcb)
        return false;
    tcp_arg(c->pcb, c);
    tcp_recv(c->pcb, client_recv);
    tcp_sent(c->pcb, client_sent);
    tcp_err(c->pcb, client_err);
    ip_addr_t loopback;
    IP_ADDR4(&loopback, 127, 0, 0, 1);
    return tcp_connect(c->pcb, &loopback, port, client_connected) == ERR_OK;
}

static void client_resume(struct client *c)
{
    c->paused = false;
    if (c->held) {
        struct pbuf *p = c->held;
        c->held = NULL;
        client_take(c, p);
    }
}

static bool server_idle(void *arg)
{
    return ((struct tcp_server *)arg)->live == 0;
}

static bool client_echoed(void *arg)
{
    struct client *c = arg;
    return c->rx_len >= c->tx_len || c->error || c->overflow;
}

static bool client_ended(void *arg)
{
    struct client *c = arg;
    return c->peer_closed || c->error;
}

static void fill_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)(xorshift64(&seed) >> 56);
        if (buf[i] == 'Q')
            buf[i] = 'q';
    }
}

static struct tcp_server server;

/* ---- tests */

/*
 * The stream of the backpressure tests: enough that the server's replies fill
 * the client's window (8 segments), the server's send buffer (8 more) and its
 * backlog, so that it holds input; not so much that the held input closes the
 * server's window too.  Two lwIP ends whose receive windows are both zero
 * acknowledge each other's acknowledgements without end (lwIP 2.1.3's
 * tcp_receive answers every zero-length segment outside a zero window), which
 * over loopback never returns from netif_poll.  Linux clients do not answer
 * acknowledgements, so the benchmark's clients never meet this.
 */
#define STREAM (40 * 1024)
static uint8_t big_tx[STREAM], big_rx[STREAM];


static bool server_holding(void *arg)
{
    return ((struct tcp_server *)arg)->holds > 0;
}

/*
 * The end of every server test: the server's connections balanced and
 * closed, the server stopped, lwIP's timers run down, and every pool and
 * the heap back where the test found them.
 */
#define CHECK_SERVER_ENDS_CLEAN(before)                         \
    do {                                                        \
        CHECK(wait_for(server_idle, &server));                  \
        CHECK_EQ(echo_opened, echo_closed);                     \
        tcp_server_stop(&server);                               \
        for (int i_ = 0; i_ < 100; i_++)                        \
            pump();                                             \
        CHECK_USAGE(before);                                    \
    } while (0)

/*
 * A stream echoed to a client that first reads nothing: the server's replies
 * fill TCP's send buffer, then its backlog, and then it must stop reading.
 * Once the client reads, every byte arrives, in order.
 */
TEST(lwip_tcp_echo_backpressure)
{
    stack_init();
    struct usage before = usage_now();
    CHECK_EQ(tcp_server_start(&server, 7001, &echo), ERR_OK);
    fill_pattern(big_tx, sizeof(big_tx), 0x1234567);
    struct client c = { .tx = big_tx, .tx_len = sizeof(big_tx), .rx = big_rx,
                        .rx_cap = sizeof(big_rx), .paused = true };
    CHECK(client_connect(&c, 7001));
    CHECK(wait_for(server_holding, &server));
    for (int i = 0; i < 100; i++)
        pump();
    test_note("backlog peak %zu bytes", server.backlog_peak);
    CHECK(server.backlog_peak > TCP_SERVER_BACKLOG_LIMIT);
    CHECK_EQ(c.rx_len, 0);
    CHECK(c.held && c.held->tot_len > 0);
    client_resume(&c);
    CHECK(wait_for(client_echoed, &c));
    CHECK(!c.error && !c.overflow);
    CHECK_EQ(c.rx_len, c.tx_len);
    CHECK(!memcmp(big_rx, big_tx, c.tx_len));
    client_close(&c);
    CHECK_SERVER_ENDS_CLEAN(before);
    CHECK_EQ(server.accepted, 1);
}

/* The protocol ends the connection (as QUIT does): what it wrote before arrives, then the FIN. */
TEST(lwip_tcp_protocol_close)
{
    stack_init();
    struct usage before = usage_now();
    CHECK_EQ(tcp_server_start(&server, 7002, &echo), ERR_OK);
    static const char msg[] = "hello, echoQ and never this";
    uint8_t rx[64];
    struct client c = { .tx = (const uint8_t *)msg, .tx_len = sizeof(msg) - 1, .rx = rx,
                        .rx_cap = sizeof(rx) };
    CHECK(client_connect(&c, 7002));
    CHECK(wait_for(client_ended, &c));
    CHECK(c.peer_closed && !c.error);
    CHECK_EQ(c.rx_len, 11);
    CHECK(!memcmp(rx, "hello, echo", 11));
    client_close(&c);
    CHECK_SERVER_ENDS_CLEAN(before);
}

/* A client that resets its connection in the middle of a stream leaves nothing behind. */
TEST(lwip_tcp_abrupt_disconnect)
{
    stack_init();
    struct usage before = usage_now();
    CHECK_EQ(tcp_server_start(&server, 7003, &echo), ERR_OK);
    fill_pattern(big_tx, sizeof(big_tx), 0x7654321);
    struct client c = { .tx = big_tx, .tx_len = sizeof(big_tx), .rx = big_rx,
                        .rx_cap = sizeof(big_rx), .paused = true };
    CHECK(client_connect(&c, 7003));
    CHECK(wait_for(server_holding, &server));
    CHECK_EQ(server.live, 1);
    if (c.held)
        pbuf_free(c.held);
    c.held = NULL;
    tcp_abort(c.pcb);
    CHECK_SERVER_ENDS_CLEAN(before);
}

/* 70 clients and their 70 server ends need more pcbs than lwIP's 128. */
#define FLOOD 70

static struct client flood[FLOOD];
static uint8_t flood_rx[FLOOD][16];
static char flood_tx[FLOOD][16];

/*
 * A connection whose protocol state cannot be made at first (no memory)
 * waits for it, its input held, and is served once a retry from the poll
 * callback succeeds.  A connection that sends nothing never opens.
 */
TEST(lwip_tcp_open_waits_for_memory)
{
    stack_init();
    struct usage before = usage_now();
    CHECK_EQ(tcp_server_start(&server, 7005, &echo), ERR_OK);
    static const char msg[] = "served after all";
    uint8_t rx[32];
    struct client c = { .tx = (const uint8_t *)msg, .tx_len = sizeof(msg) - 1, .rx = rx,
                        .rx_cap = sizeof(rx) };
    struct client silent = { .tx = (const uint8_t *)msg, .tx_len = 0, .rx = rx, .rx_cap = 0 };
    CHECK(client_connect(&silent, 7005));
    unsigned opened = echo_opened;
    echo_opens_to_fail = 2;     /* when the data arrives, and at the first poll: the next poll opens */
    CHECK(client_connect(&c, 7005));
    CHECK(wait_for(client_echoed, &c));
    CHECK(!c.error);
    CHECK_EQ(echo_opens_to_fail, 0);
    CHECK_EQ(server.deferred, 1);
    CHECK_EQ(echo_opened, opened + 1);
    CHECK_EQ(server.live, 2);
    CHECK_EQ(c.rx_len, c.tx_len);
    CHECK(!memcmp(rx, msg, c.tx_len));
    client_close(&c);
    client_close(&silent);
    CHECK_SERVER_ENDS_CLEAN(before);
}

static bool flood_settled(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < FLOOD; i++)
        if (!flood[i].error && flood[i].rx_len < flood[i].tx_len)
            return false;
    return true;
}

/* Every connection with state has been idle the server's evict_idle_ms, by its own account
 * (the last acknowledgement of the echo, which comes after the echo itself, counts). */
static bool every_connection_idle(const struct tcp_server *s)
{
    u32_t now = sys_now();
    for (unsigned i = 0; i < TCP_SERVER_MAX_CONNS; i++) {
        const struct tcp_server_conn *c = &s->conns[i];
        if (c->pcb && c->state && (u32_t)(now - c->last_active) <= s->evict_idle_ms)
            return false;
    }
    return true;
}

/*
 * A new connection that finds no memory for its state takes it from the
 * connection idle longest, which is reset, once that one has been idle the
 * server's evict_idle_ms (shortened here from its 5 s, which the suite
 * would otherwise wait out on every boot).
 */
TEST(lwip_tcp_idle_connection_evicted)
{
    stack_init();
    struct usage before = usage_now();
    CHECK_EQ(tcp_server_start(&server, 7006, &echo), ERR_OK);
    server.evict_idle_ms = 500;
    static const char msg[] = "ping";
    uint8_t rx_idle[8], rx_new[8];
    struct client idle = { .tx = (const uint8_t *)msg, .tx_len = 4, .rx = rx_idle, .rx_cap = 8 };
    struct client fresh = { .tx = (const uint8_t *)msg, .tx_len = 4, .rx = rx_new, .rx_cap = 8 };
    CHECK(client_connect(&idle, 7006));
    CHECK(wait_for(client_echoed, &idle));
    CHECK(!idle.error);
    while (!every_connection_idle(&server))
        pump();
    echo_opens_to_fail = 1;
    CHECK(client_connect(&fresh, 7006));
    CHECK(wait_for(client_echoed, &fresh));
    CHECK(!fresh.error);
    CHECK(!memcmp(rx_new, msg, 4));
    CHECK(wait_for(client_ended, &idle));
    CHECK(idle.error);
    CHECK_EQ(server.evicted, 1);
    CHECK_EQ(server.deferred, 0);
    CHECK_EQ(server.live, 1);
    client_close(&fresh);
    CHECK_SERVER_ENDS_CLEAN(before);
}

/*
 * More clients at once than lwIP has pcbs for both ends.  When a SYN finds
 * no pcb, lwIP resets the server's connection inactive longest for it (the
 * server's connections are below the listener's priority), or drops the SYN
 * and the client sends it again.  Every client is either served, intact, or
 * reset; none hangs, and nothing leaks.
 */
TEST(lwip_tcp_connection_flood)
{
    stack_init();
    struct usage before = usage_now();
    CHECK_EQ(tcp_server_start(&server, 7004, &echo), ERR_OK);
    memset(flood, 0, sizeof(flood));
    for (unsigned i = 0; i < FLOOD; i++) {
        int n = snprintf(flood_tx[i], sizeof(flood_tx[i]), "client %u", i);
        flood[i] = (struct client){ .tx = (const uint8_t *)flood_tx[i], .tx_len = (size_t)n,
                                    .rx = flood_rx[i], .rx_cap = sizeof(flood_rx[i]),
                                    .close_when_echoed = true };
        CHECK(client_connect(&flood[i], 7004));
    }
    CHECK(wait_for(flood_settled, NULL));
    unsigned served = 0, reset = 0;
    for (unsigned i = 0; i < FLOOD; i++) {
        if (flood[i].error) {
            reset++;
            continue;
        }
        CHECK_EQ(flood[i].rx_len, flood[i].tx_len);
        CHECK(!memcmp(flood_rx[i], flood_tx[i], flood[i].tx_len));
        served++;
    }
    test_note("%u clients served, %u reset; server: %lu accepted, %lu aborted and %lu reset by lwIP, "
              "%lu SYNs without a pcb", served, reset, server.accepted, server.aborted_by_lwip,
              server.reset_by_peer, server.refused);
    CHECK_EQ(served + reset, FLOOD);
    CHECK(served > 0);
    /* Each reset client lost its server end to a newer connection (or never got one, or lost
     * its own end, which resets the server's). */
    CHECK(reset <= server.aborted_by_lwip + server.reset_by_peer + server.refused);
    CHECK_SERVER_ENDS_CLEAN(before);
}

/* ---- the stack's side of the socket link (socket_link.h), with the test as the program */

#define LINK_PORT 7010
#define LINK_STREAM (2 * LINK_RX_BYTES)
static uint8_t link_tx[LINK_STREAM], link_rx[16];

static bool link_accepted(void *arg)
{
    (void)arg;
    return test_link->accept_head == 1;
}

static bool link_rx_reaches(void *arg)
{
    return test_link->slots[0].rx_head == *(const word_t *)arg;
}

static bool client_has_three(void *arg)
{
    struct client *c = arg;
    return c->rx_len >= 3 || c->error;
}

static bool link_listen_answered(void *arg)
{
    return test_link->listen_answered == *(const word_t *)arg;
}

/* Make a listen request as the program does; the stack's answer. */
static word_t link_listen(word_t request, word_t port)
{
    test_link->listen_port = port;
    test_link->listen_request = request;
    return wait_for(link_listen_answered, &request) ? test_link->listen_status : ~(word_t)0;
}

/*
 * The stack takes no index the program writes outside what it published
 * (rx_tail) or more than a ring ahead (tx_head, accept_tail): such a word is
 * ignored, so it can neither make the stack overwrite unread rx bytes, nor
 * send bytes that were never written, nor put a connection where the program
 * will not look (socket_link.h, invariant 4).  Good words go on working after
 * bad ones, and a listen on a port that is none is refused.
 */
TEST(lwip_socket_link_ignores_bad_program_indices)
{
    stack_init();
    struct usage before = usage_now();
    cptr_t frame;
    CHECK_OK(obj_alloc(OBJ_LARGE_FRAME, 0, &frame));
    word_t v = vaddr_alloc(ARCH_LARGE_PAGE_SIZE, ARCH_LARGE_PAGE_SIZE);
    CHECK_OK(map_frame(frame, ROOT_SLOT_VSPACE, v, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
    test_link = (struct socket_link *)v;
    socket_link_attach(test_link);
    CHECK_EQ(link_listen(1, LINK_PORT), SOCKET_OK);
    CHECK(socket_link_listening());

    fill_pattern(link_tx, sizeof(link_tx), 0xabcdef);
    struct client c = { .tx = link_tx, .tx_len = sizeof(link_tx), .rx = link_rx, .rx_cap = sizeof(link_rx) };
    CHECK(client_connect(&c, LINK_PORT));
    CHECK(wait_for(link_accepted, NULL));
    CHECK_EQ(test_link->accept_queue[0], 0);
    test_link->accept_tail = 1;
    struct link_slot *slot = &test_link->slots[0];

    /* rx: the ring fills; a tail beyond what was published opens no room. */
    word_t full = LINK_RX_BYTES;
    CHECK(wait_for(link_rx_reaches, &full));
    CHECK(!memcmp(slot->rx, link_tx, LINK_RX_BYTES));
    slot->rx_tail = 3 * LINK_RX_BYTES + 5;
    for (int i = 0; i < 100; i++)
        pump();
    CHECK_EQ(slot->rx_head, LINK_RX_BYTES);
    CHECK(!memcmp(slot->rx, link_tx, LINK_RX_BYTES));
    slot->rx_tail = LINK_RX_BYTES;      /* all read: the rest comes */
    word_t all = LINK_STREAM;
    CHECK(wait_for(link_rx_reaches, &all));
    CHECK(!memcmp(slot->rx, link_tx + LINK_RX_BYTES, LINK_RX_BYTES));

    /* tx: a head more than a ring ahead sends nothing; a good one sends what it covers. */
    slot->tx_head = LINK_TX_BYTES + 1;
    for (int i = 0; i < 100; i++)
        pump();
    CHECK_EQ(slot->tx_tail, 0);
    CHECK_EQ(c.rx_len, 0);
    memcpy(slot->tx, "abc", 3);
    slot->tx_head = 3;
    CHECK(wait_for(client_has_three, &c));
    CHECK_EQ(c.rx_len, 3);
    CHECK(!memcmp(link_rx, "abc", 3));
    CHECK_EQ(slot->tx_tail, 3);

    /* accept: a tail more than a queue ahead refuses the next connection, queueing nothing. */
    test_link->accept_tail = 1000;
    struct client refused = { 0 };
    CHECK(client_connect(&refused, LINK_PORT));
    CHECK(wait_for(client_ended, &refused));
    CHECK(refused.error);
    CHECK_EQ(test_link->accept_head, 1);
    test_link->accept_tail = 1;

    /* close: what was written, then the FIN; then the slot is the stack's again. */
    slot->program_flags = LINK_CLOSED;
    CHECK(wait_for(client_ended, &c));
    CHECK(!c.error);
    CHECK_EQ(c.rx_len, 3);
    client_close(&c);

    CHECK_EQ(link_listen(2, 70000), SOCKET_BAD_PORT);
    CHECK(!socket_link_listening());
    CHECK_EQ(link_listen(3, 0), SOCKET_OK);
    test_link = NULL;
    for (int i = 0; i < 100; i++)
        pump();
    CHECK_USAGE(before);
}
