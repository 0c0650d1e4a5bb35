/*
 * Basic kernel types and helpers shared by every generic kernel file.
 * The port's <arch/machine.h> supplies the machine constants (PAGE_BITS,
 * CACHE_LINE_SIZE, struct arch_context ...).
 */
#ifndef KERNEL_TYPES_H
#define KERNEL_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <abi/types.h>
#include <abi/errors.h>
#include <arch/machine.h>

#define BIT(n)              ((word_t)1 << (n))
#define MASK(n)             (BIT(n) - 1)
#define IS_ALIGNED(x, bits) (((word_t)(x) & MASK(bits)) == 0)
#define ALIGN_UP(x, bits)   (((word_t)(x) + MASK(bits)) & ~MASK(bits))
#define ARRAY_SIZE(a)       (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)           ((a) < (b) ? (a) : (b))
#define MAX(a, b)           ((a) > (b) ? (a) : (b))
#define PAGE_SIZE           BIT(PAGE_BITS)
#define LARGE_PAGE_SIZE     BIT(LARGE_PAGE_BITS)
#define likely(x)           __builtin_expect(!!(x), 1)
#define unlikely(x)         __builtin_expect(!!(x), 0)
#define UNUSED              __attribute__((unused))
/* For the few small functions of every kernel entry that GCC would otherwise leave out of line. */
#define ALWAYS_INLINE       inline __attribute__((always_inline))
#define CACHE_ALIGNED       __attribute__((aligned(CACHE_LINE_SIZE)))
#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

/* Sets of cores: one bit per core, NCPUS may exceed a word (the Makefile allows up to 99). */
typedef struct { word_t bits[(NCPUS + 8 * sizeof(word_t) - 1) / (8 * sizeof(word_t))]; } coreset_t;

static inline void coreset_add(coreset_t *s, unsigned core)
{
    s->bits[core / WORD_BITS] |= BIT(core % WORD_BITS);
}
static inline bool coreset_has(const coreset_t *s, unsigned core)
{
    return (s->bits[core / WORD_BITS] >> (core % WORD_BITS)) & 1;
}
static inline void coreset_clear_all(coreset_t *s)
{
    for (unsigned i = 0; i < ARRAY_SIZE(s->bits); i++)
        s->bits[i] = 0;
}

/* kernel/string.c: the compiler may emit calls to the first four even with -fno-builtin. */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strlcpy(char *dst, const char *src, size_t size);

#endif
