/*
 * layout=single's frame port (nic_netif.h).  A full transmit ring is tried
 * again a bounded number of times (eth_netif.c): the NIC empties it by
 * itself, so nothing needs waking.
 */
#include <libc.h>
#include "nic_netif.h"

/* How often a full transmit ring is tried again before the frame is dropped (TCP resends it). */
#define SEND_TRIES 1000

static bool nic_port_send(void *nic, const void *frame, size_t len)
{
    return nic_send(nic, frame, len);
}

static size_t nic_port_receive(void *nic, void *buf, size_t size)
{
    return nic_receive(nic, buf, size);
}

void nic_frame_port(struct frame_port *port, struct nic *nic)
{
    *port = (struct frame_port){
        .send = nic_port_send,
        .receive = nic_port_receive,
        .ctx = nic,
        .send_tries = SEND_TRIES,
    };
    memcpy(port->mac, nic->mac, sizeof(port->mac));
}
