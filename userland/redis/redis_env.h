/*
 * The C library functions the server uses.  Both the guest's small libc
 * (userland/lib) and a host's libc provide them with these standard
 * prototypes; declaring them here (C11 7.1.4) lets the same sources build
 * freestanding in the guest and hosted in the host tests without either
 * environment's other headers.
 */
#ifndef REDIS_ENV_H
#define REDIS_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
void *malloc(size_t size);
void free(void *p);

#endif
