/*
 * The lwIP Ethernet interface over a channel (channel_netif.h).  lwIP builds
 * each outgoing frame as a pbuf chain; the ring takes one contiguous frame,
 * so the chain is gathered into a buffer first.  Received frames are copied
 * into pbufs from lwIP's pool.
 *
 * The driver is woken once per batch, not per frame: the instance's loop
 * calls channel_netif_flush() when lwIP is done with what woke it.  A full
 * tx ring wakes the driver at once, then is tried again a bounded number of
 * times before the frame is dropped (TCP resends it).
 */
#include <arch_user.h>
#include <libc.h>
#include <sys.h>
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"
#include "channel_netif.h"

#define SEND_TRIES 100000

/* Frames put into the tx ring since the driver was last woken (this instance's own global). */
static bool tx_pending;

static err_t link_output(struct netif *netif, struct pbuf *p)
{
    static uint8_t frame[NIC_FRAME_MAX];
    struct net_channel *ch = netif->state;
    if (p->tot_len > sizeof(frame))
        return ERR_IF;
    u16_t len = pbuf_copy_partial(p, frame, p->tot_len, 0);
    for (int i = 0; i < SEND_TRIES; i++) {
        if (frame_ring_put(&ch->tx, frame, len)) {
            tx_pending = true;
            return ERR_OK;
        }
        if (i == 0)
            sys_signal(ch->driver);
        arch_relax();
    }
    return ERR_MEM;
}

static err_t init(struct netif *netif)
{
    struct net_channel *ch = netif->state;
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    netif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(netif->hwaddr, ch->mac, ETH_HWADDR_LEN);
    netif->mtu = NIC_FRAME_MAX - SIZEOF_ETH_HDR;
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    netif->output = etharp_output;
    netif->linkoutput = link_output;
    return ERR_OK;
}

err_t channel_netif_add(struct netif *netif, struct net_channel *ch, const ip4_addr_t *addr,
                        const ip4_addr_t *netmask, const ip4_addr_t *gateway)
{
    if (!netif_add(netif, addr, netmask, gateway, ch, init, ethernet_input))
        return ERR_IF;
    netif_set_default(netif);
    netif_set_up(netif);
    return ERR_OK;
}

unsigned channel_netif_poll(struct netif *netif)
{
    static uint8_t frame[NIC_FRAME_MAX];
    struct net_channel *ch = netif->state;
    unsigned frames = 0;
    size_t len;
    while ((len = frame_ring_get(&ch->rx, frame, sizeof(frame))) != 0) {
        frames++;
        struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
        if (!p)
            continue;   /* no buffer: dropped, as on a busy wire */
        pbuf_take(p, frame, (u16_t)len);
        if (netif->input(p, netif) != ERR_OK)
            pbuf_free(p);
    }
    return frames;
}

void channel_netif_flush(struct netif *netif)
{
    struct net_channel *ch = netif->state;
    if (tx_pending) {
        tx_pending = false;
        sys_signal(ch->driver);
    }
}
