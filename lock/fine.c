/*
 * Variant `fine`: a big-reader lock plus per-object ticket locks ("An
 * Evaluation of Coarse-Grained Locking for Multicore Microkernels" §3.3,
 * "For a Microkernel, a Big Lock Is Fine" §3.2).  The per-entry operations
 * (read side, object locks) are inline in lock/variant/fine/lock_config.h;
 * this file has the rest.
 *
 * IPC, notification, fault and interrupt entries (ENTRY_IPC) take the read
 * side, so they run in parallel on all cores; they then lock the TCBs,
 * endpoints, notifications and scheduler queues they touch with
 * object_locks_acquire().  Every other entry (ENTRY_GENERAL: object
 * creation, deletion, everything rare) takes the write side and excludes
 * all readers.  Because objects are freed only under the write side, a
 * reader may follow pointers to objects before locking them: that is what
 * lets it identify all objects first and then lock them in address order.
 *
 * Lock order: the big-reader lock first, then object locks in ascending
 * address order, never more than OBJECT_LOCKS_MAX per call.  DEBUG builds
 * keep the addresses each core holds and panic (lock_panic()) when a core
 * takes an object lock at or below one it already holds, when it releases
 * one it does not hold, or leaves the kernel still holding one.
 */
#include "lock.h"
#include "brlock.h"
#include "ticket.h"
#include "lockstats.h"

const char *const lock_variant_name = "fine";

/* Read by the inline read side in lock/variant/fine/lock_config.h. */
struct brlock fine_big;
struct fine_core fine_cores[LOCK_MAX_CORES];
static struct brlock_reader big_readers[LOCK_MAX_CORES];

/* The core's reader flag: all that the inline read side needs. */
void *lock_core_data(unsigned core)
{
    return &big_readers[core];
}

void kernel_lock_init(unsigned ncores)
{
    if (ncores == 0 || ncores > LOCK_MAX_CORES) {
        lock_panic("kernel_lock_init: core count outside 1..LOCK_MAX_CORES");
    }
    brlock_init(&fine_big, big_readers, ncores);
    for (unsigned i = 0; i < ncores; i++) {
        fine_cores[i].on_write_side = false;
        fine_cores[i].reader = &big_readers[i];
        fine_cores[i].nheld = 0;
    }
}

static void take_write(unsigned core, uint64_t t0)
{
    bool waited = brlock_write_lock(&fine_big, kernel_lock_wait_hook);

    fine_cores[core].on_write_side = true;
    lockstats_acquired(core, t0, waited, BRLOCK_WRITE_LOCK_BARRIERS(fine_big.ncores));
}

static void debug_check_none_held(unsigned core, const char *msg)
{
    if (FINE_DEBUG && fine_cores[core].nheld != 0) {
        lock_panic(msg);
    }
}

/*
 * kernel_lock_acquire() (lock_config.h) after its inline read attempt
 * failed (a writer was in: the attempt counted one fence, and its back-off
 * one release store) or for the write side.
 */
void fine_acquire_slow(enum kernel_entry_kind kind, unsigned core, uint64_t t0)
{
    if (kind == ENTRY_IPC) {
        unsigned attempts = brlock_read_lock(&fine_big, core, kernel_lock_wait_hook);

        lockstats_acquired(core, t0, true,
                           (attempts + 1) * BRLOCK_READ_ATTEMPT_BARRIERS +
                           attempts * BRLOCK_READ_BACKOFF_BARRIERS);
    } else {
        take_write(core, t0);
    }
}

bool kernel_lock_upgrade(void)
{
    unsigned core = lock_env_core_id();

    if (!brlock_read_held_as(fine_cores[core].reader)) {
        return false;
    }
    debug_check_none_held(core, "kernel_lock_upgrade: object locks held");
    lockstats_released(core, BRLOCK_READ_UNLOCK_BARRIERS);
    brlock_read_unlock(&fine_big, core);
    take_write(core, lockstats_now());
    return true;
}

/* kernel_lock_release() (lock_config.h) when the core is not a reader. */
void fine_release_write(unsigned core)
{
    if (fine_cores[core].on_write_side) {
        fine_cores[core].on_write_side = false;
        lockstats_released(core, BRLOCK_WRITE_UNLOCK_BARRIERS);
        brlock_write_unlock(&fine_big);
    } else if (FINE_DEBUG) {
        lock_panic("kernel_lock_release: kernel lock not held");
    }
}

void object_lock_init(struct object_lock *lock)
{
    ticket_init(&lock->ticket);
}

/*
 * DEBUG: `l` is about to be taken by `core`; check and record the order.
 * Called by the inline object_locks_acquire() in lock_config.h.
 */
void fine_debug_note_acquire(unsigned core, const struct object_lock *l)
{
    struct fine_core *c = &fine_cores[core];
    uintptr_t a = (uintptr_t)l;

    if (!FINE_DEBUG) {
        return;
    }
    for (unsigned i = 0; i < c->nheld; i++) {
        if (c->held[i] >= a) {
            lock_panic("object lock order: taken at or below an address already held");
        }
    }
    if (c->nheld == FINE_HELD_MAX) {
        lock_panic("object lock order: too many object locks held");
    }
    c->held[c->nheld++] = a;
}

/* DEBUG: `l` is about to be released by `core`, which must hold it (object_locks_release()). */
void fine_debug_note_release(unsigned core, const struct object_lock *l)
{
    struct fine_core *c = &fine_cores[core];
    uintptr_t a = (uintptr_t)l;

    if (!FINE_DEBUG) {
        return;
    }
    for (unsigned i = 0; i < c->nheld; i++) {
        if (c->held[i] == a) {
            c->held[i] = c->held[--c->nheld];
            return;
        }
    }
    lock_panic("object lock release: lock not held by this core");
}
