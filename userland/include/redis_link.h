/*
 * The Redis server's side of a link to a network stack in another process
 * (layout=processes, docs/network.md): the stack hands over a connection's
 * events, one request at a time, and the server answers each in a reply
 * buffer.  How the requests travel (IPC and a shared frame,
 * userland/net/server_link.h) is the caller's business; this is what they mean:
 *
 *   LINK_OPEN            -> LINK_OK and the new connection's id in a->value, or LINK_NO_MEMORY
 *   LINK_INPUT id, len   (len request bytes in request[])
 *                        -> LINK_OK, or LINK_CLOSE_NOW (the protocol ends the connection
 *                           once the reply has been fetched whole: QUIT, a bad frame; or
 *                           at once, with no reply bytes, when the server's heap could
 *                           not hold the reply);
 *                           a->value reply bytes in reply[], a->taken request bytes used
 *                           (the server stops after a request once reply[] is full: the
 *                           stack sends the rest again), a->pending reply bytes still
 *                           to fetch
 *   LINK_MORE_REPLY id   -> LINK_OK, the next a->value reply bytes in reply[], a->pending
 *                           still to fetch
 *   LINK_CLOSE id        -> LINK_OK (the connection's state, and any reply not fetched, freed)
 *
 * A reply longer than reply[] waits in the server's heap (out_queue.h) until
 * the stack fetches it, so a reply's size is bounded by that heap only.
 * Anything else (an unknown operation, an id not open, a length over
 * LINK_REQUEST_MAX, LINK_INPUT while a reply is pending, LINK_MORE_REPLY with
 * none) gets LINK_BAD_REQUEST and changes nothing: the server trusts the
 * stack no further.
 */
#ifndef REDIS_LINK_H
#define REDIS_LINK_H

#include <stddef.h>
#include <stdint.h>
#include <out_queue.h>
#include "redis.h"

enum link_op { LINK_OPEN = 1, LINK_INPUT, LINK_CLOSE, LINK_MORE_REPLY };
enum link_result { LINK_OK, LINK_CLOSE_NOW, LINK_NO_MEMORY, LINK_BAD_REQUEST };

/* Connections a server keeps at once: at least as many as the stack has pcbs (lwipopts.h). */
#define LINK_MAX_CONNS 128
/* The most request bytes one LINK_INPUT carries: the stack hands longer input over in pieces. */
#define LINK_REQUEST_MAX (64 * 1024)

struct link_answer {
    size_t value;               /* OPEN: the id; INPUT, MORE_REPLY: reply bytes in reply[] */
    size_t taken;               /* INPUT: request bytes used */
    size_t pending;             /* INPUT, MORE_REPLY: reply bytes left for MORE_REPLY */
};

struct link_conn {
    struct redis_conn *conn;    /* NULL: the id is free */
    struct out_queue pending;   /* the reply past reply[], fetched with LINK_MORE_REPLY */
};

struct link_server {
    struct redis_db *db;
    const uint8_t *request;     /* LINK_REQUEST_MAX bytes */
    uint8_t *reply;
    size_t reply_max;
    struct link_conn conns[LINK_MAX_CONNS];
};

/* Serve one request (above): its result, and the answer's figures in *a (zero where unused). */
enum link_result redis_link_serve(struct link_server *s, unsigned op, size_t id, size_t len,
                                  struct link_answer *a);

#endif
