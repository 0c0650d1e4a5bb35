/*
 * lwIP's sources include <stdlib.h>; of it they use only atoi (netif.c,
 * reading an interface number from a name), which libc.h's strtoul gives.
 */
#ifndef LWIP_STD_STDLIB_H
#define LWIP_STD_STDLIB_H
#include <libc.h>

static inline int atoi(const char *s)
{
    return (int)strtoul(s, NULL, 10);
}
#endif
