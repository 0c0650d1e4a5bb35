/* What the lock layer needs from the kernel (lock/lock.h); the inline part is in lock_env.h. */
#include "core.h"
#include "printf.h"
#include <arch.h>
#include <lock.h>

void lock_env_init(unsigned ncores)
{
    for (unsigned i = 0; i < ncores; i++)
        arch_set_lock_data(i, lock_core_data(i));
}

/* Spinning for the kernel lock: keep serving requests the holder may be waiting for. */
void kernel_lock_wait_hook(void)
{
    core_serve_mailbox();
}

_Noreturn void lock_panic(const char *msg)
{
    panic("lock: %s", msg);
}
