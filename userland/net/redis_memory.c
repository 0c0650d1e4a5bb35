/*
 * The guest's figures for INFO's `# Memory` and `# Stats` sections (userland/redis/cmd_server.c):
 * the process's heap, which holds the keyspace, the connections' state and
 * their queued output, and the network stack's figures (stack_figures.h),
 * read from this process's lwIP or, in layout=processes' server process, as
 * the stack published them.  A long run (tests/test_redis_soak.py) reads
 * them to show that memory stays bounded and comes back when the keys and
 * connections are gone.  TIME-WAIT connections are counted apart: they
 * expire on lwIP's timer.
 */
#include <redis.h>
#include <root.h>
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"
#include "redis_layouts.h"
#include "stack_figures.h"
#include "tcp_server.h"

uint64_t redis_nic_rx_overruns;

/* Set in the server process of layout=processes only: its private copy of this is its own. */
static const struct stack_figures *published_figures;
/* The server stack_figures_read() reports: none until the app has started it. */
static const struct tcp_server *counted;

void stack_figures_count(const struct tcp_server *s)
{
    counted = s;
}

void stack_figures_read(struct stack_figures *f)
{
    uint64_t time_wait = 0;
    for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
        time_wait++;
    static const struct tcp_server none;
    const struct tcp_server *s = counted ? counted : &none;
    *f = (struct stack_figures){
        .tcp_pcbs = lwip_stats.memp[MEMP_TCP_PCB]->used - time_wait,
        .tcp_pcbs_time_wait = time_wait,
        .heap_used = lwip_stats.mem.used,
        .rx_pool_empty = lwip_stats.memp[MEMP_PBUF_POOL]->err,
        .nic_rx_overruns = redis_nic_rx_overruns,
        .output_queued = s->queued,
        .conns_accepted = s->accepted,
        .conns_refused = s->refused,
        .conns_evicted = s->evicted,
        .conns_reset = s->reset,
        .conns_reset_by_peer = s->reset_by_peer,
        .conns_aborted_by_lwip = s->aborted_by_lwip,
    };
}

void stack_figures_published_at(const struct stack_figures *published)
{
    published_figures = published;
}

bool redis_env_memory(struct redis_memory *m)
{
    struct heap_usage heap;
    struct stack_figures stack;

    malloc_usage(&heap);
    if (published_figures)
        stack = *published_figures;
    else
        stack_figures_read(&stack);
    *m = (struct redis_memory){
        .used = heap.in_use,
        .carved = heap.carved,
        .size = heap.size,
        .tcp_pcbs = stack.tcp_pcbs,
        .tcp_pcbs_time_wait = stack.tcp_pcbs_time_wait,
        .stack_heap_used = stack.heap_used,
        .rx_pool_empty = stack.rx_pool_empty,
        .nic_rx_overruns = stack.nic_rx_overruns,
        .output_queued = stack.output_queued,
        .conns_accepted = stack.conns_accepted,
        .conns_refused = stack.conns_refused,
        .conns_evicted = stack.conns_evicted,
        .conns_reset = stack.conns_reset,
        .conns_reset_by_peer = stack.conns_reset_by_peer,
        .conns_aborted_by_lwip = stack.conns_aborted_by_lwip,
    };
    return true;
}
