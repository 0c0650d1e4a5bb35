/*
 * The two transports under the personality's sockets (docs/posix.md).
 * socket.c is the fd level: the calls' checks, blocking and non-blocking
 * I/O, the errors Linux gives, readiness for epoll.  Below it, a transport
 * carries the bytes:
 *   - lwip_transport (socket_lwip.c): the process's own lwIP on its frame
 *     channel to the NIC driver, when the start page names a channel;
 *   - remote_transport (socket_remote.c): the stack process's lwIP over the
 *     socket link (socket_link.h), when the start page names a link.
 * The start page names one or neither; px_transport() says which.
 */
#ifndef POSIX_SOCKET_TRANSPORT_H
#define POSIX_SOCKET_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <abi/types.h>

struct tcp_pcb;
struct pbuf;

#define ACCEPT_QUEUE 64     /* lwip_transport: connections a listener holds until accept4 */

struct sock {
    bool listening;
    bool connection;            /* an accepted connection (else a socket that was never connected) */
    bool reuse_addr;
    bool nodelay;
    bool dropped;               /* the connection is gone (reset, aborted): I/O fails */
    bool rx_end;                /* the peer sent FIN: no bytes come after those waiting */
    bool wr_shut;               /* shutdown(SHUT_WR): writes fail with EPIPE */
    int error;                  /* a pending error (errno), reported once by SO_ERROR or by I/O */
    uint64_t woken;             /* px_wakeup() of the last data, FIN, reset or connection */
    uint32_t local_addr, peer_addr;     /* network byte order */
    uint16_t local_port, peer_port;
    union {
        struct {
            struct tcp_pcb *pcb;        /* NULL before bind, and once lwIP dropped the connection */
            struct pbuf *rx;            /* received and not yet read */
            struct sock *queue[ACCEPT_QUEUE];   /* a listener's accepted connections */
            unsigned queue_head, queue_len;
        } lwip;
        struct {
            word_t slot;                /* the link's slot of a connection */
            word_t rx_read, tx_written; /* the program's own indices of the slot */
            word_t seen_rx, seen_flags; /* what the last poll saw, to stamp a change */
        } remote;
    };
};

struct socket_transport {
    void (*poll)(void);                 /* bring every socket up to date; send what waits */
    cptr_t (*wake)(void);               /* the notification that a wait for the network sleeps on */
    long (*bind)(struct sock *s);       /* s->local_addr and local_port are set; -errno */
    long (*listen)(struct sock *s, int backlog);
    bool (*pending)(struct sock *listener);            /* a connection waits for accept */
    struct sock *(*accept)(struct sock *listener);     /* take it; NULL (it stays queued): no memory */
    bool (*has_rx)(struct sock *s);     /* received bytes wait to be read */
    size_t (*read)(struct sock *s, void *buf, size_t len);     /* what waits, up to len */
    bool (*writable)(struct sock *s);   /* a write would take a byte now (s not dropped) */
    long (*write)(struct sock *s, const void *buf, size_t len, bool nonblock);  /* when writable */
    void (*options)(struct sock *s);    /* apply reuse_addr and nodelay */
    void (*shutdown)(struct sock *s, bool rd, bool wr);
    void (*close)(struct sock *s);      /* release everything, s included */
};

extern const struct socket_transport lwip_transport, remote_transport;

/* The transport the start page names, or NULL when the process has no network. */
const struct socket_transport *px_transport(void);

#endif
