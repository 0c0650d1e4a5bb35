/*
 * The remote transport (socket_transport.h): the sockets of a stack
 * process, over the socket link the start page names (socket_link.h, whose
 * invariants this file keeps as the program).  The stack's lwIP does the
 * TCP; this side reads and writes the slots' rings.
 *
 * What the program changes (tx bytes, rx bytes read, flags) waits for the
 * next poll to wake the stack, so that one event-loop turn's replies cost
 * one signal; a full tx ring wakes it at once, so that a long reply keeps
 * moving.  Each poll compares every open slot's rx index and flags with
 * what the last poll saw and stamps a socket that changed (px_wakeup()),
 * for epoll's order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "personality.h"
#include "socket_link.h"
#include "socket_transport.h"

/* The link the start page names, mapped read-write at the same address as in the stack. */
#define LINK (posix_start_page->link)

static struct {
    bool stack_due;                     /* changes the stack has not been woken for */
    struct sock *listener;
    word_t listen_requests;
    word_t accept_taken;                /* the program's accept_tail */
    word_t seen_accepts;                /* accept_head as the last poll saw it */
    struct sock *open[LINK_SLOTS];      /* the program's sockets by slot */
} remote;

static void wake_stack(void)
{
    remote.stack_due = false;
    px_signal(LINK->stack_signal);
}

static void remote_poll(void)
{
    if (remote.stack_due)
        wake_stack();
    word_t accepts = __atomic_load_n(&LINK->accept_head, __ATOMIC_ACQUIRE);
    if (accepts != remote.seen_accepts && remote.listener) {
        remote.seen_accepts = accepts;
        remote.listener->woken = px_wakeup();
    }
    for (word_t k = 0; k < LINK_SLOTS; k++) {
        struct sock *s = remote.open[k];
        if (!s)
            continue;
        struct link_slot *slot = &LINK->slots[k];
        word_t rx = __atomic_load_n(&slot->rx_head, __ATOMIC_ACQUIRE);
        word_t flags = __atomic_load_n(&slot->stack_flags, __ATOMIC_ACQUIRE);
        if (rx == s->remote.seen_rx && flags == s->remote.seen_flags)
            continue;
        s->remote.seen_rx = rx;
        s->remote.seen_flags = flags;
        s->woken = px_wakeup();
        s->rx_end = flags & LINK_PEER_FIN;
        if ((flags & LINK_DROPPED) && !s->dropped) {
            s->dropped = true;
            s->error = slot->error == SOCKET_RESET ? ECONNRESET : ECONNABORTED;
        }
    }
}

static cptr_t remote_wake(void)
{
    return LINK->program_wake;
}

/* The stack listens when asked: bind only takes the address. */
static long remote_bind(struct sock *s)
{
    return s->local_port ? 0 : -EADDRNOTAVAIL;
}

static bool listen_answered(void *ctx)
{
    (void)ctx;
    return __atomic_load_n(&LINK->listen_answered, __ATOMIC_ACQUIRE) == remote.listen_requests;
}

static long listen_request(word_t port)
{
    __atomic_store_n(&LINK->listen_port, port, __ATOMIC_RELAXED);
    /* Release: the port before the request that names it (invariant 3). */
    __atomic_store_n(&LINK->listen_request, ++remote.listen_requests, __ATOMIC_RELEASE);
    wake_stack();
    px_block_until(listen_answered, NULL, UINT64_MAX);
    switch (LINK->listen_status) {
    case SOCKET_OK:       return 0;
    case SOCKET_IN_USE:   return -EADDRINUSE;
    case SOCKET_BAD_PORT: return -EADDRNOTAVAIL;
    default:            return -ENOBUFS;
    }
}

static long remote_listen(struct sock *s, int backlog)
{
    (void)backlog;              /* the stack's accept queue holds LINK_SLOTS */
    if (remote.listener)
        return -EADDRINUSE;     /* the link has one listener */
    long err = listen_request(s->local_port);
    if (!err)
        remote.listener = s;
    return err;
}

static bool remote_pending(struct sock *l)
{
    (void)l;
    return __atomic_load_n(&LINK->accept_head, __ATOMIC_ACQUIRE) != remote.accept_taken;
}

static struct sock *remote_accept(struct sock *l)
{
    (void)l;
    struct sock *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    word_t k = LINK->accept_queue[remote.accept_taken % LINK_SLOTS] % LINK_SLOTS;
    __atomic_store_n(&LINK->accept_tail, ++remote.accept_taken, __ATOMIC_RELEASE);
    const struct link_slot *slot = &LINK->slots[k];
    s->connection = true;
    s->remote.slot = k;
    s->peer_addr = slot->peer_addr;
    s->peer_port = slot->peer_port;
    s->local_addr = remote.listener->local_addr;
    s->local_port = slot->local_port;
    remote.open[k] = s;
    return s;
}

