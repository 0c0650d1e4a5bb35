/*
 * TCP sockets on lwIP's raw API (the process's own stack, net.c).
 *
 * A listening socket queues the connections lwIP accepted until accept4()
 * takes them; each connection socket exists from the moment lwIP accepted
 * it, so data and a reset that come before accept4() are kept.  Received
 * data waits as lwIP's pbuf chain and the receive window opens as the
 * program reads it (tcp_recved), so a slow reader slows its peer down as
 * on Linux.  A write copies what fits lwIP's send buffer and sends it; when
 * nothing fits, it fails with EAGAIN on a non-blocking socket (Redis then
 * waits for EPOLLOUT) or waits.  When lwIP drops a connection (a reset, or
 * too many retransmissions) the socket keeps the error for the next call.
 *
 * Only IPv4 TCP exists: other families get EAFNOSUPPORT, other types
 * EPROTONOSUPPORT.  Outgoing connections are not supported (EOPNOTSUPP):
 * Redis needs them only for replication and cluster.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "lwip/tcp.h"
#include "personality.h"

#define ACCEPT_QUEUE 64

struct sock {
    struct tcp_pcb *pcb;        /* NULL before bind, and once lwIP dropped the connection */
    bool listening;
    bool reuse_addr;
    bool nodelay;
    int error;                  /* a pending error (errno), reported once by SO_ERROR or by I/O */
    uint64_t woken;             /* px_wakeup() of the last data, FIN, reset or connection */
    bool dropped;               /* lwIP dropped the connection: reads and writes fail */
    /* a connection */
    struct pbuf *rx;            /* received and not yet read */
    bool rx_end;                /* the peer sent FIN */
    ip4_addr_t peer_addr;
    u16_t peer_port;
    /* a listener */
    struct sock *queue[ACCEPT_QUEUE];
    unsigned queue_head, queue_len;
};

static struct sock *sock_of(int fd, long *err)
{
    struct fd *f = fd_get(fd);
    if (!f) {
        *err = -EBADF;
        return NULL;
    }
    if (f->kind != FD_SOCKET) {
        *err = -ENOTSOCK;
        return NULL;
    }
    return f->object;
}

long px_socket(int domain, int type, int protocol)
{
    if (domain != AF_INET)
        return -EAFNOSUPPORT;
    if ((type & 0xf) != SOCK_STREAM || (protocol && protocol != IPPROTO_TCP))
        return -EPROTONOSUPPORT;
    if (!px_net_present())
        return -ENETDOWN;
    px_net_poll();           /* starts lwIP on the first socket */
    struct sock *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    int flags = (type & SOCK_NONBLOCK ? O_NONBLOCK : 0) | (type & SOCK_CLOEXEC ? O_CLOEXEC : 0);
    int fd = fd_install(FD_SOCKET, flags, s);
    if (fd < 0)
        free(s);
    return fd;
}

static long sockaddr_in_get(const void *addr, socklen_t len, ip4_addr_t *ip, u16_t *port)
{
    const struct sockaddr_in *in = addr;
    if (len < (socklen_t)sizeof *in)
        return -EINVAL;
    if (in->sin_family != AF_INET)
        return -EAFNOSUPPORT;
    ip4_addr_set_u32(ip, in->sin_addr.s_addr);
    *port = ntohs(in->sin_port);
    return 0;
}

static void sockaddr_in_put(void *addr, socklen_t *len, const ip4_addr_t *ip, u16_t port)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
    in.sin_addr.s_addr = ip4_addr_get_u32(ip);
    socklen_t n = *len < (socklen_t)sizeof in ? *len : (socklen_t)sizeof in;
    memcpy(addr, &in, n);
    *len = sizeof in;
}

long px_bind(int fd, const void *addr, socklen_t len)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (s->pcb || s->listening)
        return -EINVAL;
    ip4_addr_t ip;
    u16_t port;
    if ((err = sockaddr_in_get(addr, len, &ip, &port)))
        return err;
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb)
        return -ENOBUFS;
    if (s->reuse_addr)
        ip_set_option(pcb, SOF_REUSEADDR);
    err_t e = tcp_bind(pcb, &ip, port);
    if (e != ERR_OK) {
        tcp_close(pcb);
        return e == ERR_USE ? -EADDRINUSE : -EADDRNOTAVAIL;
    }
    s->pcb = pcb;
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
    else if (!s->rx)
        s->rx = p;
    else
        pbuf_cat(s->rx, p);
    return ERR_OK;
}

static void on_error(void *arg, err_t err)
{
    struct sock *s = arg;
    s->pcb = NULL;              /* lwIP has freed it */
    s->dropped = true;
    s->woken = px_wakeup();
    s->error = err == ERR_RST ? ECONNRESET : err == ERR_ABRT ? ECONNABORTED : ETIMEDOUT;
}

