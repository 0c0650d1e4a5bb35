/* Freestanding memory and string helpers (the compiler may emit calls to the first four). */
#include "types.h"

/*
 * GCC may turn a copy or fill loop into a call to memcpy or memset, which
 * here would call itself; this attribute stops that for this file.
 */
#define NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

NO_LIBCALL void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    /* Word stores for the aligned middle: retype zeroes whole frames. */
    while (n && ((word_t)d & (sizeof(word_t) - 1))) {
        *d++ = (unsigned char)c;
        n--;
    }
    word_t w = (unsigned char)c;
    w |= w << 8;
    w |= w << 16;
    w |= (w << 16) << 16;
    for (; n >= sizeof(word_t); n -= sizeof(word_t), d += sizeof(word_t))
        *(word_t *)(void *)d = w;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

NO_LIBCALL void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

NO_LIBCALL void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i])
            return x[i] - y[i];
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* Copy at most size-1 bytes and always terminate; returns strlen(src). */
size_t strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (size) {
        size_t k = n < size - 1 ? n : size - 1;
        memcpy(dst, src, k);
        dst[k] = '\0';
    }
    return n;
}
