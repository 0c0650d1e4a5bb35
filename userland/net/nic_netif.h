/*
 * layout=single's frame port (eth_netif.h): the NIC itself (docs/drivers.md).
 */
#ifndef NET_NIC_NETIF_H
#define NET_NIC_NETIF_H

#include <nic.h>
#include "eth_netif.h"

/* Fill *port with sends and receives on an open nic. */
void nic_frame_port(struct frame_port *port, struct nic *nic);

#endif
