/*
 * The NIC driver's side of the per-core layout (docs/network.md): on core 0,
 * the root task's main thread moves frames between the NIC and the channels
 * of the lwIP + Redis server instances, demultiplexing received frames by
 * destination TCP port.  It never blocks on an instance: a frame for a full
 * ring is dropped, as on a busy wire.
 */
#ifndef NET_NET_DRIVER_H
#define NET_NET_DRIVER_H

#include <nic.h>
#include "net_channel.h"

#define NET_MAX_INSTANCES 31    /* one per core but the driver's (BOOTINFO_MAX_CORES - 1) */

struct net_driver {
    struct nic *nic;
    word_t ninstances;
    struct net_channel *channels[NET_MAX_INSTANCES];
};

/*
 * Which instance a received frame goes to: an IPv4 TCP segment to the
 * instance whose port it is addressed to (instance 0 when it is none's: its
 * stack answers with a reset); ARP to every instance, since each keeps its
 * own ARP table and must learn the gateway's address (NET_TO_ALL); a UDP
 * datagram to the control port to the driver itself (NET_TO_DRIVER,
 * control_port.h), never to an instance; anything else to instance 0.
 */
#define NET_TO_ALL (~(word_t)0)
#define NET_TO_DRIVER (~(word_t)1)
word_t net_driver_destination(const uint8_t *frame, size_t len, word_t ninstances);

/*
 * Move every frame the NIC received into its instance's rx ring and wake
 * those instances; serve the control port's requests and send their replies.
 */
void net_driver_receive(struct net_driver *d);

/* Send every frame waiting in the instances' tx rings. */
void net_driver_transmit(struct net_driver *d);

/* Wake every instance, so that its lwIP runs its timers. */
void net_driver_tick(struct net_driver *d);

#endif
