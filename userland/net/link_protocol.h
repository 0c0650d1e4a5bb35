/*
 * The stack's side of layout=processes (docs/network.md): a tcp_server
 * protocol whose every event, a connection's first bytes, its input and its
 * end, is a Call to the Redis server process over the link (server_link.h).
 */
#ifndef NET_LINK_PROTOCOL_H
#define NET_LINK_PROTOCOL_H

#include "server_link.h"
#include "tcp_server.h"

/* Fill *p to serve through link. */
void link_protocol_init(struct tcp_server_protocol *p, struct server_link *link);

#endif
