/*
 * An lwIP Ethernet interface over a NIC (nic.h): lwIP's frames go out with
 * nic_send, and nic_netif_poll() hands what the NIC received to lwIP.  The
 * thread that owns the lwIP instance makes every call.
 */
#ifndef NET_NIC_NETIF_H
#define NET_NIC_NETIF_H

#include <nic.h>
#include "lwip/netif.h"

/*
 * Add the interface with a fixed IPv4 configuration and make it the default
 * route.  ERR_OK, or lwIP's error.
 */
err_t nic_netif_add(struct netif *netif, struct nic *nic, const ip4_addr_t *addr,
                    const ip4_addr_t *netmask, const ip4_addr_t *gateway);

/* Give lwIP every frame the NIC has received; returns how many. */
unsigned nic_netif_poll(struct netif *netif);

#endif
