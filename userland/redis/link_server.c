/*
 * The Redis server's side of a link to a stack in another process
 * (redis_link.h).  A request's replies fill reply[] first; what does not
 * fit goes to the connection's pending queue, and the server takes no
 * further request of that input once reply[] is full, so one LINK_INPUT
 * leaves at most one request's reply pending beyond reply[].
 */
#include <redis_link.h>
#include "server.h"

struct reply_sink {
    struct link_server *server;
    struct link_conn *conn;
    size_t len;                 /* bytes in reply[] */
    bool no_memory;             /* the pending queue could not grow: the connection is closed */
};

static void sink_out(void *ctx, const void *buf, size_t len)
{
    struct reply_sink *sink = ctx;
    const uint8_t *p = buf;
    size_t room = sink->server->reply_max - sink->len;
    size_t n = len < room ? len : room;
    if (sink->no_memory)
        return;
    memcpy(sink->server->reply + sink->len, p, n);
    sink->len += n;
    if (n < len && !out_queue_push(&sink->conn->pending, p + n, len - n))
        sink->no_memory = true;
}

/* Pause after a request once reply[] is full. */
static bool sink_full(void *ctx)
{
    struct reply_sink *sink = ctx;
    return sink->len == sink->server->reply_max;
}

static enum link_result open_conn(struct link_server *s, struct link_answer *a)
{
    for (size_t id = 0; id < LINK_MAX_CONNS; id++) {
        if (!s->conns[id].conn) {
            if (!(s->conns[id].conn = redis_conn_new(s->db)))
                return LINK_NO_MEMORY;
            a->value = id;
            return LINK_OK;
        }
    }
    return LINK_NO_MEMORY;
}

static enum link_result input(struct link_server *s, struct link_conn *lc, size_t len, struct link_answer *a)
{
    struct reply_sink sink = { .server = s, .conn = lc };
    bool open;
    a->taken = redis_conn_input_paced(lc->conn, s->request, len, sink_out, &sink, sink_full, &open);
    if (sink.no_memory) {
        out_queue_clear(&lc->pending);
        return LINK_CLOSE_NOW;
    }
    a->value = sink.len;
    a->pending = lc->pending.bytes;
    return open ? LINK_OK : LINK_CLOSE_NOW;
}

/* The next piece of the pending reply into reply[]. */
static enum link_result more_reply(struct link_server *s, struct link_conn *lc, struct link_answer *a)
{
    size_t len;
    const void *piece;
    while (a->value < s->reply_max && (piece = out_queue_peek(&lc->pending, &len))) {
        size_t n = len < s->reply_max - a->value ? len : s->reply_max - a->value;
        memcpy(s->reply + a->value, piece, n);
        out_queue_drop(&lc->pending, n);
        a->value += n;
    }
    a->pending = lc->pending.bytes;
    return LINK_OK;
}

enum link_result redis_link_serve(struct link_server *s, unsigned op, size_t id, size_t len,
                                  struct link_answer *a)
{
    *a = (struct link_answer){ 0 };
    if (op == LINK_OPEN)
        return open_conn(s, a);
    if (op < LINK_INPUT || op > LINK_MORE_REPLY || id >= LINK_MAX_CONNS || !s->conns[id].conn)
        return LINK_BAD_REQUEST;
    struct link_conn *lc = &s->conns[id];
    switch ((enum link_op)op) {
    case LINK_INPUT:
        if (len > LINK_REQUEST_MAX || lc->pending.head)
            return LINK_BAD_REQUEST;
        return input(s, lc, len, a);
    case LINK_MORE_REPLY:
        if (!lc->pending.head)
            return LINK_BAD_REQUEST;
        return more_reply(s, lc, a);
    case LINK_CLOSE:
        out_queue_clear(&lc->pending);
        redis_conn_free(lc->conn);
        lc->conn = NULL;
        return LINK_OK;
    case LINK_OPEN:
        break;
    }
    return LINK_BAD_REQUEST;
}
