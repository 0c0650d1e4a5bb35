/*
 * A shim that tools/qemu_run.py --net preloads into QEMU (LD_PRELOAD): every
 * listen() gets a backlog of at least LISTEN_BACKLOG_MIN.
 *
 * Why: QEMU's user network (libslirp 4.7, Debian 12) listens on each host
 * port forward (hostfwd) with listen(fd, 1), so the host kernel keeps at
 * most two connections waiting for slirp to accept them, and slirp accepts
 * one per turn of QEMU's main loop.  A client that opens many connections
 * at once (redis-benchmark -c 20, the soak's churn) overflows that queue
 * whenever the loop is slow (a loaded host, four TCG vCPUs): Linux drops
 * the SYN, or the handshake's last ACK, and the client waits for its own
 * retransmission, 1, 3, 7, 15, 31 s later.  That was the "stall" of
 * docs/network.md: a redis-benchmark connection with nothing to do for tens
 * of seconds, and a reset when the kernel gave up on a half-open one.  The
 * guest never saw those connections at all.
 *
 * With a real backlog the kernel completes every handshake and holds the
 * client's bytes until slirp accepts; nothing else about QEMU changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>

/* Linux caps a backlog at net.core.somaxconn (4096 by default). */
#define LISTEN_BACKLOG_MIN 1024

int listen(int fd, int backlog)
{
    static int (*next_listen)(int, int);
    if (!next_listen)
        next_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
    if (!next_listen)
        return -1;
    return next_listen(fd, backlog < LISTEN_BACKLOG_MIN ? LISTEN_BACKLOG_MIN : backlog);
}
