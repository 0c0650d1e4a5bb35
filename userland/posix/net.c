/*
 * The process's network: the socket transport the start page names
 * (socket_transport.h), run from the main thread, and the wait for it.
 * Whichever it is, a notification wakes the process: the NIC driver
 * signals the channel's when it put frames into the rx ring and on every
 * timer tick; the stack process signals the link's when a socket changed
 * and at least every LINK_TICK_MS (socket_link.h).  So a wait with a
 * deadline wakes at least every tick to look at the clock.
 *
 * Also lwIP's platform hooks (lwip/arch/cc.h, lwip/sys.h): its clock, its
 * random numbers and its assertion handler.
 */
#include <stdio.h>
#include "lwip/sys.h"
#include "personality.h"
#include "socket_transport.h"

bool px_net_present(void)
{
    return px_transport() != NULL;
}

void px_net_poll(void)
{
    if (px_net_present())
        px_transport()->poll();
}

void px_net_wait(void)
{
    px_wait(px_transport()->wake());
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
            px_net_wait();
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
