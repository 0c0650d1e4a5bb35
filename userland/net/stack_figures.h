/*
 * The network stack's figures that INFO's `# Memory` and `# Stats` sections
 * report (docs/redis.md): lwIP's TCP connections and heap, frames dropped for
 * want of a pool pbuf, the NIC's overruns, the TCP glue's queued output and
 * how its connections came and went.  They
 * live where lwIP runs.  In layout=single and layout=percore that is the
 * server's own process; in layout=processes the server process runs no lwIP,
 * so the stack process publishes them in the link (server_link.h) before
 * each request it hands over, and the server's INFO reads them there: the
 * figures as they were when the request left the stack.
 */
#ifndef NET_STACK_FIGURES_H
#define NET_STACK_FIGURES_H

#include <stdint.h>

struct stack_figures {
    uint64_t tcp_pcbs;              /* TCP connections, TIME-WAIT ones left out */
    uint64_t tcp_pcbs_time_wait;
    uint64_t heap_used;             /* lwIP's heap: what TCP's send buffers hold */
    uint64_t rx_pool_empty;         /* received frames dropped: no pool pbuf free */
    uint64_t nic_rx_overruns;       /* NIC interrupts that reported frames dropped */
    uint64_t output_queued;         /* reply bytes waiting in the TCP glue's backlogs */
    uint64_t conns_accepted;        /* the counted tcp_server's counters (tcp_server.h) */
    uint64_t conns_refused;
    uint64_t conns_evicted;
    uint64_t conns_reset;
    uint64_t conns_reset_by_peer;
    uint64_t conns_aborted_by_lwip;
};

/* The process's Redis server: the TCP glue's figures are its queue and counters. */
struct tcp_server;
void stack_figures_count(const struct tcp_server *s);

/* This process's lwIP, TCP glue and NIC count as they are now. */
void stack_figures_read(struct stack_figures *f);

/* From now on INFO reports the figures at `published` (layout=processes' server process). */
void stack_figures_published_at(const struct stack_figures *published);

#endif
