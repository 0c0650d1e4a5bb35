/*
 * The part of lock/lock.h that the lock layer's own headers need before a
 * variant's inline operations can be defined (lock/lockstats.h and
 * lock/variant/$(LOCK)/lock_config.h include it): the entry kinds, the
 * functions the environment provides, and the statistics record.
 */
#ifndef LOCK_LOCKENV_H
#define LOCK_LOCKENV_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What a kernel entry is about to do.  Under `fine`, ENTRY_IPC takes the
 * read side of the big-reader lock (IPC, notification, fault and interrupt
 * paths) and ENTRY_GENERAL the write side (everything else, including all
 * object creation and deletion).  The other variants ignore it.
 */
enum kernel_entry_kind {
    ENTRY_IPC,
    ENTRY_GENERAL,
};

/*
 * Provided by the environment: the kernel (kernel/lock_env.[ch]) or the
 * host-side test harness (tests/host/).
 *   kernel_lock_wait_hook  serve pending cross-core requests while spinning
 *   lock_env_core_id       index of the calling core, 0 .. ncores-1
 *   lock_env_cycles        a cycle counter (TSC, ARM global timer)
 *   lock_env_core_data     what lock_core_data(core) returned for the calling
 *                          core, kept by the environment where it costs the
 *                          fewest instructions to find (the kernel: in the
 *                          port's per-core block, one or two instructions);
 *                          the per-entry lock operations use it instead of
 *                          indexing the lock's own per-core table
 * An environment that can answer the last three in an instruction or two
 * (the kernel: a load from its per-core block) provides them as static
 * inline functions in a header "lock_env.h" on its include path; the inline
 * lock operations of bkl then pay no call for the core index.  Without that
 * header they are plain functions.
 */
void kernel_lock_wait_hook(void);
#if __has_include("lock_env.h")
#include "lock_env.h"
#else
unsigned lock_env_core_id(void);
uint64_t lock_env_cycles(void);
void *lock_env_core_data(void);
#endif

/*
 * Provided by the variant (lock/$(LOCK).c): core's private lock state, for
 * the environment to keep and hand back through lock_env_core_data().
 * Valid from before kernel_lock_init() on (it is static storage); NULL for
 * a variant that has none.
 */
void *lock_core_data(unsigned core);

/*
 * Also provided by the environment:
 *   lock_panic     stop the kernel with msg; does not return.  Called on
 *                  broken lock invariants (DEBUG lock-order violations, a
 *                  core count above LOCK_MAX_CORES, too many object locks).
 *   lock_rtm_probe whether XBEGIN/XEND really work on this CPU.  The arch
 *                  layer runs XBEGIN/XABORT under a #GP/#UD fixup (CPUID
 *                  alone lies inside KVM guests).  Called once, by
 *                  kernel_lock_init() of the `rtm` variant only.
 */
_Noreturn void lock_panic(const char *msg);
bool lock_rtm_probe(void);

/*
 * Statistics (LOCKSTATS=1); all zero otherwise.  Filled per core, each core
 * writing only its own cache-line-aligned slot; lock_stats_read() of another
 * core's slot is a snapshot.  acquisitions/contended/cycles_* describe the
 * kernel lock (the BKL, the elided lock, or the big-reader lock side);
 * barriers counts every barrier instruction of the lock layer, object
 * locks included.  docs/locking.md explains each field.
 */
struct lock_stats {
    uint64_t acquisitions;
    uint64_t contended;
    uint64_t cycles_held;
    uint64_t cycles_waited;
    uint64_t rtm_commits;
    uint64_t rtm_aborts_conflict;
    uint64_t rtm_aborts_capacity;
    uint64_t rtm_aborts_explicit;
    uint64_t rtm_aborts_lock_held;
    uint64_t rtm_aborts_other;
    uint64_t rtm_fallbacks;
    uint64_t barriers;
    uint64_t hold_histogram[16];    /* bucket i: held < 2^(i+6) cycles */
};

#endif
