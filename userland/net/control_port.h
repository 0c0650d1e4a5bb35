/*
 * The control port of the app `redis`'s NIC driver (docs/network.md): UDP
 * port 7000 on the guest's address, served by the driver itself on core 0.
 * It lets the host mark a measured window's ends and check the kernel
 * without a command in the server: the real Redis is Debian's source
 * unchanged, so the marks cannot be Redis commands, and the driver sees
 * every frame before any instance does.
 *
 * One request per datagram, ASCII, one trailing newline allowed:
 *   "kstats <tag>"  the kernel prints its kstats and lockstats records;
 *                   reply "OK kstats <tag>" once they are out.  A repeat of the
 *                   last tag marks nothing and replies OK again, so the host
 *                   may resend a request whose reply it did not get.
 *   "check"         the kernel invariant checker; "OK check" or "ERR check failed".
 * Anything else gets "ERR <why>" and changes nothing.
 */
#ifndef NET_CONTROL_PORT_H
#define NET_CONTROL_PORT_H

#include <stddef.h>
#include <stdint.h>
#include "frame_fields.h"

#define CONTROL_PORT 7000
/* The longest request taken: "kstats " and a 20-digit tag fit; a longer one is refused. */
#define CONTROL_REQUEST_MAX 64
/* The longest reply frame: Ethernet, IPv4 and UDP headers and a reply of at most a request's length. */
#define CONTROL_REPLY_FRAME_MAX (ETH_HEADER + IPV4_HEADER + UDP_HEADER + CONTROL_REQUEST_MAX)

/*
 * Serve the request in `frame` (an Ethernet frame of `len` bytes that
 * net_driver_destination() sent here: IPv4, UDP, to CONTROL_PORT, no
 * fragment but maybe the first): do what it asks and write the reply
 * frame, addressed back to the sender, into `reply`.  The reply frame's
 * length; 0 when the frame is not a well-formed IPv4 UDP datagram, which
 * gets no reply.
 */
size_t control_port_serve(const uint8_t *frame, size_t len, uint8_t reply[CONTROL_REPLY_FRAME_MAX]);

#endif
