/*
 * The lock layer's environment functions that must cost nothing: the core
 * index, the cycle counter and the lock's per-core pointer, inline (lock/lock.h includes this header
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

/* lock_core_data() of this core, kept by the port (arch_set_lock_data()). */
static inline void *lock_env_core_data(void)
{
    return arch_lock_data();
}

/* Boot, before any core takes the kernel lock: give each core its lock_core_data(). */
void lock_env_init(unsigned ncores);

static inline uint64_t lock_env_cycles(void)
{
    return arch_cycles();
}

#endif
