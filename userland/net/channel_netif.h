/*
 * An lwIP Ethernet interface over a channel to the NIC driver
 * (net_channel.h): lwIP's frames go into the channel's tx ring, and
 * channel_netif_poll() hands lwIP what the driver put into the rx ring.
 * The instance's thread, which owns the lwIP instance, makes every call.
 */
#ifndef NET_CHANNEL_NETIF_H
#define NET_CHANNEL_NETIF_H

#include "lwip/netif.h"
#include "net_channel.h"

/*
 * Add the interface with a fixed IPv4 configuration and make it the default
 * route.  ERR_OK, or lwIP's error.
 */
err_t channel_netif_add(struct netif *netif, struct net_channel *ch, const ip4_addr_t *addr,
                        const ip4_addr_t *netmask, const ip4_addr_t *gateway);

/* Give lwIP every frame waiting in the rx ring; returns how many. */
unsigned channel_netif_poll(struct netif *netif);

/* Wake the driver if frames went into the tx ring since the last wake-up. */
void channel_netif_flush(struct netif *netif);

#endif
