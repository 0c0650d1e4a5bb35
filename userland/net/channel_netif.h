/*
 * layout=percore's frame port (eth_netif.h): a channel to the NIC driver
 * (net_channel.h).  lwIP's frames go into the channel's tx ring, and
 * eth_netif_poll() takes what the driver put into the rx ring.  The
 * instance's thread, which owns the lwIP instance, makes every call.
 */
#ifndef NET_CHANNEL_NETIF_H
#define NET_CHANNEL_NETIF_H

#include "eth_netif.h"
#include "net_channel.h"

/* Fill *port with sends into ch's tx ring and receives from its rx ring. */
void channel_frame_port(struct frame_port *port, struct net_channel *ch);

/*
 * Start lwIP with one interface, on ch: the guest's address on QEMU's user
 * network (10.0.2.15/24 behind the gateway 10.0.2.2), which every instance
 * has, since the driver tells them apart by port.  *port must outlive it.
 */
err_t channel_netif_start(struct netif *netif, struct frame_port *port, struct net_channel *ch);

/* Wake the driver if frames went into the tx ring since it was last woken. */
void channel_flush(struct net_channel *ch);

#endif
