/*
 * The lock layer's environment functions that must cost nothing: the core
 * index and the cycle counter, inline (lock/lock.h includes this header
 * when it is on the include path).  The rest is in kernel/lock_env.c.
 */
#ifndef KERNEL_LOCK_ENV_H
#define KERNEL_LOCK_ENV_H

#include <stdint.h>
#include <arch/machine.h>

static inline unsigned lock_env_core_id(void)
{
    return arch_core_id();
}

static inline uint64_t lock_env_cycles(void)
{
    return arch_cycles();
}

#endif
