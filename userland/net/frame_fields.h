/*
 * The few Ethernet, IPv4 and UDP header fields the NIC driver reads and
 * writes itself, before any lwIP sees a frame: the demultiplexer
 * (net_driver.c) and the control port (control_port.c).  Offsets are from
 * each header's start; fields are big-endian on the wire.
 */
#ifndef NET_FRAME_FIELDS_H
#define NET_FRAME_FIELDS_H

#include <stdint.h>

#define ETH_HEADER          14
#define ETHERTYPE_IPV4      0x0800
#define ETHERTYPE_ARP       0x0806
#define IPV4_HEADER         20      /* without options: the least a header has, and a reply's */
#define UDP_HEADER          8
#define IP_PROTO_TCP        6
#define IP_PROTO_UDP        17
#define IP_FLAG_MF          0x2000  /* more fragments follow */
#define IP_FRAGMENT_OFFSET  0x1fff  /* a later fragment's bytes carry no UDP or TCP header */

static inline unsigned be16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static inline void put_be16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

#endif
