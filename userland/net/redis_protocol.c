/* The Redis-protocol server as a tcp_server protocol (redis_protocol.h). */
#include <redis.h>
#include "redis_protocol.h"

static void *redis_open(void *db)
{
    return redis_conn_new(db);
}

static void redis_close(void *conn)
{
    redis_conn_free(conn);
}

/* Requests are taken while the connection's backlog is under its bound; the rest waits in TCP. */
static bool redis_input(void *conn, const void *data, size_t len, tcp_server_out_fn out, void *out_ctx)
{
    bool open;
    size_t taken = redis_conn_input_paced(conn, data, len, out, out_ctx, tcp_server_out_full, &open);
    if (open && taken < len)
        tcp_server_keep_input(out_ctx, len - taken);
    return open;
}

void redis_protocol_init(struct tcp_server_protocol *p, void *db)
{
    *p = (struct tcp_server_protocol){ redis_open, redis_input, redis_close, db };
}
