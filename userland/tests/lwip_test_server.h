/*
 * The in-guest lwIP tests' TCP server (test_lwip.c runs its echo protocol on
 * it; docs/network.md, "Tests"), a fixture of those tests: the network's
 * programs have their sockets from the POSIX personality or the stack process.
 * On lwIP's raw API, it listens on a port and hands each connection's bytes,
 * in order, to a protocol, writing back what the protocol produces.
 *
 * Replies go into TCP's send buffer while it has room; the rest waits in the
 * connection's backlog, in chunks of the process's heap
 * (lwip_test_out_queue.h), and goes out piece by piece from the sent and poll
 * callbacks, so a reply of any size the heap can hold reaches the client,
 * while lwIP's own heap holds only what TCP's send buffer does.  While the
 * backlog holds more than TCP_SERVER_BACKLOG_LIMIT bytes the connection reads
 * no more input: received segments are held unacknowledged to the window (copied out of the
 * receive pool, which they would otherwise pin), so a client that sends
 * without reading fills its own window, not our memory.
 *
 * A connection gets its protocol state when its first bytes arrive, so
 * connections that never send (QEMU's user network opens one to the guest
 * for every host connection, even one the host has already reset) cost a
 * pcb and a slot but no protocol memory.  One whose state cannot be made
 * (open returns NULL: no memory while other connections hold theirs) takes
 * the state of the connection idle longest, if one has been idle evict_idle_ms; otherwise its input
 * is held the same way and open is tried again from the poll callback, so a
 * client waits rather than being reset.  One that still has no state after
 * TCP_SERVER_OPEN_POLLS polls is reset.  Likewise, when lwIP runs out of
 * pcbs, a new connection resets the one inactive longest.
 *
 * Every function here, and every callback, runs on the thread that owns the
 * lwIP instance (NO_SYS).
 */
#ifndef LWIP_TEST_SERVER_H
#define LWIP_TEST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include "lwip_test_out_queue.h"
#include "lwip/tcp.h"

/* A slot for every pcb lwIP can have: lwIP runs out of pcbs (and drops SYNs, which the client
 * sends again) before the server runs out of slots. */
#define TCP_SERVER_MAX_CONNS MEMP_NUM_TCP_PCB
#define TCP_SERVER_BACKLOG_LIMIT TCP_SND_BUF
/* Poll periods (about a second each) a connection may wait for its protocol state. */
#define TCP_SERVER_OPEN_POLLS 30

/* Called with the connection's state; out(out_ctx, buf, len) queues reply bytes. */
typedef void (*tcp_server_out_fn)(void *out_ctx, const void *buf, size_t len);

struct tcp_server_protocol {
    void *(*open)(void *ctx);                       /* a connection's state; NULL refuses it */
    bool (*input)(void *conn, const void *data, size_t len, tcp_server_out_fn out, void *out_ctx);
                                                    /* false: close the connection */
    void (*close)(void *conn);                      /* free the state (the connection is gone) */
    void *ctx;
};

struct tcp_server;

struct tcp_server_conn {
    struct tcp_pcb *pcb;            /* NULL: the slot is free */
    struct tcp_server *server;
    void *state;                    /* the protocol's; NULL until the first bytes open it */
    struct out_queue backlog;       /* reply bytes waiting for send-buffer room */
    struct pbuf *held;              /* received bytes not yet given to the protocol (a pbuf chain) */
    bool closing;                   /* the protocol or the peer ended it: close once the backlog is out */
    bool out_of_memory;             /* a reply could not be queued: the connection is reset */
    unsigned close_polls;           /* poll callbacks spent waiting to close */
    unsigned open_polls;            /* poll callbacks spent waiting for the protocol's state */
    u32_t last_active;              /* sys_now() when it was accepted, last received or last had bytes acknowledged */
};

/*
 * A connection idle this long may lose its state to one that has none (no
 * memory): long enough that a client waiting on a slow network is not taken
 * for a dead one.
 */
#define TCP_SERVER_EVICT_IDLE_MS 5000

struct tcp_server {
    struct tcp_pcb *listener;
    const struct tcp_server_protocol *protocol;
    u32_t evict_idle_ms;            /* TCP_SERVER_EVICT_IDLE_MS from tcp_server_start() */
    struct tcp_server_conn conns[TCP_SERVER_MAX_CONNS];
    unsigned live;                  /* connections open now */
    unsigned long accepted;         /* connections served since start */
    unsigned long refused;          /* SYNs lwIP had no pcb for, and connections reset at accept (no slot) */
    unsigned long deferred;         /* connections whose first open found no memory (they waited) */
    unsigned long evicted;          /* idle connections reset to give their memory to a new one */
    unsigned long reset_by_peer;    /* connections the peer reset (lwIP's err callback, ERR_RST) */
    unsigned long aborted_by_lwip;  /* connections lwIP ended otherwise: retransmissions or
                                       keepalive probes unanswered, or their pcb given to a new
                                       connection (tcp_kill_prio) */
    unsigned long reset;            /* connections reset later (no memory for a reply or for their state in time,
                                       or a close that never finished) */
    size_t backlog_peak;            /* the largest backlog any connection had */
    unsigned long holds;            /* received segments held because of a backlog */
};

/* Listen on `port` of every interface.  ERR_OK, or lwIP's error (port in use, no memory). */
err_t tcp_server_start(struct tcp_server *s, u16_t port, const struct tcp_server_protocol *protocol);

/* Reset every connection and stop listening; the protocol's close runs for each connection. */
void tcp_server_stop(struct tcp_server *s);

#endif