static word_t rx_waiting(const struct sock *s)
{
    return __atomic_load_n(&LINK->slots[s->remote.slot].rx_head, __ATOMIC_ACQUIRE) - s->remote.rx_read;
}

static bool remote_has_rx(struct sock *s)
{
    return rx_waiting(s) != 0;
}

static size_t remote_read(struct sock *s, void *buf, size_t len)
{
    struct link_slot *slot = &LINK->slots[s->remote.slot];
    word_t waiting = rx_waiting(s);
    if (waiting > LINK_RX_BYTES)
        waiting = LINK_RX_BYTES;
    size_t n = len < waiting ? len : waiting;
    for (size_t done = 0; done < n;) {
        word_t at = (s->remote.rx_read + done) % LINK_RX_BYTES;
        size_t piece = LINK_RX_BYTES - at < n - done ? LINK_RX_BYTES - at : n - done;
        memcpy((char *)buf + done, &slot->rx[at], piece);
        done += piece;
    }
    s->remote.rx_read += n;
    /* Release: the bytes are copied out before the stack may overwrite them (invariant 3). */
    __atomic_store_n(&slot->rx_tail, s->remote.rx_read, __ATOMIC_RELEASE);
    if (waiting >= LINK_RX_BYTES / 4)
        remote.stack_due = true;        /* the stack may hold more for this room */
    return n;
}

static word_t tx_room(const struct sock *s)
{
    word_t queued = s->remote.tx_written -
                    __atomic_load_n(&LINK->slots[s->remote.slot].tx_tail, __ATOMIC_ACQUIRE);
    return queued < LINK_TX_BYTES ? LINK_TX_BYTES - queued : 0;
}

static bool remote_writable(struct sock *s)
{
    return tx_room(s) != 0;
}

static long remote_write(struct sock *s, const void *buf, size_t len, bool nonblock)
{
    (void)nonblock;             /* called only when writable: a byte always fits */
    struct link_slot *slot = &LINK->slots[s->remote.slot];
    word_t room = tx_room(s);
    size_t n = len < room ? len : room;
    for (size_t done = 0; done < n;) {
        word_t at = (s->remote.tx_written + done) % LINK_TX_BYTES;
        size_t piece = LINK_TX_BYTES - at < n - done ? LINK_TX_BYTES - at : n - done;
        memcpy(&slot->tx[at], (const char *)buf + done, piece);
        done += piece;
    }
    s->remote.tx_written += n;
    /* Release: the bytes before the index that publishes them (invariant 3). */
    __atomic_store_n(&slot->tx_head, s->remote.tx_written, __ATOMIC_RELEASE);
    remote.stack_due = true;
    if (n == room)
        wake_stack();           /* full: let the stack take it now, so the next write finds room */
    return (long)n;
}

/* The stack applies its own: no Nagle (the program writes whole replies), reusable ports. */
static void remote_options(struct sock *s)
{
    (void)s;
}

static void set_program_flag(word_t k, word_t flag)
{
    struct link_slot *slot = &LINK->slots[k];
    word_t flags = __atomic_load_n(&slot->program_flags, __ATOMIC_RELAXED);
    /* Release: every tx byte before the flag that follows them (invariant 3). */
    __atomic_store_n(&slot->program_flags, flags | flag, __ATOMIC_RELEASE);
    remote.stack_due = true;
}

static void remote_shutdown(struct sock *s, bool rd, bool wr)
{
    (void)rd;                   /* what arrives is read or dropped with the socket */
    if (wr)
        set_program_flag(s->remote.slot, LINK_SHUT_WR);
}

static void remote_close(struct sock *s)
{
    if (s->listening) {
        remote.listener = NULL;
        /* Connections queued and never taken go back too (invariant 5). */
        while (remote_pending(s)) {
            word_t k = LINK->accept_queue[remote.accept_taken % LINK_SLOTS] % LINK_SLOTS;
            __atomic_store_n(&LINK->accept_tail, ++remote.accept_taken, __ATOMIC_RELEASE);
            set_program_flag(k, LINK_CLOSED);
        }
        listen_request(0);
    } else if (s->connection) {
        remote.open[s->remote.slot] = NULL;
        set_program_flag(s->remote.slot, LINK_CLOSED);
    }
    free(s);
}

const struct socket_transport remote_transport = {
    .poll = remote_poll, .wake = remote_wake, .bind = remote_bind, .listen = remote_listen,
    .pending = remote_pending, .accept = remote_accept, .has_rx = remote_has_rx, .read = remote_read,
    .writable = remote_writable, .write = remote_write, .options = remote_options,
    .shutdown = remote_shutdown, .close = remote_close,
};
