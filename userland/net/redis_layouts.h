/*
 * The layouts of the app `redis` (docs/network.md), chosen with
 * `layout=` on the boot command line: each returns the app's status only
 * when it cannot serve (it serves until the host stops QEMU).
 */
#ifndef NET_REDIS_LAYOUTS_H
#define NET_REDIS_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The NIC's nic_rx_overruns() as this instance last saw it, for INFO
 * (redis_memory.c): the one-instance loop reads it after each interrupt; a
 * per-core instance, from its channel, where the driver copies it.
 */
extern uint64_t redis_nic_rx_overruns;

/* The NIC driver, one lwIP and one server (port 6379) in one loop on core 0 (layout=single). */
int redis_serve_single(void);

/* The NIC driver on core 0 and one lwIP + server instance per further core (layout=percore). */
int redis_serve_percore(void);

/* The driver, one lwIP instance and the server as three processes on core 0 (layout=processes). */
int redis_serve_processes(void);

/*
 * layout=percore with the POSIX program embedded in the root task's image as every instance
 * (impl=posix, docs/posix-loader.md): its personality serves the channel.
 */
int redis_serve_posix(void);

/*
 * layout=processes with the POSIX program (impl=posix): the driver, a stack process and the
 * program on core 0, the program's sockets served by the stack over a socket link.
 */
int redis_serve_posix_processes(void);

/* Open the board's NIC for either layout; false (and the reason printed) when there is none. */
struct nic;
bool redis_open_nic(struct nic *nic);

#endif
