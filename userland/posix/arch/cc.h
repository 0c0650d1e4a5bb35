/*
 * lwIP's compiler and platform definitions for the personality's own lwIP
 * (net.c), built against the C library: it has inttypes.h, ctype.h and the
 * byte order.  The root task's lwIP, without a C library, has
 * userland/net/arch/cc.h instead; what both share is lwip_port_cc.h.
 */
#ifndef LWIP_ARCH_CC_H
#define LWIP_ARCH_CC_H

#include <endian.h>
#include <limits.h>
#include <stdio.h>
#include <lwip_port_cc.h>

#endif
