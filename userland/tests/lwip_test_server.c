/*
 * The lwIP tests' TCP server: the glue between lwIP's raw API and a
 * byte-stream protocol (lwip_test_server.h).  Each connection's life:
 *
 *   accept      -> a slot (or a reset: refused)
 *   first data  -> open: the protocol's state (or none yet: the input is held
 *                  and poll tries open again)
 *   recv        -> input (or held, while the backlog is over its limit)
 *   recv NULL   -> the peer closed: close once the backlog is out
 *   input false -> the protocol closed (QUIT, a bad frame): the same
 *   err         -> lwIP already freed the pcb (RST, abort): free the rest
 *
 * A slot and its state are freed exactly once, in release(), and after it
 * no callback of that pcb can reach them (detach() clears its arg and
 * callbacks first).
 */
#include <libc.h>
#include "lwip/sys.h"
#include "lwip_test_server.h"

/* How often lwIP's poll callback runs, in its coarse timer's 500 ms periods. */
#define POLL_PERIODS 2
/* A closing connection whose peer has not taken its replies after this many polls is reset. */
#define CLOSE_POLLS_MAX 20
static void detach(struct tcp_pcb *pcb)
{
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_sent(pcb, NULL);
    tcp_err(pcb, NULL);
    tcp_poll(pcb, NULL, 0);
}


/* Free the slot and everything it holds; the pcb is lwIP's (freed, closing or aborted) already. */
static void release(struct tcp_server_conn *c)
{
    struct tcp_server *s = c->server;
    if (c->state)
        s->protocol->close(c->state);
    out_queue_clear(&c->backlog);
    if (c->held)
        pbuf_free(c->held);
    memset(c, 0, sizeof(*c));
    s->live--;
}

/* Reset the connection and free it.  Returns ERR_ABRT, what a callback must then return. */
static err_t reset(struct tcp_server_conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    c->server->reset++;
    detach(pcb);
    release(c);
    tcp_abort(pcb);
    return ERR_ABRT;
}

/* Queue a piece of reply in TCP's send buffer; the bytes it took (0: no room now). */
static size_t write_some(struct tcp_pcb *pcb, const void *data, size_t len)
{
    size_t n = tcp_sndbuf(pcb);
    if (n > len)
        n = len;
    if (n > 0xffff)
        n = 0xffff;
    if (!n || tcp_sndqueuelen(pcb) >= TCP_SND_QUEUELEN)
        return 0;
    return tcp_write(pcb, data, (u16_t)n, TCP_WRITE_FLAG_COPY) == ERR_OK ? n : 0;
}

/*
 * Move backlog bytes into TCP's send buffer, as many as fit.  TCP copies
 * them (into lwIP's heap), so lwIP holds at most a send buffer's worth of
 * each connection's output; the rest stays in the backlog until the sent
 * callback says room was made.
 */
static void flush_backlog(struct tcp_server_conn *c)
{
    size_t len;
    const void *piece;
    while ((piece = out_queue_peek(&c->backlog, &len))) {
        size_t n = write_some(c->pcb, piece, len);
        if (!n)
            return;
        out_queue_drop(&c->backlog, n);
    }
}

static bool over_limit(const struct tcp_server_conn *c)
{
    return c->backlog.bytes > TCP_SERVER_BACKLOG_LIMIT;
}

/* The protocol's output: to TCP directly when nothing waits before it, else to the backlog. */
static void conn_out(void *ctx, const void *buf, size_t len)
{
    struct tcp_server_conn *c = ctx;
    const char *p = buf;
    if (c->out_of_memory)
        return;
    while (len && !c->backlog.head) {
        size_t n = write_some(c->pcb, p, len);
        if (!n)
            break;
        p += n;
        len -= n;
    }
    if (!out_queue_push(&c->backlog, p, len))
        c->out_of_memory = true;
    if (c->backlog.bytes > c->server->backlog_peak)
        c->server->backlog_peak = c->backlog.bytes;
}

/*
 * Keep received bytes for later, out of the receive pool.  The window bounds
 * a connection's held bytes, not its segments: a pipelining client's small
 * segments, one pool pbuf each, could pin the whole pool, and then every
 * frame is dropped on arrival, the ACKs that would drain the backlog too,
 * until the peer gives up (the stalls of docs/network.md).  So the held
 * chain is copied into one pbuf of the stack's heap; if the heap has no
 * room, the pool pbufs stay held.
 */
