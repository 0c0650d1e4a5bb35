/*
 * What the NIC driver on core 0 and one instance share (docs/network.md): a
 * Redis process with its own lwIP (layout=percore) or the stack process of
 * layout=processes.  One large frame, mapped at the same address in the root
 * task's space and in the instance's, holds the instance's configuration
 * and a frame ring each way.  The root task fills the configuration before
 * the instance starts; afterwards only the rings change.
 *
 * An instance allocates no kernel object and no slot: the root task makes
 * everything it needs beforehand, the caps below among them.  The stack
 * process has a private copy of the root task's globals (thread.h,
 * private_data), including the root task's slot and object allocators: a
 * copy that must not be used, since the CNode and the untypeds it describes
 * are shared; the root CNode is its CSpace too.  A Redis process is a POSIX
 * process (posix_process.h), which allocates nothing either.
 */
#ifndef NET_NET_CHANNEL_H
#define NET_NET_CHANNEL_H

#include <sys.h>
#include "frame_ring.h"

struct socket_link;

/* Bits of the driver's notification word (NIC_IRQ_BADGE, nic.h, is the NIC's interrupt). */
#define CHANNEL_TIMER_BADGE 2   /* the user-level timer ticked */
#define CHANNEL_TX_BADGE    4   /* an instance put frames into its tx ring, or changed state */
/* The instance's notification has one reason to wake: look at the rx ring and the timers. */
#define CHANNEL_WAKE_BADGE  1

enum channel_state { CHANNEL_STARTING, CHANNEL_SERVING, CHANNEL_FAILED };

/*
 * An instance says it serves, or that it could not start: store its state
 * (the release pairs with the root task's acquire load, so the root task
 * sees everything written before) and wake the driver's loop, where the
 * root task looks.
 */
static inline void channel_report(word_t *state, cptr_t driver, enum channel_state value)
{
    __atomic_store_n(state, value, __ATOMIC_RELEASE);
    sys_signal(driver);
}

struct net_channel {
    word_t index;       /* instance k of n: serves port REDIS_PORT_BASE + k */
    word_t port;
    word_t core;
    uint8_t mac[6];     /* the NIC's: every instance answers for the guest's one address */
    cptr_t wake;        /* the instance waits on this notification: frames in rx, or a tick */
    cptr_t wake_signal; /* the driver's cap to it, badged CHANNEL_WAKE_BADGE (a badge 0 signal
                         * would wake a waiting instance but be lost on one that is busy) */
    word_t state;       /* CHANNEL_STARTING until the instance serves or gives up */
    cptr_t driver;      /* the driver's notification, badged CHANNEL_TX_BADGE */
    struct socket_link *socket_link;    /* layout=processes: the POSIX program whose sockets
                                         * this instance serves (socket_link.h); NULL in
                                         * layout=percore, where the program is the instance */
    cptr_t program_signal;      /* with socket_link: a cap to the program's notification */
    struct frame_ring rx;   /* driver -> instance */
    struct frame_ring tx;   /* instance -> driver */
};

#define REDIS_PORT_BASE 6379

#endif
