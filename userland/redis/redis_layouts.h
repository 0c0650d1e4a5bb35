/*
 * The layouts of the app `redis` (docs/network.md), chosen with `layout=`
 * on the boot command line: each serves the POSIX program embedded in the
 * image, and returns the app's status only when it cannot serve or a Redis
 * process ends the run (it serves until the host stops QEMU).
 */
#ifndef REDIS_REDIS_LAYOUTS_H
#define REDIS_REDIS_LAYOUTS_H

/* The NIC driver on core 0 and one Redis process per further core (layout=percore). */
int redis_serve_percore(void);

/*
 * The driver, a stack process and Redis on core 0 (layout=processes), Redis's sockets served
 * by the stack over a socket link.
 */
int redis_serve_processes(void);

#endif
