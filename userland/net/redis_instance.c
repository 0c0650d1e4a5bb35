/*
 * An lwIP + Redis server instance (redis_instance.h).  It reports through
 * its channel's state that it serves, or that it could not start
 * (channel_report, net_channel.h).  Then it loops: wait for
 * the driver's wake-up (frames in the rx ring, or a timer tick), hand the
 * frames to lwIP, run lwIP's timers, and wake the driver for what lwIP sent.
 *
 * It allocates no kernel object and no slot (net_channel.h): its heap is
 * memory the root task mapped into its space.  In layout=processes it keeps
 * no database: its connections' bytes go to the server process (link_protocol.h).
 */
#include <redis.h>
#include <root.h>
#include <sys.h>
#include "lwip/timeouts.h"
#include "channel_netif.h"
#include "link_protocol.h"
#include "redis_instance.h"
#include "redis_layouts.h"
#include "redis_protocol.h"
#include "stack_figures.h"
#include "tcp_server.h"

/* Start lwIP and the server; false (having said why) when it cannot. */
static bool start(struct net_channel *ch, struct netif *netif, struct tcp_server *server,
                  struct tcp_server_protocol *protocol)
{
    if (!malloc_add_region((void *)ch->heap_vaddr, ch->heap_size)) {
        printf("redis instance %lu: no heap\n", (unsigned long)ch->index);
        return false;
    }
    if (ch->link) {
        link_protocol_init(protocol, ch->link);
    } else {
        void *db = redis_db_new();
        if (!db) {
            printf("redis instance %lu: no memory for the database\n", (unsigned long)ch->index);
            return false;
        }
        redis_protocol_init(protocol, db);
    }
    static struct frame_port port;
    err_t err = channel_netif_start(netif, &port, ch);
    if (err == ERR_OK)
        err = tcp_server_start(server, (u16_t)ch->port, protocol);
    if (err != ERR_OK) {
        printf("redis instance %lu: lwIP setup failed (%d)\n", (unsigned long)ch->index, err);
        return false;
    }
    stack_figures_count(server);
    return true;
}

void redis_instance_main(void *channel)
{
    static struct netif netif;
    static struct tcp_server server;
    static struct tcp_server_protocol protocol;
    struct net_channel *ch = channel;

    if (!start(ch, &netif, &server, &protocol)) {
        channel_report(&ch->state, ch->driver, CHANNEL_FAILED);
        return;
    }
    channel_report(&ch->state, ch->driver, CHANNEL_SERVING);
    for (;;) {
        word_t w = 0;
        if (sys_wait(ch->wake, &w) != E_OK) {
            printf("redis instance %lu: waiting on its notification failed\n", (unsigned long)ch->index);
            return;
        }
        redis_nic_rx_overruns = __atomic_load_n(&ch->nic_rx_overruns, __ATOMIC_RELAXED);
        eth_netif_poll(&netif);
        sys_check_timeouts();
        channel_flush(ch);
    }
}