static void hold(struct tcp_server_conn *c, struct pbuf *p)
{
    if (c->held)
        pbuf_cat(c->held, p);
    else
        c->held = p;
    if (!c->held->next && pbuf_get_allocsrc(c->held) != PBUF_TYPE_ALLOC_SRC_MASK_STD_MEMP_PBUF_POOL)
        return;
    struct pbuf *copy = pbuf_clone(PBUF_RAW, PBUF_RAM, c->held);
    if (copy) {
        pbuf_free(c->held);
        c->held = copy;
    }
}

/*
 * Give a received chain to the protocol, a pbuf at a time, and acknowledge
 * to the window what it took.  It stops early when the backlog passes its
 * limit between two pbufs; the rest is held and fed again later.
 */
static err_t feed(struct tcp_server_conn *c, struct pbuf *p)
{
    u16_t taken = 0;
    for (struct pbuf *q = p; q && !c->closing; q = q->next) {
        if (!c->server->protocol->input(c->state, q->payload, q->len, conn_out, c))
            c->closing = true;
        if (c->closing || c->out_of_memory)
            break;
        taken = (u16_t)(taken + q->len);
        if (q->next && over_limit(c))
            break;
    }
    if (c->out_of_memory) {
        pbuf_free(p);
        return reset(c);
    }
    if (c->closing || taken == p->tot_len) {
        tcp_recved(c->pcb, p->tot_len);
        pbuf_free(p);
        return ERR_OK;
    }
    tcp_recved(c->pcb, taken);
    hold(c, pbuf_free_header(p, taken));
    return ERR_OK;
}

/*
 * Make the connection's protocol state.  When that fails (no memory), the
 * connection that has been idle longest, and at least evict_idle_ms, gives
 * its state up (it is reset) and open is tried once more: peers that vanished
 * without a FIN or RST reaching us (QEMU's user network does that to
 * connections the host reset before they were set up) would otherwise keep
 * their memory for ever.
 */
static void open_state(struct tcp_server_conn *c)
{
    struct tcp_server *s = c->server;
    c->state = s->protocol->open(s->protocol->ctx);
    if (c->state)
        return;
    u32_t now = sys_now();
    struct tcp_server_conn *idlest = NULL;
    for (unsigned i = 0; i < TCP_SERVER_MAX_CONNS; i++) {
        struct tcp_server_conn *o = &s->conns[i];
        if (o->pcb && o != c && o->state && (u32_t)(now - o->last_active) >= s->evict_idle_ms &&
            (!idlest || (u32_t)(now - o->last_active) > (u32_t)(now - idlest->last_active)))
            idlest = o;
    }
    if (idlest) {
        s->evicted++;
        reset(idlest);
        c->state = s->protocol->open(s->protocol->ctx);
    }
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err);
static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len);
static err_t on_poll(void *arg, struct tcp_pcb *pcb);
static void on_err(void *arg, err_t err);

static void attach(struct tcp_pcb *pcb, struct tcp_server_conn *c)
{
    tcp_arg(pcb, c);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_err);
    tcp_poll(pcb, on_poll, POLL_PERIODS);
}

/*
 * Close once the backlog is out.  After tcp_close succeeds the pcb is lwIP's
 * (it sends what TCP still holds, then the FIN) and no callback of ours runs
 * for it again.
 */
static err_t try_close(struct tcp_server_conn *c)
{
    if (!c->closing || c->backlog.head)
        return ERR_OK;
    struct tcp_pcb *pcb = c->pcb;
    detach(pcb);
    if (tcp_close(pcb) != ERR_OK) {
        /* No memory for the FIN now: the poll callback tries again. */
        attach(pcb, c);
        return ERR_OK;
    }
    release(c);
    return ERR_OK;
}

