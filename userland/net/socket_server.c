/*
 * The stack process (socket_server.h): lwIP's raw TCP API on one side, the
 * socket link's rings on the other (socket_link.h, whose invariants this
 * file keeps as the stack).
 *
 * Each connection's received data waits in lwIP's pbufs until the rx ring
 * has room; the window opens (tcp_recved) only as the program reads from
 * the ring, so a program that reads slowly slows its peer down, as a Linux
 * socket's full receive buffer would.  What the program writes is taken
 * into lwIP's send buffer as room frees there (on ACKs), so a peer that
 * never reads fills lwIP's buffer, then the tx ring, and the program's
 * write() says EAGAIN.  Every pass looks at every slot in use: the program
 * need not say which slot it changed, and a bad word it wrote costs only
 * its own connection (invariant 4).
 *
 * It allocates no kernel object and no memory: lwIP's pools are its
 * globals, private to this space (thread.h, private_data).
 */
#include <root.h>
#include <sys.h>
#include "lwip/tcp.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "channel_netif.h"
#include "socket_link.h"
#include "socket_server.h"

/*
 * How long a connection the program closed may take to send what it wrote
 * before it is reset: a peer that never reads would otherwise hold its slot
 * for ever.
 */
#define CLOSE_LINGER_MS 20000

_Static_assert(LINK_SLOTS >= MEMP_NUM_TCP_PCB, "every connection lwIP can hold has a slot");

/* The stack's own record of slot k: what it owns is never read back from the frame. */
struct conn {
    bool in_use;                /* queued for the program, the program's, or closing */
    struct tcp_pcb *pcb;        /* NULL once lwIP dropped the connection or it was closed */
    struct pbuf *pending;       /* received, not yet in the rx ring */
    bool fin;                   /* the peer's FIN came after `pending` */
    bool shut_wr;               /* FIN sent on the program's LINK_SHUT_WR */
    bool closing;               /* the program set LINK_CLOSED */
    u32_t closing_since;        /* sys_now() when it did */
    word_t rx_head;             /* rx bytes published */
    word_t rx_read;             /* rx bytes the program has read, as last accepted */
    word_t tx_tail;             /* tx bytes taken into lwIP */
    word_t flags;               /* stack_flags as published */
};

static struct link_server {
    struct socket_link *link;
    struct tcp_pcb *listener;
    word_t listen_answered;
    word_t accept_head;
    bool news;                  /* this pass changed something the program reads */
    struct conn conns[LINK_SLOTS];
} srv;

static void publish_flags(word_t k, word_t add, enum socket_status error)
{
    struct conn *c = &srv.conns[k];
    struct link_slot *s = &srv.link->slots[k];
    if (add & LINK_DROPPED)
        s->error = error;
    c->flags |= add;
    /* Release: the rx bytes and the error before the flag (invariant 3). */
    __atomic_store_n(&s->stack_flags, c->flags, __ATOMIC_RELEASE);
    srv.news = true;
}

static word_t slot_of(const struct conn *c)
{
    return (word_t)(c - srv.conns);
}

static void detach(struct tcp_pcb *pcb)
{
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_err(pcb, NULL);
}

static void conn_free(struct conn *c)
{
    if (c->pending)
        pbuf_free(c->pending);
    *c = (struct conn){ 0 };
}

/* Tell lwIP that n bytes were read, in the u16_t pieces it takes. */
static void window_open(struct tcp_pcb *pcb, word_t n)
{
    while (pcb && n) {
        u16_t piece = (u16_t)(n < 0xffff ? n : 0xffff);
        tcp_recved(pcb, piece);
        n -= piece;
    }
}

static err_t on_receive(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)err;
    struct conn *c = arg;
    if (!p) {
        c->fin = true;
    } else if (c->closing) {
        window_open(pcb, p->tot_len);   /* nobody will read it */
        pbuf_free(p);
    } else if (c->pending) {
        pbuf_cat(c->pending, p);
    } else {
        c->pending = p;
    }
    return ERR_OK;
}

