/*
 * lwIP's configuration for the guest (docs/network.md).  One instance runs
 * on one thread with no operating-system layer (NO_SYS): the thread that
 * owns it feeds it frames and calls its timers, so lwIP needs no locks and
 * only the raw (callback) API exists.  IPv4 and TCP over Ethernet and ARP,
 * plus ICMP echo so that the stack answers ping; no UDP, DHCP, DNS or IPv6
 * (the guest's address is fixed, see network.md).
 *
 * Memory is lwIP's own: a static heap for the pbufs TCP writes into and
 * static pools for the rest, sized for the Redis benchmark: redis-benchmark
 * opens 50 connections for each test and the next test's 50 arrive while
 * the last test's are still closing, so 128 pcbs; each connection has a
 * window and a send buffer of 8 full segments.
 */
#ifndef LWIPOPTS_H
#define LWIPOPTS_H

#define NO_SYS                      1
#define SYS_LIGHTWEIGHT_PROT        0
#define LWIP_SOCKET                 0
#define LWIP_NETCONN                0
#define LWIP_TIMERS                 1

#define LWIP_IPV4                   1
#define LWIP_IPV6                   0
#define LWIP_ARP                    1
#define LWIP_ETHERNET               1
#define LWIP_ICMP                   1
#define LWIP_UDP                    0
#define LWIP_DHCP                   0
#define LWIP_DNS                    0
#define LWIP_IGMP                   0
#define LWIP_RAW                    0
#define LWIP_TCP                    1
#define IP_REASSEMBLY               0
#define IP_FRAG                     0

/* The loopback interface, for the in-guest test without a NIC (test_lwip.c). */
#define LWIP_HAVE_LOOPIF            1
#define LWIP_NETIF_LOOPBACK         1
#define LWIP_LOOPBACK_MAX_PBUFS     64

#define MEM_ALIGNMENT               8
#define MEM_SIZE                    (256 * 1024)
#define MEMP_NUM_PBUF               64
#define MEMP_NUM_TCP_PCB            128
#define MEMP_NUM_TCP_PCB_LISTEN     4
#define MEMP_NUM_TCP_SEG            512
#define MEMP_NUM_SYS_TIMEOUT        8
#define PBUF_POOL_SIZE              128

#define TCP_MSS                     1460
#define TCP_WND                     (8 * TCP_MSS)
#define TCP_SND_BUF                 (8 * TCP_MSS)
#define TCP_SND_QUEUELEN            (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_LISTEN_BACKLOG          0
#define LWIP_TCP_KEEPALIVE          0
/*
 * Keepalive for a connection that asks for it (SOF_KEEPALIVE: the lwIP tests' server,
 * userland/tests/lwip_test_server.c), probing after 20 s idle, every 5 s, reset after 4
 * unanswered: QEMU's user network sends the guest a single reset when the
 * host's side of a connection is reset, and when that frame is lost the guest's side stays
 * ESTABLISHED forever (the soak test's load left some so: docs/network.md).  A probe to a
 * connection QEMU has forgotten gets a reset back; a live peer just acknowledges it.
 */
#define TCP_KEEPIDLE_DEFAULT        20000
#define TCP_KEEPINTVL_DEFAULT       5000
#define TCP_KEEPCNT_DEFAULT         4

/*
 * A SYN may reopen a connection held in TIME-WAIT when its sequence number is beyond the old
 * connection's (RFC 1122 4.2.2.13), which lwIP 2.1.3 does not do by itself: QEMU's user
 * network reuses the host clients' ports, and a client given the port of a connection the
 * server closed moments ago otherwise waits minutes for its first reply (tcp_timewait_reuse.c).
 */
#define LWIP_HOOK_FILENAME          "tcp_timewait_reuse.h"
#define LWIP_HOOK_IP4_INPUT(p, inp) tcp_timewait_reuse((p), (inp))

#define LWIP_NETIF_STATUS_CALLBACK  0
#define LWIP_NETIF_LINK_CALLBACK    0

/* Pool counters: the tests read them to see that every connection's memory came back. */
#define LWIP_STATS                  1
#define LWIP_STATS_DISPLAY          0
#define MEM_STATS                   1
#define MEMP_STATS                  1
#define LINK_STATS                  0
#define ETHARP_STATS                0
#define IP_STATS                    0
#define ICMP_STATS                  0
#define TCP_STATS                   0
#define SYS_STATS                   0

#endif
