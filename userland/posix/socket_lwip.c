/*
 * The in-process transport (socket_transport.h): the process's own lwIP
 * (NO_SYS, driven from the main thread) on its channel to the NIC driver on
 * core 0 (net_channel.h, channel_netif.h), as a per-core instance of
 * docs/network.md has.  The driver signals the channel's notification when
 * it put frames into the rx ring and on every timer tick.
 *
 * A listening socket queues the connections lwIP accepted until accept4()
 * takes them; each connection socket exists from the moment lwIP accepted
 * it, so data and a reset that come before accept4() are kept.  Received
 * data waits as lwIP's pbuf chain and the receive window opens as the
 * program reads it (tcp_recved), so a slow reader slows its peer down as
 * on Linux.  A write copies what fits lwIP's send buffer and sends it.
 */
#include <errno.h>
#include <stdlib.h>
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "channel_netif.h"
#include "net_channel.h"
#include "personality.h"
#include "socket_transport.h"

static struct {
    bool started;
    bool serving;
    struct netif netif;
    struct frame_port port;
} net;

static void lwip_poll(void)
{
    struct net_channel *ch = posix_start_page->channel;
    if (!net.started) {
        if (channel_netif_start(&net.netif, &net.port, ch) != ERR_OK) {
            static const char msg[] = "posix: lwIP could not add the channel's interface\n";
            px_console_write(msg, sizeof msg - 1);
            channel_report(&ch->state, ch->driver, CHANNEL_FAILED);
            px_exit_group(70);
        }
        net.started = true;
    }
    eth_netif_poll(&net.netif);
    sys_check_timeouts();
    channel_flush(ch);
}

static cptr_t lwip_wake(void)
{
    return posix_start_page->channel->wake;
}

static long lwip_bind(struct sock *s)
{
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb)
        return -ENOBUFS;
    if (s->reuse_addr)
        ip_set_option(pcb, SOF_REUSEADDR);
    ip4_addr_t ip;
    ip4_addr_set_u32(&ip, s->local_addr);
    err_t e = tcp_bind(pcb, &ip, s->local_port);
    if (e != ERR_OK) {
        tcp_close(pcb);
        return e == ERR_USE ? -EADDRINUSE : -EADDRNOTAVAIL;
    }
    s->local_port = pcb->local_port;
    s->lwip.pcb = pcb;
    return 0;
}

static err_t on_receive(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)pcb;
    (void)err;
    struct sock *s = arg;
    s->woken = px_wakeup();
    if (!p)
        s->rx_end = true;
    else if (!s->lwip.rx)
        s->lwip.rx = p;
    else
        pbuf_cat(s->lwip.rx, p);
    return ERR_OK;
}

static void on_error(void *arg, err_t err)
{
    struct sock *s = arg;
    s->lwip.pcb = NULL;         /* lwIP has freed it */
    s->dropped = true;
    s->woken = px_wakeup();
    s->error = err == ERR_RST ? ECONNRESET : err == ERR_ABRT ? ECONNABORTED : ETIMEDOUT;
}

static void lwip_options(struct sock *s)
{
    struct tcp_pcb *pcb = s->lwip.pcb;
    if (!pcb)
        return;
    if (s->reuse_addr)
        ip_set_option(pcb, SOF_REUSEADDR);
    else
        ip_reset_option(pcb, SOF_REUSEADDR);
    if (!s->listening && s->nodelay)
        tcp_nagle_disable(pcb);
    else if (!s->listening)
        tcp_nagle_enable(pcb);
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct sock *l = arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    if (l->lwip.queue_len == ACCEPT_QUEUE)
        return ERR_MEM;         /* lwIP resets the connection, as a full backlog would */
    struct sock *s = calloc(1, sizeof *s);
    if (!s)
        return ERR_MEM;
    s->connection = true;
    s->lwip.pcb = pcb;
    s->peer_addr = ip4_addr_get_u32(&pcb->remote_ip);
    s->peer_port = pcb->remote_port;
    s->local_addr = ip4_addr_get_u32(&pcb->local_ip);
    s->local_port = pcb->local_port;
    tcp_arg(pcb, s);
    tcp_recv(pcb, on_receive);
    tcp_err(pcb, on_error);
    l->lwip.queue[(l->lwip.queue_head + l->lwip.queue_len++) % ACCEPT_QUEUE] = s;
    l->woken = px_wakeup();
    return ERR_OK;
}

