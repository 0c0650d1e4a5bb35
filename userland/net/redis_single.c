/*
 * The app `redis`'s one-instance layout (docs/network.md, layout=single):
 * on the root task's main thread, on core 0, one event loop drives the NIC
 * driver, one lwIP instance and one server (port 6379), whatever the number
 * of cores.  It is the default layout; the per-core one is redis_percore.c
 * (docs/network.md, "The layouts").
 *
 * The loop blocks on the NIC's notification, which the NIC's interrupt and
 * the user-level timer (for lwIP's TCP timers) both signal.  The run never
 * ends by itself: the host stops QEMU when its clients are done.
 */
#include <nic.h>
#include <redis.h>
#include <root.h>
#include <sys.h>
#include "lwip/init.h"
#include "lwip/timeouts.h"
#include "nic_netif.h"
#include "redis_layouts.h"
#include "redis_protocol.h"
#include "stack_figures.h"
#include "tcp_server.h"
#include "user_timer.h"

/* The guest's address on QEMU's user network (slirp): 10.0.2.15/24 behind the gateway 10.0.2.2. */
#define GUEST_ADDR(a)    IP4_ADDR((a), 10, 0, 2, 15)
#define GUEST_NETMASK(a) IP4_ADDR((a), 255, 255, 255, 0)
#define GUEST_GATEWAY(a) IP4_ADDR((a), 10, 0, 2, 2)
#define REDIS_PORT 6379

/* The notification bit of the timer's ticks (NIC_IRQ_BADGE is the NIC's). */
#define TIMER_BADGE 2

int redis_serve_single(void)
{
    static struct nic nic;
    static struct netif netif;
    static struct frame_port port;
    static struct tcp_server server;
    static struct tcp_server_protocol protocol;

    if (!redis_open_nic(&nic))
        return 2;
    cptr_t timer = user_timer_attach(nic.irq_notification, TIMER_BADGE);
    if (!timer) {
        printf("redis: the user-level timer IRQ could not be attached\n");
        return 2;
    }
    /* YCSB's 32,000 records of 1 KB: a record takes about 3.8 KB of heap (each 100-byte
     * field value a 256-byte block), 64 MiB held 17,627 of them; 192 MiB holds them all. */
    word_t heap = malloc_extend(arg_word("heap_mb", 192) << 20);
    printf("redis: heap extended by %lu MiB\n", (unsigned long)(heap >> 20));
    void *db = redis_db_new();
    if (!db) {
        printf("redis: no memory for the database\n");
        return 2;
    }
    redis_protocol_init(&protocol, db);

    lwip_init();
    ip4_addr_t addr, netmask, gateway;
    GUEST_ADDR(&addr);
    GUEST_NETMASK(&netmask);
    GUEST_GATEWAY(&gateway);
    nic_frame_port(&port, &nic);
    err_t err = eth_netif_add(&netif, &port, &addr, &netmask, &gateway);
    if (err == ERR_OK)
        err = tcp_server_start(&server, REDIS_PORT, &protocol);
    if (err != ERR_OK) {
        printf("redis: lwIP setup failed (%d)\n", err);
        return 2;
    }
    stack_figures_count(&server);
    printf("redis: serving on 10.0.2.15 port %u (layout single: one instance on core 0, %lu core%s online)\n",
           REDIS_PORT, (unsigned long)bootinfo->ncores, bootinfo->ncores == 1 ? "" : "s");
    printf("@@ {\"redis\": {\"ports\": [%u], \"instances\": [{\"port\": %u, \"core\": 0}]}}\n",
           REDIS_PORT, REDIS_PORT);

    for (;;) {
        word_t w = 0;
        if (sys_wait(nic.irq_notification, &w) != E_OK) {
            printf("redis: waiting on the NIC's notification failed\n");
            return 1;
        }
        if (w & NIC_IRQ_BADGE) {
            nic_interrupt_done(&nic);
            redis_nic_rx_overruns = nic_rx_overruns(&nic);
            eth_netif_poll(&netif);
        }
        if (w & TIMER_BADGE)
            irq_handler_ack(timer);
        sys_check_timeouts();
    }
}
