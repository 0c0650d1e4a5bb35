/*
 * lwIP's compiler and platform header for our userland (lwIP's doc/porting:
 * "arch/cc.h").  The userland is freestanding: types come from the
 * compiler's <stdint.h>, formatted output and the assertion handler from our
 * library and port (sys_arch.c), and the byte order from the compiler.
 */
#ifndef LWIP_ARCH_CC_H
#define LWIP_ARCH_CC_H

#include <libc.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BYTE_ORDER LITTLE_ENDIAN
#else
#define BYTE_ORDER BIG_ENDIAN
#endif

/*
 * No <inttypes.h> or <ctype.h> in a freestanding build: lwIP then uses its
 * own character tests, and the printf formats of its types are given here.
 * uint32_t is unsigned int where long has 64 bits (x86_64) and unsigned long
 * on the 32-bit ARM EABI, where long has 32.
 */
#define LWIP_NO_INTTYPES_H 1
#define LWIP_NO_CTYPE_H 1
#define X8_F  "02x"
#define U16_F "u"
#define S16_F "d"
#define X16_F "x"
#if __SIZEOF_LONG__ == 4
#define U32_F "lu"
#define S32_F "ld"
#define X32_F "lx"
#else
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#endif
#define SZT_F "zu"

#include <lwip_port_cc.h>

#endif
