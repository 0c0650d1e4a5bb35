/*
 * lwIP's IPv4 input hook (LWIP_HOOK_IP4_INPUT, lwipopts.h): a new connection
 * may reopen one that lwIP still holds in TIME-WAIT, as RFC 1122 4.2.2.13
 * allows (tcp_timewait_reuse.c says why the guest needs it).
 *
 * lwIP includes this header (LWIP_HOOK_FILENAME) in its own files before the
 * pbuf and netif types are complete, so it names them only.
 */
#ifndef NET_TCP_TIMEWAIT_REUSE_H
#define NET_TCP_TIMEWAIT_REUSE_H

struct pbuf;
struct netif;

/* Called by ip4_input for every IPv4 packet before lwIP reads it.  Frees the
 * TIME-WAIT pcb that a SYN may take over; never consumes the packet (returns 0). */
int tcp_timewait_reuse(struct pbuf *p, struct netif *inp);

#endif
