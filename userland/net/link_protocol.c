/*
 * The stack's side of layout=processes (link_protocol.h).  A connection's
 * state here is only the server's id for it, kept in the pointer itself
 * (id + 1, so that no connection is NULL).  A stack process has one link,
 * and tcp_server hands input and close only the connection's state, so the
 * link is this file's.  A Call that fails (the server process is gone) ends
 * the connection, as a refused open or a closed one.
 */
#include <sys.h>
#include "link_protocol.h"

_Static_assert(TCP_SERVER_MAX_CONNS <= LINK_MAX_CONNS, "the server keeps a connection for every pcb");

static struct server_link *link;

/* Call the server: its result (enum link_result), with MR1 in *out. */
static word_t link_call(word_t op, word_t id, word_t len, word_t *out)
{
    struct msg m = { .info = msginfo_new(op, 0, 0, 2) };
    m.mr[0] = id;
    m.mr[1] = len;
    if (sys_call(link->endpoint, &m) != E_OK)
        return LINK_BAD_REQUEST;
    *out = m.mr[1];
    return m.mr[0];
}

static void *link_open(void *ctx)
{
    (void)ctx;
    word_t id;
    return link_call(LINK_OPEN, 0, 0, &id) == LINK_OK ? (void *)(id + 1) : NULL;
}

static bool link_input(void *conn, const void *data, size_t len, tcp_server_out_fn out, void *out_ctx)
{
    const char *p = data;
    while (len) {
        size_t n = len < LINK_REQUEST_MAX ? len : LINK_REQUEST_MAX;
        word_t reply_len = 0;
        memcpy(link->request, p, n);
        word_t result = link_call(LINK_INPUT, (word_t)conn - 1, n, &reply_len);
        if (result == LINK_OK || result == LINK_CLOSE_NOW)
            out(out_ctx, link->reply, reply_len);
        if (result != LINK_OK)
            return false;
        p += n;
        len -= n;
    }
    return true;
}

static void link_close(void *conn)
{
    word_t unused;
    link_call(LINK_CLOSE, (word_t)conn - 1, 0, &unused);
}

void link_protocol_init(struct tcp_server_protocol *p, struct server_link *l)
{
    link = l;
    *p = (struct tcp_server_protocol){ link_open, link_input, link_close, NULL };
}
