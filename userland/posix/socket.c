/*
 * TCP sockets at the fd level: the calls' checks and errors, blocking and
 * non-blocking I/O, readiness for epoll.  A transport (socket_transport.h)
 * carries the bytes: the process's own lwIP, or the stack process's over
 * the socket link.
 *
 * When nothing can be read, a read fails with EAGAIN on a non-blocking
 * socket (Redis then waits for EPOLLIN) or waits; when nothing fits the
 * transport's send buffer, a write does the same (EPOLLOUT).  When the
 * connection is dropped (a reset, or too many retransmissions) the socket
 * keeps the error for the next call, after the bytes received before it.
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
#include "lwipopts.h"
#include "personality.h"
#include "socket_transport.h"

const struct socket_transport *px_transport(void)
{
    if (posix_start_page->channel)
        return &lwip_transport;
    if (posix_start_page->link)
        return &remote_transport;
    return NULL;
}

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

static int fd_flags(int type_flags)
{
    return (type_flags & SOCK_NONBLOCK ? O_NONBLOCK : 0) | (type_flags & SOCK_CLOEXEC ? O_CLOEXEC : 0);
}

long px_socket(int domain, int type, int protocol)
{
    if (domain != AF_INET)
        return -EAFNOSUPPORT;
    if ((type & 0xf) != SOCK_STREAM || (protocol && protocol != IPPROTO_TCP))
        return -EPROTONOSUPPORT;
    if (!px_net_present())
        return -ENETDOWN;
    px_net_poll();           /* starts the process's lwIP on the first socket */
    struct sock *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    int fd = fd_install(FD_SOCKET, fd_flags(type), s);
    if (fd < 0)
        free(s);
    return fd;
}

static void sockaddr_in_put(void *addr, socklen_t *len, uint32_t ip, uint16_t port)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
    in.sin_addr.s_addr = ip;
    socklen_t n = *len < (socklen_t)sizeof in ? *len : (socklen_t)sizeof in;
    memcpy(addr, &in, n);
    *len = sizeof in;
}

/* Bound: a listener, or a socket that bind() gave an address (its transport holds the port). */
static bool bound(const struct sock *s)
{
    return s->listening || s->local_port != 0;
}

long px_bind(int fd, const void *addr, socklen_t len)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (bound(s) || s->connection)
        return -EINVAL;
    const struct sockaddr_in *in = addr;
    if (len < (socklen_t)sizeof *in)
        return -EINVAL;
    if (in->sin_family != AF_INET)
        return -EAFNOSUPPORT;
    s->local_addr = in->sin_addr.s_addr;
    s->local_port = ntohs(in->sin_port);
    err = px_transport()->bind(s);
    if (err)
        s->local_addr = s->local_port = 0;
    return err;
}

long px_listen(int fd, int backlog)
{
    long err = 0;
    struct sock *s = sock_of(fd, &err);
    if (!s)
        return err;
    if (s->listening)
        return 0;
    if (s->connection)
        return -EINVAL;
    if (!bound(s)) {
        struct sockaddr_in any = { .sin_family = AF_INET };
        if ((err = px_bind(fd, &any, sizeof any)))
            return err;
    }
    if ((err = px_transport()->listen(s, backlog)))
        return err;
    s->listening = true;
    return 0;
}

static bool has_connection(void *ctx)
{
    return px_transport()->pending(ctx);
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
    if (!has_connection(l)) {
        if (fd_get(fd)->flags & O_NONBLOCK)
            return -EAGAIN;
        px_block_until(has_connection, l, UINT64_MAX);
    }
    /* An fd first, so that a full table leaves the connection queued. */
    int nfd = fd_install(FD_SOCKET, fd_flags(flags), NULL);
    if (nfd < 0)
        return nfd;
    struct fd *f = fd_get(nfd);
    if (!(f->object = px_transport()->accept(l))) {
        f->kind = FD_FREE;
        return -ENOMEM;
    }
    struct sock *s = f->object;
    if (addr && len)
        sockaddr_in_put(addr, len, s->peer_addr, s->peer_port);
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
        px_transport()->options(s);
        return 0;
    }
    if (level == IPPROTO_TCP && name == TCP_NODELAY) {
        s->nodelay = on;
        px_transport()->options(s);
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
    if (peer && !s->connection)
        return -ENOTCONN;
    if (peer)
        sockaddr_in_put(addr, len, s->peer_addr, s->peer_port);
    else
        sockaddr_in_put(addr, len, s->local_addr, s->local_port);
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
    if (!s->connection || s->dropped)
        return -ENOTCONN;
    s->wr_shut |= how != SHUT_RD;
    px_transport()->shutdown(s, how != SHUT_WR, how != SHUT_RD);
    return 0;
}

static bool readable(void *ctx)
{
    struct sock *s = ctx;
    return px_transport()->has_rx(s) || s->rx_end || s->dropped;
}

long socket_read(void *sock, void *buf, size_t len, bool nonblock)
{
    struct sock *s = sock;
    if (s->listening)
        return -EINVAL;
    if (!s->connection)
        return -ENOTCONN;
    if (!readable(s)) {
        if (nonblock)
            return -EAGAIN;
        px_block_until(readable, s, UINT64_MAX);
    }
    size_t n = px_transport()->read(s, buf, len);
    if (n || !len)
        return (long)n;
    if (s->dropped && !s->rx_end) {
        int e = s->error ? s->error : ECONNRESET;
        s->error = 0;
        return -e;
    }
    return 0;                   /* FIN: end of file */
}

static bool writable(void *ctx)
{
    struct sock *s = ctx;
    return s->dropped || s->wr_shut || px_transport()->writable(s);
}

long socket_write(void *sock, const void *buf, size_t len, bool nonblock)
{
    struct sock *s = sock;
    if (s->listening || !s->connection)
        return -ENOTCONN;
    if (s->wr_shut)
        return -EPIPE;
    if (!len)
        return 0;
    if (!writable(s)) {
        if (nonblock)
            return -EAGAIN;
        px_block_until(writable, s, UINT64_MAX);
    }
    if (s->dropped)
        return -EPIPE;          /* SIGPIPE is never raised: the program ignores it or would */
    return px_transport()->write(s, buf, len, nonblock);
}

void socket_close(void *sock)
{
    px_transport()->close(sock);
}

unsigned socket_ready(void *sock)
{
    struct sock *s = sock;
    if (s->listening)
        return px_transport()->pending(s) ? EPOLLIN : 0;
    if (!s->connection)
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
