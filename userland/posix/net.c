/*
 * The process's network: its own lwIP (NO_SYS, driven from the main
 * thread), on the channel to the NIC driver on core 0 (net_channel.h,
 * channel_netif.h), as a per-core instance of docs/network.md has.  The
 * driver signals the channel's notification when it put frames into the
 * rx ring and on every timer tick; px_net_wait() sleeps on it.
 *
 * Also lwIP's platform hooks (lwip/arch/cc.h, lwip/sys.h): its clock, its
 * random numbers and its assertion handler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lwip/init.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "channel_netif.h"
#include "net_channel.h"
#include "personality.h"

/* The guest's address on QEMU's user network; the driver tells the instances apart by port. */
#define GUEST_ADDR(a)    IP4_ADDR((a), 10, 0, 2, 15)
#define GUEST_NETMASK(a) IP4_ADDR((a), 255, 255, 255, 0)
#define GUEST_GATEWAY(a) IP4_ADDR((a), 10, 0, 2, 2)

static struct {
    bool started;
    bool serving;
    struct netif netif;
    struct frame_port port;
} net;

bool px_net_present(void)
{
    return posix_start_page->channel != NULL;
}

static void net_start(void)
{
    struct net_channel *ch = posix_start_page->channel;
    lwip_init();
    ip4_addr_t addr, netmask, gateway;
    GUEST_ADDR(&addr);
    GUEST_NETMASK(&netmask);
    GUEST_GATEWAY(&gateway);
    channel_frame_port(&net.port, ch);
    if (eth_netif_add(&net.netif, &net.port, &addr, &netmask, &gateway) != ERR_OK) {
        static const char msg[] = "posix: lwIP could not add the channel's interface\n";
        px_console_write(msg, sizeof msg - 1);
        channel_report(&ch->state, ch->driver, CHANNEL_FAILED);
        px_exit_group(70);
    }
    net.started = true;
}

void px_net_poll(void)
{
    if (!px_net_present())
        return;
    if (!net.started)
        net_start();
    eth_netif_poll(&net.netif);
    sys_check_timeouts();
    channel_flush(posix_start_page->channel);
}

void px_net_wait(uint64_t deadline_ns)
{
    (void)deadline_ns;  /* the driver's ticks wake us at least every tick */
    px_wait(posix_start_page->channel->wake);
}

void px_net_serving(void)
{
    struct net_channel *ch = posix_start_page->channel;
    if (ch && !net.serving) {
        net.serving = true;
        channel_report(&ch->state, ch->driver, CHANNEL_SERVING);
    }
}

/*
 * The main thread polls the network while it waits; other threads have no
 * notification that a tick signals, so they yield until the condition or
 * the deadline.
 */
bool px_block_until(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns)
{
    for (;;) {
        if (px_self() == 0)
            px_net_poll();
        if (ready(ctx))
            return true;
        if (px_now_ns() >= deadline_ns)
            return false;
        if (px_self() == 0 && px_net_present())
            px_net_wait(deadline_ns);
        else
            px_yield();
    }
}

u32_t sys_now(void)
{
    return (u32_t)(px_now_ns() / 1000000);
}

uint32_t lwip_port_rand(void)
{
    return (uint32_t)(px_random64() >> 32);
}

_Noreturn void lwip_port_assert_failed(const char *msg, const char *file, int line)
{
    char text[256];
    int n = snprintf(text, sizeof text, "lwIP assertion failed: %s at %s:%d\n", msg, file, line);
    px_console_write(text, n > 0 && (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    px_exit_group(134);         /* as abort() would end it */
}