static long lwip_listen(struct sock *s, int backlog)
{
    u8_t depth = backlog <= 0 ? 1 : backlog > 255 ? 255 : (u8_t)backlog;
    struct tcp_pcb *l = tcp_listen_with_backlog(s->lwip.pcb, depth);
    if (!l)
        return -ENOBUFS;
    s->lwip.pcb = l;
    tcp_arg(l, s);
    tcp_accept(l, on_accept);
    struct net_channel *ch = posix_start_page->channel;
    if (!net.serving) {
        net.serving = true;
        channel_report(&ch->state, ch->driver, CHANNEL_SERVING);
    }
    return 0;
}

static bool lwip_pending(struct sock *l)
{
    return l->lwip.queue_len > 0;
}

static struct sock *lwip_accept(struct sock *l)
{
    struct sock *s = l->lwip.queue[l->lwip.queue_head];
    l->lwip.queue_head = (l->lwip.queue_head + 1) % ACCEPT_QUEUE;
    l->lwip.queue_len--;
    return s;
}

static bool lwip_has_rx(struct sock *s)
{
    return s->lwip.rx != NULL;
}

static size_t lwip_read(struct sock *s, void *buf, size_t len)
{
    if (!s->lwip.rx)
        return 0;
    u16_t n = (u16_t)(len < 0xffff ? len : 0xffff);
    if (n > s->lwip.rx->tot_len)
        n = s->lwip.rx->tot_len;
    pbuf_copy_partial(s->lwip.rx, buf, n, 0);
    s->lwip.rx = pbuf_free_header(s->lwip.rx, n);
    if (s->lwip.pcb)
        tcp_recved(s->lwip.pcb, n);
    return n;
}

static bool lwip_writable(struct sock *s)
{
    struct tcp_pcb *pcb = s->lwip.pcb;
    return pcb && tcp_sndbuf(pcb) > 0 && tcp_sndqueuelen(pcb) < TCP_SND_QUEUELEN;
}

static long lwip_write(struct sock *s, const void *buf, size_t len, bool nonblock)
{
    size_t room = tcp_sndbuf(s->lwip.pcb);
    u16_t n = (u16_t)(len < room ? len : room);
    err_t e;
    while ((e = tcp_write(s->lwip.pcb, buf, n, TCP_WRITE_FLAG_COPY)) == ERR_MEM && n > 1)
        n /= 2;
    if (e == ERR_MEM)
        return nonblock ? -EAGAIN : -ENOBUFS;
    if (e != ERR_OK)
        return -EPIPE;
    tcp_output(s->lwip.pcb);
    return n;
}

static void lwip_shutdown(struct sock *s, bool rd, bool wr)
{
    if (s->lwip.pcb)
        tcp_shutdown(s->lwip.pcb, rd, wr);
}

static void drop_callbacks(struct tcp_pcb *pcb)
{
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_err(pcb, NULL);
}

static void connection_close(struct sock *s)
{
    if (s->lwip.pcb) {
        drop_callbacks(s->lwip.pcb);
        if (tcp_close(s->lwip.pcb) != ERR_OK)
            tcp_abort(s->lwip.pcb);
    }
    if (s->lwip.rx)
        pbuf_free(s->lwip.rx);
    free(s);
}

static void lwip_close(struct sock *s)
{
    if (!s->listening) {
        connection_close(s);
        return;
    }
    tcp_arg(s->lwip.pcb, NULL);
    tcp_accept(s->lwip.pcb, NULL);
    tcp_close(s->lwip.pcb);
    while (s->lwip.queue_len) {
        struct sock *c = lwip_accept(s);
        if (c->lwip.pcb) {
            drop_callbacks(c->lwip.pcb);
            tcp_abort(c->lwip.pcb);
            c->lwip.pcb = NULL;
        }
        connection_close(c);
    }
    free(s);
}

const struct socket_transport lwip_transport = {
    .poll = lwip_poll, .wake = lwip_wake, .bind = lwip_bind, .listen = lwip_listen,
    .pending = lwip_pending, .accept = lwip_accept, .has_rx = lwip_has_rx, .read = lwip_read,
    .writable = lwip_writable, .write = lwip_write, .options = lwip_options,
    .shutdown = lwip_shutdown, .close = lwip_close,
};