static void connection_callbacks(struct sock *s)
{
    tcp_arg(s->pcb, s);
    tcp_recv(s->pcb, on_receive);
    tcp_err(s->pcb, on_error);
    if (s->nodelay)
        tcp_nagle_disable(s->pcb);
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct sock *l = arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    if (l->queue_len == ACCEPT_QUEUE)
        return ERR_MEM;         /* lwIP resets the connection, as a full backlog would */
    struct sock *s = calloc(1, sizeof *s);
    if (!s)
        return ERR_MEM;
    s->pcb = pcb;
    s->peer_addr = pcb->remote_ip;
    s->peer_port = pcb->remote_port;
    connection_callbacks(s);
    l->queue[(l->queue_head + l->queue_len++) % ACCEPT_QUEUE] = s;
    l->woken = px_wakeup();
    return ERR_OK;
}

long px_listen(int fd, int backlog)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (s->listening)
        return 0;
    if (!s->pcb) {
        struct sockaddr_in any = { .sin_family = AF_INET };
        if ((err = px_bind(fd, &any, sizeof any)))
            return err;
    }
    u8_t depth = backlog <= 0 ? 1 : backlog > 255 ? 255 : (u8_t)backlog;
    struct tcp_pcb *l = tcp_listen_with_backlog(s->pcb, depth);
    if (!l)
        return -ENOBUFS;
    s->pcb = l;
    s->listening = true;
    tcp_arg(l, s);
    tcp_accept(l, on_accept);
    px_net_serving();
    return 0;
}

static bool has_connection(void *ctx)
{
    return ((struct sock *)ctx)->queue_len > 0;
}

long px_accept4(int fd, void *addr, socklen_t *len, int flags)
{
    long err = 0;
    struct sock *l = sock_of(fd, &err);
    if (!l)
        return err;
    if (!l->listening)
        return -EINVAL;
    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
        return -EINVAL;
    struct fd *f = fd_get(fd);
    if (!has_connection(l)) {
        if (f->flags & O_NONBLOCK)
            return -EAGAIN;
        px_block_until(has_connection, l, UINT64_MAX);
    }
    struct sock *s = l->queue[l->queue_head];
    int nfd = fd_install(FD_SOCKET, (flags & SOCK_NONBLOCK ? O_NONBLOCK : 0) |
                                    (flags & SOCK_CLOEXEC ? O_CLOEXEC : 0), s);
    if (nfd < 0)
        return nfd;             /* it stays queued */
    l->queue_head = (l->queue_head + 1) % ACCEPT_QUEUE;
    l->queue_len--;
    if (addr && len)
        sockaddr_in_put(addr, len, &s->peer_addr, s->peer_port);
    return nfd;
}

long px_connect(int fd, const void *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    long err = 0;
    return sock_of(fd, &err) ? -EOPNOTSUPP : err;
}

long px_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (len < (socklen_t)sizeof(int))
        return -EINVAL;
    int on = *(const int *)val;
    if (level == SOL_SOCKET && name == SO_REUSEADDR) {
        s->reuse_addr = on;
        if (s->pcb && on)
            ip_set_option(s->pcb, SOF_REUSEADDR);
        else if (s->pcb)
            ip_reset_option(s->pcb, SOF_REUSEADDR);
        return 0;
    }
    if (level == IPPROTO_TCP && name == TCP_NODELAY) {
        s->nodelay = on;
        if (s->pcb && !s->listening && on)
            tcp_nagle_disable(s->pcb);
        else if (s->pcb && !s->listening)
            tcp_nagle_enable(s->pcb);
        return 0;
    }
    /* Accepted and without effect: lwIP has no keepalive here, and its buffers are fixed. */
    if ((level == SOL_SOCKET && (name == SO_KEEPALIVE || name == SO_SNDBUF || name == SO_RCVBUF ||
                                 name == SO_LINGER)) ||
        (level == IPPROTO_TCP && (name == TCP_KEEPIDLE || name == TCP_KEEPINTVL || name == TCP_KEEPCNT)))
        return 0;
    return -ENOPROTOOPT;
}

long px_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (*len < (socklen_t)sizeof(int))
        return -EINVAL;
    int out;
    if (level == SOL_SOCKET && name == SO_ERROR) {
        out = s->error;
        s->error = 0;
    } else if (level == SOL_SOCKET && name == SO_TYPE) {
        out = SOCK_STREAM;
    } else if (level == SOL_SOCKET && name == SO_SNDBUF) {
        out = TCP_SND_BUF;
    } else if (level == SOL_SOCKET && name == SO_RCVBUF) {
        out = TCP_WND;
    } else if (level == IPPROTO_TCP && name == TCP_NODELAY) {
        out = s->nodelay;
    } else {
        return -ENOPROTOOPT;
    }
    memcpy(val, &out, sizeof out);
    *len = sizeof out;
    return 0;
}

