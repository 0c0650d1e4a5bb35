/*
 * The lwIP Ethernet interface over a frame port (eth_netif.h).  lwIP builds
 * each outgoing frame as a pbuf chain; a port takes one contiguous frame, so
 * the chain is gathered into a buffer first (the port copies it again, into
 * a DMA buffer or a ring, so one buffer serves every frame).  Received
 * frames are copied into pbufs from lwIP's pool.
 */
#include <arch_user.h>
#include <libc.h>
#include <nic.h>
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"
#include "eth_netif.h"

static err_t link_output(struct netif *netif, struct pbuf *p)
{
    static uint8_t frame[NIC_FRAME_MAX];
    struct frame_port *port = netif->state;
    if (p->tot_len > sizeof(frame))
        return ERR_IF;
    u16_t len = pbuf_copy_partial(p, frame, p->tot_len, 0);
    for (unsigned i = 0; i < port->send_tries; i++) {
        if (port->send(port->ctx, frame, len))
            return ERR_OK;
        if (i == 0 && port->no_room)
            port->no_room(port->ctx);
        arch_relax();
    }
    return ERR_MEM;
}

static err_t init(struct netif *netif)
{
    struct frame_port *port = netif->state;
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    netif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(netif->hwaddr, port->mac, ETH_HWADDR_LEN);
    netif->mtu = NIC_FRAME_MAX - SIZEOF_ETH_HDR;
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    netif->output = etharp_output;
    netif->linkoutput = link_output;
    return ERR_OK;
}

err_t eth_netif_add(struct netif *netif, struct frame_port *port, const ip4_addr_t *addr,
                    const ip4_addr_t *netmask, const ip4_addr_t *gateway)
{
    if (!netif_add(netif, addr, netmask, gateway, port, init, ethernet_input))
        return ERR_IF;
    netif_set_default(netif);
    netif_set_up(netif);
    return ERR_OK;
}

unsigned eth_netif_poll(struct netif *netif)
{
    static uint8_t frame[NIC_FRAME_MAX];
    struct frame_port *port = netif->state;
    unsigned frames = 0;
    size_t len;
    while ((len = port->receive(port->ctx, frame, sizeof(frame))) != 0) {
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
