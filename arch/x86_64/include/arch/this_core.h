/*
 * This core's struct core (kernel/core.h), included by core.h once the
 * structure is complete.  The GS-based per-core block keeps a pointer to
 * it, so that every use is one load instead of reading the core number and
 * scaling it by the size of struct core.
 */
#ifndef ARCH_THIS_CORE_H
#define ARCH_THIS_CORE_H

#include <arch/percore.h>

static inline struct core *arch_this_core(void)
{
    struct core *c;
    /* Constant while the kernel runs on this core: not volatile, so it may be reused. */
    __asm__("movq %%gs:%c1, %0" : "=r"(c) : "i"(PERCORE_KERNEL_CORE));
    return c;
}

#endif
