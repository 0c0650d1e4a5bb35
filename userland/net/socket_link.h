/*
 * The socket link (docs/network.md, layout=processes of the app `redis`):
 * what the lwIP stack process and a POSIX program share, so that the
 * program's sockets are served by a stack in another address space.  One
 * large frame, mapped at the same address in the root task's, the stack's
 * and the program's spaces, holds one listener with its accept queue and
 * LINK_SLOTS connection slots, each with a byte ring each way.  Two
 * notifications carry the wake-ups: the program's (`program_wake`, which
 * the stack signals) and the stack's (its channel's, net_channel.h, which
 * the program signals through `stack_signal`).
 *
 * Both sides include this header: the root task and the stack with the
 * root task's library, the personality with musl's headers.  So it uses
 * only abi types.
 *
 * Invariants (each numbered rule is one the code of both sides keeps):
 *  1. One writer per word.  Every index and flag word below is written by
 *     one side only (the comment on each says which); the other only reads
 *     it.  The root task writes the configuration before either side runs.
 *  2. Indices count bytes (or connections) since the slot was handed out and
 *     only grow; a ring's position is the index modulo its size, a power of
 *     two, so every access lands inside the ring whatever the index is.
 *  3. Publication: the producer writes the bytes, then stores its index with
 *     release; the consumer loads the index with acquire, then reads the
 *     bytes.  A flag that follows data (LINK_PEER_FIN after the last rx
 *     bytes, LINK_CLOSED after the last tx bytes) is stored with release
 *     after the index it follows.
 *  4. The stack never trusts the program.  It keeps its own copy of every
 *     index it owns and never reads those back from the frame; it keeps the
 *     slots' ownership (free, queued, the program's, closing) and the lwIP
 *     state in its own memory.  An index the program writes is taken only
 *     where it lies between what the stack last accepted and what the stack
 *     has published (rx_tail), or at most a ring ahead (tx_head, accept_tail);
 *     any other value is ignored, and the word is read again next time.  A
 *     program that writes nonsense harms only its own connections.
 *  5. A slot changes hands only through the accept queue (stack to program)
 *     and LINK_CLOSED (program to stack): after setting LINK_CLOSED the
 *     program touches the slot no more, and the stack hands it out again
 *     (all its words reset) only once lwIP is done with the connection and
 *     every tx byte before the flag was sent or the connection was dropped.
 *  6. Wake-ups: the stack signals the program after a pass that changed
 *     anything the program reads (a connection queued, rx bytes, a FIN, a
 *     drop, tx room, a listen answered), and at least every
 *     LINK_TICK_MS while it runs (it runs on the driver's every timer tick),
 *     which is what the program's own timers wait on.  The program signals
 *     the stack after it wrote tx bytes, set a flag or asked to listen, and
 *     after it freed rx room that the stack may be waiting for (at least a
 *     quarter of the ring); the stack looks at every slot on each of its
 *     passes, so a missed wake-up only delays by one tick.
 */
#ifndef NET_SOCKET_LINK_H
#define NET_SOCKET_LINK_H

#include <abi/types.h>

/*
 * Connections at once, accepted or queued: as many as lwIP's connection
 * pcbs (lwipopts.h), so that every connection lwIP can hold finds a slot.  A client that closes 50 connections and opens 50 new
 * ones at once (redis-benchmark between two tests) needs the old slots
 * until the program has seen the closes.  The rings are as small as that
 * many slots in the 1 MiB frame allow.
 */
#define LINK_SLOTS      128
#define LINK_RX_BYTES   2048        /* stack -> program, per connection */
#define LINK_TX_BYTES   4096        /* program -> stack, per connection */
#define LINK_TICK_MS    5           /* the program is woken at least this often while the stack runs */

/* The badge of the program's signals on the stack's notification (CHANNEL_WAKE_BADGE is the driver's). */
#define LINK_PROGRAM_BADGE 2

/* stack_flags of a slot */
#define LINK_PEER_FIN   1u          /* the peer sent FIN: no rx bytes follow those published */
#define LINK_DROPPED    2u          /* the connection is gone (`error` says why); tx bytes go nowhere */

/* program_flags of a slot */
#define LINK_CLOSED     1u          /* the program closed it: send the tx bytes, then FIN; the slot is the stack's */
#define LINK_SHUT_WR    2u          /* send FIN after the tx bytes; the slot stays the program's */

/* Why a connection was dropped, and a listen's answer. */
enum socket_status {
    SOCKET_OK,
    SOCKET_RESET,  /* the peer reset it */
    SOCKET_ABORTED,  /* the stack gave it up (out of memory, or too many retransmissions) */
    SOCKET_IN_USE,  /* listen: the port is taken */
    SOCKET_NO_MEMORY,  /* listen: lwIP has no pcb left */
    SOCKET_BAD_PORT,  /* listen: not a TCP port */
};

struct link_slot {
    /* written by the stack */
    word_t rx_head;             /* rx bytes published */
    word_t tx_tail;             /* tx bytes taken into lwIP */
    word_t stack_flags;         /* LINK_PEER_FIN, LINK_DROPPED */
    word_t error;               /* enum socket_status, with LINK_DROPPED */
    uint32_t peer_addr;         /* the peer's IPv4 address, network byte order */
    uint16_t peer_port;
    uint16_t local_port;
    /* written by the program */
    word_t rx_tail;             /* rx bytes read */
    word_t tx_head;             /* tx bytes published */
    word_t program_flags;       /* LINK_CLOSED, LINK_SHUT_WR */
    uint8_t rx[LINK_RX_BYTES];
    uint8_t tx[LINK_TX_BYTES];
};

struct socket_link {
    /* written by the root task before either side runs */
    cptr_t program_wake;        /* the notification the program's main thread waits on */
    cptr_t stack_signal;        /* the program's cap to the stack's notification, badged LINK_PROGRAM_BADGE */
    /* written by the program */
    word_t listen_request;      /* listen requests made so far */
    word_t listen_port;         /* the port of the latest request; 0: close the listener */
    word_t accept_tail;         /* connections taken from accept_queue */
    /* written by the stack */
    word_t listen_answered;     /* listen_request as of the last request served */
    word_t listen_status;       /* enum socket_status of that request */
    word_t accept_head;         /* connections put into accept_queue */
    word_t accept_queue[LINK_SLOTS];    /* slot numbers */
    struct link_slot slots[LINK_SLOTS];
};

_Static_assert((LINK_RX_BYTES & (LINK_RX_BYTES - 1)) == 0 && (LINK_TX_BYTES & (LINK_TX_BYTES - 1)) == 0 &&
               (LINK_SLOTS & (LINK_SLOTS - 1)) == 0, "ring positions are indices modulo a power of two");
_Static_assert(sizeof(struct socket_link) <= (1u << 20),
               "a link fits the smallest large frame of the ports (1 MiB on arm-imx6)");
_Static_assert(__builtin_offsetof(struct link_slot, rx_tail) == 4 * sizeof(word_t) + 8,
               "the root task and the program, built by different compilers, agree on a slot");
_Static_assert(__builtin_offsetof(struct socket_link, slots) == (8 + LINK_SLOTS) * sizeof(word_t),
               "the slots follow the header and the accept queue");

#endif
