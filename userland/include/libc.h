/*
 * The root task's small C library: string functions, formatted output
 * (printed through SYS_DEBUG_PUTS, one call per printf so lines stay whole),
 * number parsing, and (xorshift.h) a pseudo-random generator.
 */
#ifndef LIBC_H
#define LIBC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xorshift.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strncpy_z(char *dst, const char *src, size_t size);
unsigned long strtoul(const char *s, char **end, int base);

/* Conversions: %d %i %u %x %X %p %s %c %%, length modifiers l ll z, flags - 0, width, precision for %s. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void puts_raw(const char *s, size_t len);

/* Escape a string for a JSON string literal into buf (always NUL-terminated). */
void json_escape(char *buf, size_t size, const char *s);


#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
