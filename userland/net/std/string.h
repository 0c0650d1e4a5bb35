/* lwIP's sources include <string.h>; in our freestanding userland libc.h declares those functions. */
#ifndef LWIP_STD_STRING_H
#define LWIP_STD_STRING_H
#include <libc.h>
#endif
