/*
 * The Redis-protocol server (docs/redis.md) as a tcp_server protocol: one
 * database per server instance, one redis_conn per connection.  Both
 * layouts of the app `redis` (docs/network.md) serve it.
 */
#ifndef NET_REDIS_PROTOCOL_H
#define NET_REDIS_PROTOCOL_H

#include "tcp_server.h"

/* Fill *p to serve the database db (from redis_db_new()). */
void redis_protocol_init(struct tcp_server_protocol *p, void *db);

#endif
