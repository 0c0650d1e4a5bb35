/*
 * This core's struct core (kernel/core.h), included by core.h once the
 * structure is complete: indexed by the core number from MPIDR.
 */
#ifndef ARCH_THIS_CORE_H
#define ARCH_THIS_CORE_H

static inline struct core *arch_this_core(void)
{
    return &cores[arch_core_id()];
}

#endif
