/*
 * This core's struct core (kernel/core.h), included by core.h once the
 * structure is complete: one of the words above this core's kernel stack
 * (struct arm_stack_top_words, machine.h), set by arm_set_this_core().
 */
#ifndef ARCH_THIS_CORE_H
#define ARCH_THIS_CORE_H

static inline struct core *arch_this_core(void)
{
    return arm_stack_top_words()->core;
}

#endif
