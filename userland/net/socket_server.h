/*
 * The stack process of the app `redis`'s layout=processes (docs/network.md):
 * lwIP on a channel to the NIC driver, as a per-core instance runs it,
 * serving the sockets of a POSIX program over a socket link (socket_link.h).
 */
#ifndef NET_SOCKET_SERVER_H
#define NET_SOCKET_SERVER_H

#include <stdbool.h>

/*
 * The stack's thread, in a space with private globals (thread.h), started
 * with its channel, whose socket_link and program_signal the root task has
 * set.  It reports CHANNEL_SERVING on the channel once the program listens
 * (CHANNEL_FAILED if lwIP cannot start), then serves until the run ends.
 */
void socket_server_main(void *channel);

/*
 * The link's side of the stack, on this space's lwIP (the stack's thread
 * above; the in-guest tests over lwIP's loopback interface): serve `link`
 * from now on, with no listener and every slot free.  The link served
 * before must have no connection left (its lwIP state is forgotten).
 */
struct socket_link;
void socket_link_attach(struct socket_link *link);

/*
 * One pass over the link after lwIP has taken its input and run its timers:
 * the listen request, then every slot in use.  True when it changed
 * anything the program reads (the program is then to be woken).
 */
bool socket_link_pass(void);

/* Whether a listener serves the port the program asked for. */
bool socket_link_listening(void);

#endif
