/*
 * The NIC driver's demultiplexer (net_driver.h).  Frames are copied once out
 * of the NIC's buffers into a ring slot, and once from a ring slot into the
 * NIC's, on core 0; the instances copy them in and out of lwIP's pbufs.
 */
#include <arch_user.h>
#include <libc.h>
#include <sys.h>
#include "control_port.h"
#include "frame_fields.h"
#include "net_driver.h"

/* How often a full NIC transmit ring is tried again before the frame is dropped. */
#define SEND_TRIES      1000

word_t net_driver_destination(const uint8_t *frame, size_t len, word_t ninstances)
{
    if (len < ETH_HEADER)
        return 0;
    unsigned type = be16(frame + 12);
    if (type == ETHERTYPE_ARP)
        return NET_TO_ALL;
    if (type != ETHERTYPE_IPV4 || len < ETH_HEADER + IPV4_HEADER)
        return 0;
    const uint8_t *ip = frame + ETH_HEADER;
    size_t ip_header = (size_t)(ip[0] & 0xf) * 4;
    if (ip_header < IPV4_HEADER || len < ETH_HEADER + ip_header + 4)
        return 0;
    unsigned port = be16(ip + ip_header + 2);
    if (ip[9] == IP_PROTO_UDP && port == CONTROL_PORT && !(be16(ip + 6) & IP_FRAGMENT_OFFSET))
        return NET_TO_DRIVER;
    if (ip[9] != IP_PROTO_TCP)
        return 0;
    return port >= REDIS_PORT_BASE && port - REDIS_PORT_BASE < ninstances ? port - REDIS_PORT_BASE : 0;
}

/* Send one frame on the NIC, retrying a full transmit ring a while before dropping it. */
static void send_frame(struct net_driver *d, const uint8_t *frame, size_t len)
{
    for (int i = 0; i < SEND_TRIES && !nic_send(d->nic, frame, len); i++)
        arch_relax();
}

void net_driver_receive(struct net_driver *d)
{
    static uint8_t frame[NIC_FRAME_MAX];
    bool got[NET_MAX_INSTANCES] = { false };
    size_t len;
    while ((len = nic_receive(d->nic, frame, sizeof(frame))) != 0) {
        word_t to = net_driver_destination(frame, len, d->ninstances);
        if (to == NET_TO_DRIVER) {
            static uint8_t reply[CONTROL_REPLY_FRAME_MAX];
            size_t reply_len = control_port_serve(frame, len, reply);
            if (reply_len)
                send_frame(d, reply, reply_len);
            continue;
        }
        for (word_t k = 0; k < d->ninstances; k++) {
            if ((to == NET_TO_ALL || to == k) && frame_ring_put(&d->channels[k]->rx, frame, len))
                got[k] = true;
        }
    }
    for (word_t k = 0; k < d->ninstances; k++)
        if (got[k])
            sys_signal(d->channels[k]->wake_signal);
}

void net_driver_transmit(struct net_driver *d)
{
    static uint8_t frame[NIC_FRAME_MAX];
    for (word_t k = 0; k < d->ninstances; k++) {
        size_t len;
        while ((len = frame_ring_get(&d->channels[k]->tx, frame, sizeof(frame))) != 0)
            send_frame(d, frame, len);
    }
}

void net_driver_tick(struct net_driver *d)
{
    for (word_t k = 0; k < d->ninstances; k++)
        sys_signal(d->channels[k]->wake_signal);
}
