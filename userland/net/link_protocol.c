/*
 * The stack's side of layout=processes (link_protocol.h).  A connection's
 * state here is only the server's id for it, kept in the pointer itself
 * (id + 1, so that no connection is NULL).  A stack process has one link,
 * and tcp_server hands input and close only the connection's state, so the
 * link is this file's.  A Call that fails (the server process is gone), or
 * an answer that does not make sense, ends the connection, as a refused open
 * or a closed one.
 *
 * A reply longer than the link's reply buffer is fetched piece by piece
 * (LINK_MORE_REPLY) into the connection's backlog in this process's heap.
 * The server stops after a request once the reply buffer is full; the stack
 * sends the rest of the input again only while the connection's backlog is
 * under its bound, and otherwise leaves it in TCP (tcp_server_keep_input),
 * so a client that never reads holds at most about one reply here.
 */
#include <sys.h>
#include "link_protocol.h"

_Static_assert(TCP_SERVER_MAX_CONNS <= LINK_MAX_CONNS, "the server keeps a connection for every pcb");

static struct server_link *link;

/* Call the server: its result (enum link_result), with the answer's figures in *a. */
static word_t link_call(word_t op, word_t id, word_t len, struct link_answer *a)
{
    struct msg m = { .info = msginfo_new(op, 0, 0, 2) };
    m.mr[0] = id;
    m.mr[1] = len;
    if (sys_call(link->endpoint, &m) != E_OK)
        return LINK_BAD_REQUEST;
    *a = (struct link_answer){ m.mr[1], m.mr[2], m.mr[3] };
    return m.mr[0];
}

static void *link_open(void *ctx)
{
    (void)ctx;
    struct link_answer a;
    return link_call(LINK_OPEN, 0, 0, &a) == LINK_OK ? (void *)(a.value + 1) : NULL;
}

/* Hand the reply in the link's reply buffer to out: false when its length makes no sense. */
static bool take_reply(const struct link_answer *a, tcp_server_out_fn out, void *out_ctx)
{
    if (a->value > link->reply_max)
        return false;
    out(out_ctx, link->reply, a->value);
    return true;
}

static bool link_input(void *conn, const void *data, size_t len, tcp_server_out_fn out, void *out_ctx)
{
    word_t id = (word_t)conn - 1;
    const char *p = data;
    while (len) {
        size_t n = len < LINK_REQUEST_MAX ? len : LINK_REQUEST_MAX;
        struct link_answer a;
        memcpy(link->request, p, n);
        stack_figures_read(&link->stack);
        word_t result = link_call(LINK_INPUT, id, n, &a);
        size_t taken = a.taken;
        if ((result != LINK_OK && result != LINK_CLOSE_NOW) || !taken || taken > n ||
            !take_reply(&a, out, out_ctx))
            return false;
        while (a.pending)
            if (link_call(LINK_MORE_REPLY, id, 0, &a) != LINK_OK || !a.value || !take_reply(&a, out, out_ctx))
                return false;
        if (result != LINK_OK)
            return false;
        p += taken;
        len -= taken;
        if (len && tcp_server_out_full(out_ctx)) {
            tcp_server_keep_input(out_ctx, len);
            return true;
        }
    }
    return true;
}

static void link_close(void *conn)
{
    struct link_answer unused;
    link_call(LINK_CLOSE, (word_t)conn - 1, 0, &unused);
}

void link_protocol_init(struct tcp_server_protocol *p, struct server_link *l)
{
    link = l;
    *p = (struct tcp_server_protocol){ link_open, link_input, link_close, NULL };
}
