/*
 * An lwIP Ethernet interface over a frame port: whatever carries whole
 * Ethernet frames to and from the wire: in the app `redis`, a channel to the
 * driver on core 0 (channel_netif.h).  The instance's loop calls
 * eth_netif_poll() when the port may hold received frames.
 */
#ifndef NET_ETH_NETIF_H
#define NET_ETH_NETIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lwip/netif.h"

struct frame_port {
    bool (*send)(void *ctx, const void *frame, size_t len);   /* false when there is no room now */
    size_t (*receive)(void *ctx, void *buf, size_t size);     /* one frame; 0 when none waits */
    void (*no_room)(void *ctx);   /* when a frame first finds no room (NULL: nothing to do) */
    void *ctx;
    unsigned send_tries;          /* tries of a frame before it is dropped (TCP resends it) */
    uint8_t mac[6];
};

err_t eth_netif_add(struct netif *netif, struct frame_port *port, const ip4_addr_t *addr,
                    const ip4_addr_t *netmask, const ip4_addr_t *gateway);

/* Give lwIP every frame the port holds; returns how many there were. */
unsigned eth_netif_poll(struct netif *netif);

#endif
