/*
 * layout=percore's frame port (channel_netif.h).  The driver is woken once
 * per batch, not per frame: the instance's loop calls channel_flush() when
 * lwIP is done with what woke it.  A full tx ring wakes the driver at once,
 * then is tried again a bounded number of times (eth_netif.c) before the
 * frame is dropped (TCP resends it).
 */
#include <libc.h>
#include <sys.h>
#include "lwip/init.h"
#include "channel_netif.h"

/* How often a full tx ring is tried again before the frame is dropped. */
#define SEND_TRIES 100000

/* Frames put into the tx ring since the driver was last woken (this instance's own global). */
static bool tx_pending;

static bool channel_send(void *channel, const void *frame, size_t len)
{
    struct net_channel *ch = channel;
    if (!frame_ring_put(&ch->tx, frame, len))
        return false;
    tx_pending = true;
    return true;
}

static size_t channel_receive(void *channel, void *buf, size_t size)
{
    struct net_channel *ch = channel;
    return frame_ring_get(&ch->rx, buf, size);
}

static void channel_no_room(void *channel)
{
    struct net_channel *ch = channel;
    sys_signal(ch->driver);
}

void channel_frame_port(struct frame_port *port, struct net_channel *ch)
{
    *port = (struct frame_port){
        .send = channel_send,
        .receive = channel_receive,
        .no_room = channel_no_room,
        .ctx = ch,
        .send_tries = SEND_TRIES,
    };
    memcpy(port->mac, ch->mac, sizeof(port->mac));
}

void channel_flush(struct net_channel *ch)
{
    if (tx_pending) {
        tx_pending = false;
        sys_signal(ch->driver);
    }
}

err_t channel_netif_start(struct netif *netif, struct frame_port *port, struct net_channel *ch)
{
    lwip_init();
    ip4_addr_t addr, netmask, gateway;
    IP4_ADDR(&addr, 10, 0, 2, 15);
    IP4_ADDR(&netmask, 255, 255, 255, 0);
    IP4_ADDR(&gateway, 10, 0, 2, 2);
    channel_frame_port(port, ch);
    return eth_netif_add(netif, port, &addr, &netmask, &gateway);
}
