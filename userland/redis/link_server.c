/* The Redis server's side of a link to a stack in another process (redis_link.h). */
#include <redis_link.h>
#include "server.h"

struct reply_sink {
    struct link_server *server;
    size_t len;
    bool overflow;          /* a reply did not fit reply[]: the connection is closed */
};

static void sink_out(void *ctx, const void *buf, size_t len)
{
    struct reply_sink *sink = ctx;
    if (sink->overflow || len > sink->server->reply_max - sink->len) {
        sink->overflow = true;
        return;
    }
    memcpy(sink->server->reply + sink->len, buf, len);
    sink->len += len;
}

static enum link_result open_conn(struct link_server *s, size_t *out)
{
    for (size_t id = 0; id < LINK_MAX_CONNS; id++) {
        if (!s->conns[id]) {
            if (!(s->conns[id] = redis_conn_new(s->db)))
                return LINK_NO_MEMORY;
            *out = id;
            return LINK_OK;
        }
    }
    return LINK_NO_MEMORY;
}

enum link_result redis_link_serve(struct link_server *s, unsigned op, size_t id, size_t len, size_t *out)
{
    *out = 0;
    if (op == LINK_OPEN)
        return open_conn(s, out);
    if ((op != LINK_INPUT && op != LINK_CLOSE) || id >= LINK_MAX_CONNS || !s->conns[id] ||
        (op == LINK_INPUT && len > LINK_REQUEST_MAX))
        return LINK_BAD_REQUEST;
    if (op == LINK_CLOSE) {
        redis_conn_free(s->conns[id]);
        s->conns[id] = NULL;
        return LINK_OK;
    }
    struct reply_sink sink = { .server = s };
    bool open = redis_conn_input(s->conns[id], s->request, len, sink_out, &sink);
    *out = sink.overflow ? 0 : sink.len;
    return open && !sink.overflow ? LINK_OK : LINK_CLOSE_NOW;
}