static void on_error(void *arg, err_t err)
{
    struct conn *c = arg;
    c->pcb = NULL;              /* lwIP has freed it */
    if (c->closing) {
        conn_free(c);
        return;
    }
    publish_flags(slot_of(c), LINK_DROPPED, err == ERR_RST ? SOCKET_RESET : SOCKET_ABORTED);
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    /* A program's accept_tail more than the queue behind counts as a full queue (invariant 4). */
    word_t queued = srv.accept_head - __atomic_load_n(&srv.link->accept_tail, __ATOMIC_ACQUIRE);
    word_t k = 0;
    while (k < LINK_SLOTS && srv.conns[k].in_use)
        k++;
    if (queued >= LINK_SLOTS || k == LINK_SLOTS)
        return ERR_MEM;         /* lwIP resets the connection, as a full backlog would */
    struct conn *c = &srv.conns[k];
    *c = (struct conn){ .in_use = true, .pcb = pcb };
    struct link_slot *s = &srv.link->slots[k];
    s->rx_head = s->tx_tail = s->stack_flags = s->error = 0;
    s->rx_tail = s->tx_head = s->program_flags = 0;
    s->peer_addr = ip4_addr_get_u32(&pcb->remote_ip);
    s->peer_port = pcb->remote_port;
    s->local_port = pcb->local_port;
    tcp_arg(pcb, c);
    tcp_recv(pcb, on_receive);
    tcp_err(pcb, on_error);
    tcp_nagle_disable(pcb);     /* the program writes whole replies, as Redis asks of Linux */
    srv.link->accept_queue[srv.accept_head % LINK_SLOTS] = k;
    /* Release: the slot's reset words before the program can take it (invariant 3). */
    __atomic_store_n(&srv.link->accept_head, ++srv.accept_head, __ATOMIC_RELEASE);
    srv.news = true;
    return ERR_OK;
}

static enum socket_status listen_on(word_t port)
{
    if (srv.listener) {
        tcp_accept(srv.listener, NULL);
        tcp_close(srv.listener);
        srv.listener = NULL;
    }
    if (port == 0)
        return SOCKET_OK;
    if (port > 0xffff)
        return SOCKET_BAD_PORT;
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb)
        return SOCKET_NO_MEMORY;
    ip_set_option(pcb, SOF_REUSEADDR);
    if (tcp_bind(pcb, IP4_ADDR_ANY, (u16_t)port) != ERR_OK) {
        tcp_close(pcb);
        return SOCKET_IN_USE;
    }
    struct tcp_pcb *l = tcp_listen_with_backlog(pcb, 255);
    if (!l) {
        tcp_close(pcb);
        return SOCKET_NO_MEMORY;
    }
    tcp_accept(l, on_accept);
    srv.listener = l;
    return SOCKET_OK;
}

static void serve_listen(void)
{
    word_t request = __atomic_load_n(&srv.link->listen_request, __ATOMIC_ACQUIRE);
    if (request == srv.listen_answered)
        return;
    srv.listen_answered = request;
    enum socket_status st = listen_on(__atomic_load_n(&srv.link->listen_port, __ATOMIC_RELAXED));
    srv.link->listen_status = st;
    __atomic_store_n(&srv.link->listen_answered, request, __ATOMIC_RELEASE);
    srv.news = true;
}

/* Accept what the program read since the last pass and open the window by as much. */
static void take_rx_read(struct conn *c, struct link_slot *s)
{
    word_t read = __atomic_load_n(&s->rx_tail, __ATOMIC_ACQUIRE);
    word_t n = read - c->rx_read;
    if (n == 0 || n > c->rx_head - c->rx_read)
        return;                 /* nothing, or a tail outside what was published: ignored */
    c->rx_read = read;
    window_open(c->pcb, n);
}

/* Move pending bytes into the rx ring as far as it has room; then the FIN, once all are in. */
static void push_rx(struct conn *c, struct link_slot *s, word_t k)
{
    word_t room = LINK_RX_BYTES - (c->rx_head - c->rx_read);
    word_t moved = 0;
    while (c->pending && room) {
        word_t at = c->rx_head % LINK_RX_BYTES;
        word_t n = LINK_RX_BYTES - at < room ? LINK_RX_BYTES - at : room;
        if (n > c->pending->tot_len)
            n = c->pending->tot_len;
        pbuf_copy_partial(c->pending, &s->rx[at], (u16_t)n, 0);
        c->pending = pbuf_free_header(c->pending, (u16_t)n);
        c->rx_head += n;
        room -= n;
        moved += n;
    }
    if (moved) {
        __atomic_store_n(&s->rx_head, c->rx_head, __ATOMIC_RELEASE);
        srv.news = true;
    }
    if (c->fin && !c->pending && !(c->flags & LINK_PEER_FIN))
        publish_flags(k, LINK_PEER_FIN, SOCKET_OK);
}

