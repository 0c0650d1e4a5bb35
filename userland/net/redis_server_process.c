/*
 * The Redis server process of layout=processes (redis_server_process.h):
 * the database and the connections' parsers, without a network stack.  It
 * answers the stack's Calls on the link's endpoint (server_link.h) with
 * ReplyRecv, so one request costs the stack one round trip through the
 * kernel, as in the papers' one-core layout.  Its INFO reports the stack's
 * figures as the stack published them in the link (stack_figures.h).
 */
#include <redis.h>
#include <root.h>
#include <sys.h>
#include "net_channel.h"
#include "redis_server_process.h"
#include "server_link.h"
#include "stack_figures.h"

void redis_server_process_main(void *arg)
{
    static struct link_server server;
    struct server_link *link = arg;

    server.request = link->request;
    server.reply = link->reply;
    server.reply_max = link->reply_max;
    stack_figures_published_at(&link->stack);
    if (malloc_add_region((void *)link->heap_vaddr, link->heap_size))
        server.db = redis_db_new();
    if (!server.db) {
        printf("redis server process: no memory for the database\n");
        channel_report(&link->state, link->driver, CHANNEL_FAILED);
        return;
    }
    channel_report(&link->state, link->driver, CHANNEL_SERVING);
    struct msg m;
    word_t st = sys_recv(link->endpoint, &m);
    while (st == E_OK) {
        struct link_answer a;
        enum link_result result = redis_link_serve(&server, (unsigned)msginfo_label(m.info), m.mr[0], m.mr[1], &a);
        m = (struct msg){ .info = msginfo_new(0, 0, 0, 4), .mr = { result, a.value, a.taken, a.pending } };
        st = sys_reply_recv(link->endpoint, &m);
    }
    printf("redis server process: receiving on its endpoint failed (%s)\n", status_name(st));
}
