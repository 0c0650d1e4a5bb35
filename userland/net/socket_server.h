/*
 * The stack process of layout=processes with impl=posix (docs/network.md):
 * lwIP on a channel to the NIC driver, as a per-core instance runs it,
 * serving the sockets of a POSIX program over a socket link (socket_link.h).
 */
#ifndef NET_SOCKET_SERVER_H
#define NET_SOCKET_SERVER_H

/*
 * The stack's thread, in a space with private globals (thread.h), started
 * with its channel, whose socket_link and program_signal the root task has
 * set.  It reports CHANNEL_SERVING on the channel once the program listens
 * (CHANNEL_FAILED if lwIP cannot start), then serves until the run ends.
 */
void socket_server_main(void *channel);

#endif
