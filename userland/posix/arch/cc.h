/*
 * lwIP's compiler and platform definitions for the personality's own lwIP
 * (net.c), built against the C library: it has inttypes.h, ctype.h and the
 * byte order.  The root task's lwIP, without a C library, has
 * userland/net/arch/cc.h instead.
 */
#ifndef LWIP_ARCH_CC_H
#define LWIP_ARCH_CC_H

#include <endian.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

/* Protocol headers are read in place from frames, at any alignment. */
#define PACK_STRUCT_FIELD(x) x
#define PACK_STRUCT_STRUCT __attribute__((packed))
#define PACK_STRUCT_BEGIN
#define PACK_STRUCT_END

_Noreturn void lwip_port_assert_failed(const char *msg, const char *file, int line);
uint32_t lwip_port_rand(void);

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) lwip_port_assert_failed((x), __FILE__, __LINE__)
#define LWIP_RAND() lwip_port_rand()

#endif
