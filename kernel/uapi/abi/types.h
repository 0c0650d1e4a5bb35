/* Basic ABI types shared by the kernel and userland. */
#ifndef ABI_TYPES_H
#define ABI_TYPES_H

#include <stdint.h>

/* A machine word: 64 bits on x86_64, 32 bits on arm-imx6. */
typedef uintptr_t word_t;

/* A capability address, resolved through the caller's CSpace by guards and radices. */
typedef word_t cptr_t;

#define WORD_BITS (sizeof(word_t) * 8)

#endif