long px_getsockname(int fd, void *addr, socklen_t *len, bool peer)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (peer) {
        if (s->listening || (!s->pcb && !s->dropped))
            return -ENOTCONN;
        sockaddr_in_put(addr, len, &s->peer_addr, s->peer_port);
    } else {
        ip4_addr_t any = { 0 };
        sockaddr_in_put(addr, len, s->pcb ? &s->pcb->local_ip : &any, s->pcb ? s->pcb->local_port : 0);
    }
    return 0;
}

long px_shutdown(int fd, int how)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (how < SHUT_RD || how > SHUT_RDWR)
        return -EINVAL;
    if (s->listening || !s->pcb)
        return -ENOTCONN;
    tcp_shutdown(s->pcb, how != SHUT_WR, how != SHUT_RD);
    return 0;
}

static bool readable(void *ctx)
{
    struct sock *s = ctx;
    return s->rx || s->rx_end || s->dropped;
}

long socket_read(void *sock, void *buf, size_t len, bool nonblock)
{
    struct sock *s = sock;
    if (s->listening)
        return -EINVAL;
    if (!readable(s)) {
        if (nonblock)
            return -EAGAIN;
        px_block_until(readable, s, UINT64_MAX);
    }
    if (s->rx) {
        u16_t n = (u16_t)(len < 0xffff ? len : 0xffff);
        if (n > s->rx->tot_len)
            n = s->rx->tot_len;
        pbuf_copy_partial(s->rx, buf, n, 0);
        s->rx = pbuf_free_header(s->rx, n);
        if (s->pcb)
            tcp_recved(s->pcb, n);
        return n;
    }
    if (s->dropped) {
        int e = s->error ? s->error : ECONNRESET;
        s->error = 0;
        return s->rx_end ? 0 : -e;
    }
    return 0;                   /* FIN: end of file */
}

static bool writable(void *ctx)
{
    struct sock *s = ctx;
    return s->dropped || (s->pcb && tcp_sndbuf(s->pcb) > 0 && tcp_sndqueuelen(s->pcb) < TCP_SND_QUEUELEN);
}

long socket_write(void *sock, const void *buf, size_t len, bool nonblock)
{
    struct sock *s = sock;
    if (s->listening || (!s->pcb && !s->dropped))
        return -ENOTCONN;
    if (!len)
        return 0;
    if (!writable(s)) {
        if (nonblock)
            return -EAGAIN;
        px_block_until(writable, s, UINT64_MAX);
    }
    if (s->dropped)
        return -EPIPE;          /* SIGPIPE is never raised: the program ignores it or would */
    size_t room = tcp_sndbuf(s->pcb);
    u16_t n = (u16_t)(len < room ? len : room);
    err_t e;
    while ((e = tcp_write(s->pcb, buf, n, TCP_WRITE_FLAG_COPY)) == ERR_MEM && n > 1)
        n /= 2;
    if (e == ERR_MEM)
        return nonblock ? -EAGAIN : -ENOBUFS;
    if (e != ERR_OK)
        return -EPIPE;
    tcp_output(s->pcb);
    return n;
}

static void drop_callbacks(struct tcp_pcb *pcb)
{
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_err(pcb, NULL);
}

static void connection_close(struct sock *s)
{
    if (s->pcb) {
        drop_callbacks(s->pcb);
        if (tcp_close(s->pcb) != ERR_OK)
            tcp_abort(s->pcb);
    }
    if (s->rx)
        pbuf_free(s->rx);
    free(s);
}

void socket_close(void *sock)
{
    struct sock *s = sock;
    if (s->listening) {
        tcp_arg(s->pcb, NULL);
        tcp_accept(s->pcb, NULL);
        tcp_close(s->pcb);
        while (s->queue_len) {
            struct sock *c = s->queue[s->queue_head];
            s->queue_head = (s->queue_head + 1) % ACCEPT_QUEUE;
            s->queue_len--;
            if (c->pcb) {
                drop_callbacks(c->pcb);
                tcp_abort(c->pcb);
                c->pcb = NULL;
            }
            connection_close(c);
        }
        free(s);
        return;
    }
    connection_close(s);
}

unsigned socket_ready(void *sock)
{
    struct sock *s = sock;
    if (s->listening)
        return s->queue_len ? EPOLLIN : 0;
    if (!s->pcb && !s->dropped)
        return EPOLLOUT | EPOLLHUP;     /* never connected, as Linux says */
    unsigned r = 0;
    if (readable(s))
        r |= EPOLLIN | (s->rx_end ? EPOLLRDHUP : 0);
    if (writable(s))
        r |= EPOLLOUT;
    if (s->dropped)
        r |= EPOLLERR | EPOLLHUP;
    return r;
}

uint64_t socket_woken(void *sock)
{
    return ((struct sock *)sock)->woken;
}
