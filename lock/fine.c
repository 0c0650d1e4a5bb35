/*
 * Variant `fine`: a big-reader lock plus per-object ticket locks (000 §3.3,
 * 002 §3.2).
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

#if defined(DEBUG) && DEBUG
#define LOCK_DEBUG true
#else
#define LOCK_DEBUG false
#endif

const char *const lock_variant_name = "fine";

/* Object locks a core may hold at once, for the DEBUG bookkeeping. */
#define FINE_HELD_MAX (2 * OBJECT_LOCKS_MAX)

enum fine_side {
    FINE_OUT,       /* not in the kernel lock */
    FINE_READ,
    FINE_WRITE,
};

/* Per-core state, written only by its core. */
struct fine_core {
    _Alignas(LOCK_CACHE_LINE) enum fine_side side;
    unsigned nheld;                     /* DEBUG: entries used in held[] */
    uintptr_t held[FINE_HELD_MAX];      /* DEBUG: object locks held, any order */
};

_Static_assert(sizeof(struct fine_core) % LOCK_CACHE_LINE == 0, "per-core state on its own lines");

static struct brlock big;
static struct brlock_reader big_readers[LOCK_MAX_CORES];
static struct fine_core fine_cores[LOCK_MAX_CORES];

void kernel_lock_init(unsigned ncores)
{
    if (ncores == 0 || ncores > LOCK_MAX_CORES) {
        lock_panic("kernel_lock_init: core count outside 1..LOCK_MAX_CORES");
    }
    brlock_init(&big, big_readers, ncores);
    for (unsigned i = 0; i < ncores; i++) {
        fine_cores[i].side = FINE_OUT;
        fine_cores[i].nheld = 0;
    }
}

static void take_read(unsigned core)
{
    uint64_t t0 = lockstats_now();
    unsigned attempts = brlock_read_lock(&big, core, kernel_lock_wait_hook);

    fine_cores[core].side = FINE_READ;
    lockstats_acquired(core, t0, attempts > 1,
                       attempts * BRLOCK_READ_ATTEMPT_BARRIERS +
                       (attempts - 1) * BRLOCK_READ_BACKOFF_BARRIERS);
}

static void take_write(unsigned core)
{
    uint64_t t0 = lockstats_now();
    bool waited = brlock_write_lock(&big, kernel_lock_wait_hook);

    fine_cores[core].side = FINE_WRITE;
    lockstats_acquired(core, t0, waited, BRLOCK_WRITE_LOCK_BARRIERS(big.ncores));
}

static void debug_check_none_held(unsigned core, const char *msg)
{
    if (LOCK_DEBUG && fine_cores[core].nheld != 0) {
        lock_panic(msg);
    }
}

void kernel_lock_acquire(enum kernel_entry_kind kind)
{
    unsigned core = lock_env_core_id();

    if (LOCK_DEBUG && fine_cores[core].side != FINE_OUT) {
        lock_panic("kernel_lock_acquire: core already holds the kernel lock");
    }
    if (kind == ENTRY_IPC) {
        take_read(core);
    } else {
        take_write(core);
    }
}

bool kernel_lock_upgrade(void)
{
    unsigned core = lock_env_core_id();

    if (fine_cores[core].side != FINE_READ) {
        return false;
    }
    debug_check_none_held(core, "kernel_lock_upgrade: object locks held");
    lockstats_released(core, BRLOCK_READ_UNLOCK_BARRIERS);
    brlock_read_unlock(&big, core);
    take_write(core);
    return true;
}

void kernel_lock_release(void)
{
    unsigned core = lock_env_core_id();
    enum fine_side side = fine_cores[core].side;

    debug_check_none_held(core, "kernel_lock_release: object locks still held");
    fine_cores[core].side = FINE_OUT;
    if (side == FINE_READ) {
        lockstats_released(core, BRLOCK_READ_UNLOCK_BARRIERS);
        brlock_read_unlock(&big, core);
    } else if (side == FINE_WRITE) {
        lockstats_released(core, BRLOCK_WRITE_UNLOCK_BARRIERS);
        brlock_write_unlock(&big);
    } else if (LOCK_DEBUG) {
        lock_panic("kernel_lock_release: kernel lock not held");
    }
}

void kernel_lock_require_exclusive(void)
{
}

void object_lock_init(struct object_lock *lock)
{
    ticket_init(&lock->ticket);
}

/*
 * Copy the non-NULL locks of locks[0..n) into out[] in ascending address
 * order without duplicates; returns how many.  Insertion sort: n <= 4.
 */
static unsigned sort_unique(struct object_lock *const *locks, unsigned n,
                            struct object_lock **out)
{
    unsigned m = 0;

    if (n > OBJECT_LOCKS_MAX) {
        lock_panic("object locks: more than OBJECT_LOCKS_MAX in one call");
    }
    for (unsigned i = 0; i < n; i++) {
        struct object_lock *l = locks[i];
        unsigned j = m;

        if (l == NULL) {
            continue;
        }
        while (j > 0 && (uintptr_t)out[j - 1] > (uintptr_t)l) {
            j--;
        }
        if (j > 0 && out[j - 1] == l) {
            continue;
        }
        for (unsigned k = m; k > j; k--) {
            out[k] = out[k - 1];
        }
        out[j] = l;
        m++;
    }
    return m;
}

/* DEBUG: `l` is about to be taken by `core`; check and record the order. */
static void debug_note_acquire(unsigned core, const struct object_lock *l)
{
    struct fine_core *c = &fine_cores[core];
    uintptr_t a = (uintptr_t)l;

    if (!LOCK_DEBUG) {
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

/* DEBUG: `l` is about to be released by `core`, which must hold it. */
static void debug_note_release(unsigned core, const struct object_lock *l)
{
    struct fine_core *c = &fine_cores[core];
    uintptr_t a = (uintptr_t)l;

    if (!LOCK_DEBUG) {
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

void object_locks_acquire(struct object_lock *const *locks, unsigned n)
{
    struct object_lock *sorted[OBJECT_LOCKS_MAX];
    unsigned m = sort_unique(locks, n, sorted);
    unsigned core = lock_env_core_id();

    for (unsigned i = 0; i < m; i++) {
        debug_note_acquire(core, sorted[i]);
        (void)ticket_acquire(&sorted[i]->ticket, kernel_lock_wait_hook);
    }
    lockstats_barriers(core, m * TICKET_ACQUIRE_BARRIERS);
}

void object_locks_release(struct object_lock *const *locks, unsigned n)
{
    struct object_lock *sorted[OBJECT_LOCKS_MAX];
    unsigned m = sort_unique(locks, n, sorted);
    unsigned core = lock_env_core_id();

    for (unsigned i = 0; i < m; i++) {
        debug_note_release(core, sorted[i]);
        ticket_release(&sorted[i]->ticket);
    }
    lockstats_barriers(core, m * TICKET_RELEASE_BARRIERS);
}

bool lock_rtm_active(void)
{
    return false;
}