/* Take what the program wrote into lwIP's send buffer, as far as it has room; true when all is taken. */
static bool take_tx(struct conn *c, struct link_slot *s)
{
    word_t written = __atomic_load_n(&s->tx_head, __ATOMIC_ACQUIRE);
    word_t left = written - c->tx_tail;
    if (left > LINK_TX_BYTES)
        return true;            /* a head more than a ring ahead: ignored (invariant 4) */
    word_t taken = 0;
    while (left && c->pcb) {
        word_t at = c->tx_tail % LINK_TX_BYTES;
        word_t n = LINK_TX_BYTES - at < left ? LINK_TX_BYTES - at : left;
        if (n > tcp_sndbuf(c->pcb))
            n = tcp_sndbuf(c->pcb);
        if (n == 0 || tcp_sndqueuelen(c->pcb) >= TCP_SND_QUEUELEN ||
            tcp_write(c->pcb, &s->tx[at], (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        c->tx_tail += n;
        left -= n;
        taken += n;
    }
    if (taken) {
        __atomic_store_n(&s->tx_tail, c->tx_tail, __ATOMIC_RELEASE);
        tcp_output(c->pcb);
        srv.news = true;
    }
    return left == 0 || !c->pcb;
}

/* The program closed slot k: once its bytes are out (or it waited too long), close the connection. */
static void serve_close(struct conn *c, bool sent)
{
    if (!c->closing) {
        c->closing = true;
        c->closing_since = sys_now();
        /* Unread bytes would make lwIP's close a reset, losing the reply before it: take them. */
        window_open(c->pcb, c->rx_head - c->rx_read + (c->pending ? c->pending->tot_len : 0));
        if (c->pending)
            pbuf_free(c->pending);
        c->pending = NULL;
    }
    if (!c->pcb) {
        conn_free(c);
        return;
    }
    bool overdue = sys_now() - c->closing_since > CLOSE_LINGER_MS;
    if (!sent && !overdue)
        return;
    detach(c->pcb);
    if (overdue || tcp_close(c->pcb) != ERR_OK)
        tcp_abort(c->pcb);
    conn_free(c);
}

static void serve_slot(word_t k)
{
    struct conn *c = &srv.conns[k];
    struct link_slot *s = &srv.link->slots[k];
    word_t program_flags = __atomic_load_n(&s->program_flags, __ATOMIC_ACQUIRE);
    if (!c->closing) {
        take_rx_read(c, s);
        push_rx(c, s, k);
    }
    bool sent = take_tx(c, s);
    if (program_flags & LINK_CLOSED) {
        serve_close(c, sent);
    } else if ((program_flags & LINK_SHUT_WR) && sent && c->pcb && !c->shut_wr) {
        c->shut_wr = true;
        tcp_shutdown(c->pcb, 0, 1);
    }
}

void socket_link_attach(struct socket_link *link)
{
    srv = (struct link_server){ .link = link };
}

bool socket_link_pass(void)
{
    serve_listen();
    for (word_t k = 0; k < LINK_SLOTS; k++)
        if (srv.conns[k].in_use)
            serve_slot(k);
    bool news = srv.news;
    srv.news = false;
    return news;
}

bool socket_link_listening(void)
{
    return srv.listener != NULL;
}

void socket_server_main(void *channel)
{
    static struct netif netif;
    static struct frame_port port;
    struct net_channel *ch = channel;
    socket_link_attach(ch->socket_link);
    if (channel_netif_start(&netif, &port, ch) != ERR_OK) {
        printf("socket server: lwIP could not add the channel's interface\n");
        channel_report(&ch->state, ch->driver, CHANNEL_FAILED);
        return;
    }
    bool serving = false;
    u32_t program_woken = sys_now();
    for (;;) {
        word_t w = 0;
        if (sys_wait(ch->wake, &w) != E_OK) {
            printf("socket server: waiting on its notification failed\n");
            return;
        }
        eth_netif_poll(&netif);
        sys_check_timeouts();
        bool news = socket_link_pass();
        if (!serving && socket_link_listening()) {
            serving = true;
            channel_report(&ch->state, ch->driver, CHANNEL_SERVING);
        }
        channel_flush(ch);
        /* The program's timers wait for a wake-up: the driver's ticks, forwarded (invariant 6). */
        u32_t now = sys_now();
        if (news || now - program_woken >= LINK_TICK_MS) {
            program_woken = now;
            sys_signal(ch->program_signal);
        }
    }
}
