/*
 * Variant `rtm` (x86_64 only): the big kernel lock of `bkl`, elided with
 * Intel RTM ("An Evaluation of Coarse-Grained Locking for Multicore
 * Microkernels" §3.4, "For a Microkernel, a Big Lock Is Fine" §3.3;
 * lock/rtm.h has the algorithm).  Almost the whole kernel runs as one
 * hardware transaction per entry; the CLH lock is the fallback.  Everything
 * that aborts transactions (CR3 loads, IPIs, interrupt mask/ack) is
 * deferred until after kernel_lock_release(), see docs/locking.md.
 *
 * kernel_lock_init() probes RTM through the arch layer.  Where it does not
 * work (no TSX, or a KVM guest whose XBEGIN faults) the variant runs the
 * plain `bkl` path, and lock_rtm_active() says so for the boot record.
 */
#include "lock.h"
#include "clh.h"
#include "rtm.h"
#include "lockstats.h"

const char *const lock_variant_name = "rtm";

/* The fallback lock and the RTM flag are read by the inline acquire and release in
 * lock/variant/rtm/lock_config.h. */
struct clh_lock rtm_fallback_lock;
static struct clh_core fallback_cores[CLH_CORES_STORAGE(LOCK_MAX_CORES)];
static struct rtm_core rtm_cores[LOCK_MAX_CORES];

/* Written once on the boot core before other cores run; read-only after. */
bool rtm_on;

/* The fallback lock's entry: the inline acquire and release use it when RTM is off. */
void *lock_core_data(unsigned core)
{
    return &fallback_cores[core];
}

void kernel_lock_init(unsigned ncores)
{
    if (ncores == 0 || ncores > LOCK_MAX_CORES) {
        lock_panic("kernel_lock_init: core count outside 1..LOCK_MAX_CORES");
    }
    clh_init(&rtm_fallback_lock, fallback_cores, ncores);
    for (unsigned i = 0; i < ncores; i++) {
        rtm_cores[i].skip = 0;
    }
    rtm_on = lock_rtm_probe();
}

void rtm_kernel_lock_acquire(unsigned core, uint64_t t0)
{
    /*
     * Inside a transaction the statistics below are transactional too: an
     * aborted attempt leaves no acquisition behind, while the abort
     * counters, written after the abort, persist.
     */
    if (rtm_elide_acquire(&rtm_fallback_lock, &rtm_cores[core], core, kernel_lock_wait_hook,
                          lockstats_of(core))) {
        lockstats_acquired(core, t0, false, RTM_BEGIN_BARRIERS);
    } else {
        lockstats_acquired(core, t0, false, CLH_ACQUIRE_BARRIERS);
    }
}

void kernel_lock_require_exclusive(void)
{
    /* Without RTM, XTEST itself would raise #UD. */
    if (rtm_on && rtm_test()) {
        rtm_abort(LOCK_ABORT_NEEDS_LOCK);
    }
}

bool lock_rtm_active(void)
{
    return rtm_on;
}
