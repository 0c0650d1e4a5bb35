/*
 * Connections: the public conn functions of redis.h.  Input runs through
 * the parser; each complete request is dispatched, and its replies gather
 * in the reply buffer, which is handed out when full and before
 * redis_conn_input() returns.
 */
#include "server.h"

struct redis_conn *redis_conn_new(struct redis_db *db)
{
    struct redis_conn *c = malloc(sizeof(*c));
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->db = db;
    resp_parser_init(&c->parser);
    db->connections++;
    return c;
}

void redis_conn_free(struct redis_conn *c)
{
    resp_parser_free(&c->parser);
    c->db->connections--;
    free(c);
}

size_t redis_conn_input_paced(struct redis_conn *c, const void *data, size_t len,
                              void (*out)(void *ctx, const void *buf, size_t len), void *ctx,
                              bool (*pause)(void *ctx), bool *open)
{
    const char *bytes = data;
    size_t left = len;
    bool paused = false;
    *open = !c->closing;
    c->reply.out = out;
    c->reply.ctx = ctx;
    while (*open && left > 0 && !paused) {
        enum resp_result result;
        size_t used = resp_parse(&c->parser, bytes, left, &result);
        bytes += used;
        left -= used;
        switch (result) {
        case RESP_MORE:
            break;
        case RESP_REQUEST:
            if (c->parser.argc > 0) {
                c->argv = c->parser.argv;
                c->argc = c->parser.argc;
                command_dispatch(c);
            }
            resp_request_done(&c->parser);
            *open = !c->closing;
            paused = pause && pause(ctx);
            break;
        case RESP_OOM:
            reply_error(&c->reply, ERR_OOM);
            resp_request_done(&c->parser);
            paused = pause && pause(ctx);
            break;
        case RESP_PROTOCOL: {
            struct error_text e;
            error_text_init(&e, "ERR ");
            error_text_cstr(&e, c->parser.error);
            reply_error_text(&c->reply, &e);
            c->closing = true;
            *open = false;
            break;
        }
        case RESP_TOO_BIG:
            c->closing = true;
            *open = false;
            break;
        }
    }
    reply_flush(&c->reply);
    return len - left;
}

bool redis_conn_input(struct redis_conn *c, const void *data, size_t len,
                      void (*out)(void *ctx, const void *buf, size_t len), void *ctx)
{
    bool open;
    redis_conn_input_paced(c, data, len, out, ctx, NULL, &open);
    return open;
}
