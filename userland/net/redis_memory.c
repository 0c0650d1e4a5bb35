/*
 * The guest's figures for INFO's `# Memory` section (userland/redis/cmd_server.c):
 * the root task's heap, which holds the keyspace and the connections' state,
 * and lwIP's pools and heap, which hold the connections and their queued
 * output.  A long run (tests/test_redis_soak.py) reads them to show that
 * memory stays bounded and comes back when the keys and connections are gone.
 * TIME-WAIT connections are counted apart: they expire on lwIP's timer.
 */
#include <redis.h>
#include <root.h>
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"
#include "redis_layouts.h"

uint64_t redis_nic_rx_overruns;

bool redis_env_memory(struct redis_memory *m)
{
    struct heap_usage heap;
    uint64_t time_wait = 0;

    malloc_usage(&heap);
    for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
        time_wait++;
    *m = (struct redis_memory){
        .used = heap.in_use,
        .carved = heap.carved,
        .size = heap.size,
        .tcp_pcbs = lwip_stats.memp[MEMP_TCP_PCB]->used - time_wait,
        .tcp_pcbs_time_wait = time_wait,
        .stack_heap_used = lwip_stats.mem.used,
        .rx_pool_empty = lwip_stats.memp[MEMP_PBUF_POOL]->err,
        .nic_rx_overruns = redis_nic_rx_overruns,
    };
    return true;
}