/* Send what can go now, give held input to the protocol if the backlog allows, close if due. */
static err_t progress(struct tcp_server_conn *c)
{
    flush_backlog(c);
    if (!c->state && c->held && !c->closing)
        open_state(c);
    if (c->held && c->state && !c->closing && !over_limit(c)) {
        struct pbuf *p = c->held;
        c->held = NULL;
        if (feed(c, p) == ERR_ABRT)
            return ERR_ABRT;
        flush_backlog(c);
    }
    tcp_output(c->pcb);
    return try_close(c);
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct tcp_server_conn *c = arg;
    if (!p || err != ERR_OK) {
        if (p)
            pbuf_free(p);
        c->closing = true;
        return progress(c);
    }
    if (c->closing) {
        tcp_recved(pcb, p->tot_len);
        pbuf_free(p);
        return ERR_OK;
    }
    c->last_active = sys_now();
    if (!c->state && !c->held) {
        open_state(c);
        if (!c->state)
            c->server->deferred++;
    }
    if (c->held || !c->state || over_limit(c)) {
        c->server->holds++;
        hold(c, p);
        return ERR_OK;
    }
    if (feed(c, p) == ERR_ABRT)
        return ERR_ABRT;
    return progress(c);
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)pcb;
    (void)len;
    struct tcp_server_conn *c = arg;
    c->last_active = sys_now();
    return progress(c);
}

static err_t on_poll(void *arg, struct tcp_pcb *pcb)
{
    (void)pcb;
    struct tcp_server_conn *c = arg;
    if (c->closing && ++c->close_polls > CLOSE_POLLS_MAX)
        return reset(c);
    if (!c->state && c->held && !c->closing && ++c->open_polls > TCP_SERVER_OPEN_POLLS)
        return reset(c);
    return progress(c);
}

/* lwIP has freed the pcb (a reset from the peer, or an abort): free the slot. */
static void on_err(void *arg, err_t err)
{
    struct tcp_server_conn *c = arg;
    if (err == ERR_RST)
        c->server->reset_by_peer++;
    else
        c->server->aborted_by_lwip++;
    release(c);
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct tcp_server *s = arg;
    if (!pcb || err != ERR_OK) {
        /* lwIP had no pcb for a new connection: it already dropped the SYN. */
        s->refused++;
        return ERR_VAL;
    }
    struct tcp_server_conn *c = NULL;
    for (unsigned i = 0; i < TCP_SERVER_MAX_CONNS && !c; i++)
        if (!s->conns[i].pcb)
            c = &s->conns[i];
    if (!c) {
        s->refused++;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    memset(c, 0, sizeof(*c));
    c->pcb = pcb;
    c->server = s;
    c->last_active = sys_now();
    s->live++;
    s->accepted++;
    attach(pcb, c);
    /*
     * Below the listener's priority: when lwIP has no pcb for a new SYN it
     * resets the connection inactive longest (tcp_kill_prio) instead of
     * dropping the SYN, so dead connections cannot lock new clients out.
     */
    tcp_setprio(pcb, TCP_PRIO_MIN);
    /* Replies are whole answers to requests: send them at once, as Redis does (TCP_NODELAY). */
    tcp_nagle_disable(pcb);
    /* A peer that vanished without a reset reaching us is found by probing (lwipopts.h). */
    ip_set_option(pcb, SOF_KEEPALIVE);
    return ERR_OK;
}

err_t tcp_server_start(struct tcp_server *s, u16_t port, const struct tcp_server_protocol *protocol)
{
    memset(s, 0, sizeof(*s));
    s->protocol = protocol;
    s->evict_idle_ms = TCP_SERVER_EVICT_IDLE_MS;
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb)
        return ERR_MEM;
    err_t err = tcp_bind(pcb, IP_ANY_TYPE, port);
    if (err != ERR_OK) {
        tcp_close(pcb);
        return err;
    }
    err_t listen_err = ERR_OK;
    struct tcp_pcb *listener = tcp_listen_with_backlog_and_err(pcb, TCP_DEFAULT_LISTEN_BACKLOG, &listen_err);
    if (!listener) {
        tcp_close(pcb);
        return listen_err;
    }
    s->listener = listener;
    tcp_arg(listener, s);
    tcp_accept(listener, on_accept);
    return ERR_OK;
}

void tcp_server_stop(struct tcp_server *s)
{
    for (unsigned i = 0; i < TCP_SERVER_MAX_CONNS; i++)
        if (s->conns[i].pcb)
            reset(&s->conns[i]);
    if (s->listener) {
        tcp_arg(s->listener, NULL);
        tcp_accept(s->listener, NULL);
        tcp_close(s->listener);
        s->listener = NULL;
    }
}
