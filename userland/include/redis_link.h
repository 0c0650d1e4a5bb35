/*
 * The Redis server's side of a link to a network stack in another process
 * (layout=processes, docs/network.md): the stack hands over a connection's
 * events, one request at a time, and the server answers each in a reply
 * buffer.  How the requests travel (IPC and a shared frame,
 * userland/net/server_link.h) is the caller's business; this is what they mean:
 *
 *   LINK_OPEN            -> LINK_OK and *out the new connection's id, or LINK_NO_MEMORY
 *   LINK_INPUT id, len   (len request bytes in request[])
 *                        -> LINK_OK or LINK_CLOSE_NOW (the protocol ended the connection:
 *                           QUIT, a bad frame, or a reply larger than reply[]), and *out
 *                           the reply bytes in reply[] (none when a reply did not fit)
 *   LINK_CLOSE id        -> LINK_OK (the connection's state is freed)
 *
 * Anything else (an unknown operation, an id not open, a length over
 * LINK_REQUEST_MAX) gets LINK_BAD_REQUEST and changes nothing: the server
 * trusts the stack no further.
 */
#ifndef REDIS_LINK_H
#define REDIS_LINK_H

#include <stddef.h>
#include <stdint.h>
#include "redis.h"

enum link_op { LINK_OPEN = 1, LINK_INPUT, LINK_CLOSE };
enum link_result { LINK_OK, LINK_CLOSE_NOW, LINK_NO_MEMORY, LINK_BAD_REQUEST };

/* Connections a server keeps at once: at least as many as the stack has pcbs (lwipopts.h). */
#define LINK_MAX_CONNS 128
/* The most request bytes one LINK_INPUT carries: the stack hands longer input over in pieces. */
#define LINK_REQUEST_MAX (64 * 1024)

struct link_server {
    struct redis_db *db;
    const uint8_t *request;     /* LINK_REQUEST_MAX bytes */
    uint8_t *reply;
    size_t reply_max;
    struct redis_conn *conns[LINK_MAX_CONNS];
};

/* Serve one request (above); the result, with the connection's id or the reply's length in *out. */
enum link_result redis_link_serve(struct link_server *s, unsigned op, size_t id, size_t len, size_t *out);

#endif
