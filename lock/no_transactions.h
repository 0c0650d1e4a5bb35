/*
 * For the variants without hardware transactions (none, bkl, fine): every
 * kernel section may already print and run the invariant checker, so
 * kernel_lock_require_exclusive() has nothing to do, and RTM is never
 * active.  Included by those variants' lock_config.h.
 */
#ifndef LOCK_NO_TRANSACTIONS_H
#define LOCK_NO_TRANSACTIONS_H

#include <stdbool.h>

static inline void kernel_lock_require_exclusive(void)
{
}

static inline bool lock_rtm_active(void)
{
    return false;
}

#endif
