/*
 * The part of lwIP's arch/cc.h (lwIP's doc/porting) that both of this
 * tree's lwIP builds share: the root task's, freestanding
 * (userland/net/arch/cc.h), and the POSIX personality's, on the C library
 * (userland/posix/arch/cc.h).  Each cc.h declares printf and the byte
 * order its own way, then includes this.  The port's code defines the two
 * functions (userland/net/sys_arch.c, userland/posix/net.c).
 */
#ifndef LWIP_PORT_CC_H
#define LWIP_PORT_CC_H

#include <stdint.h>

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
