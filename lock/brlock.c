/*
 * Big-reader lock.
 *
 * Algorithm: the "brlock" of Linux 2.4 (Ingo Molnar), later lglocks;
 * described by Corbet, "Big reader locks", LWN (cited as [Corbet] by the
 * paper, "An Evaluation of Coarse-Grained Locking for Multicore
 * Microkernels" §3.3).  Every core has a reader flag on its own cache line.
 * A reader raises its own flag and checks that no writer has announced
 * itself; a writer queues on a ticket lock, announces itself in the writer
 * word, then waits until every reader flag is down.  A reader therefore
 * writes only its own line and reads the writer word, which stays shared in
 * every reader's cache while no writer comes: read acquisition never moves
 * a line between cores.  Writers pay O(ncores) line transfers, which is
 * acceptable because the `fine` kernel takes the write side only for
 * resource management, which is rare ("An Evaluation of Coarse-Grained
 * Locking for Multicore Microkernels" §3.3).
 *
 * State (writer word W, reader flags R[c], writer ticket lock L):
 *   free             W = 0, all R = 0, L free
 *   readers in       W = 0, R[c] = 1 for each reader c
 *   writer draining  W = 1, L held, some R[c] = 1 (those readers leave, or back off)
 *   writer in        W = 1, L held, all R = 0 (a backing-off reader may raise R[c] briefly)
 *   reader c:  R[c] := 1; FENCE; if W = 0: in.  Else R[c] := 0; wait for W = 0; retry.
 *   writer:    take L; W := 1; FENCE; wait for every R[c] = 0; in.
 *   releases:  reader R[c] := 0;  writer W := 0, release L.
 *
 * The Dekker pattern, and the barrier that matters on ARM: the reader
 * stores R[c] then loads W; the writer stores W then loads each R[c].
 * Without a store-load barrier between the two accesses on each side, both
 * sides can read the other's old value (x86 store buffers do this too; ARM
 * additionally reorders freely) and a reader and the writer would both get
 * in.  Both sides therefore execute a seq_cst fence (x86 `lock or`, ARM
 * `dmb ish`) between their store and their load; the two fences are
 * totally ordered, so whichever comes second sees the other's store: the
 * reader sees W = 1 and backs off, or the writer sees R[c] = 1 and waits.
 *
 * Fairness and progress: writers are FIFO among themselves (ticket lock)
 * and have priority over readers: once W = 1 no new reader gets in, so a
 * writer waits only for readers already inside.  Readers can starve while
 * writers keep coming, which the kernel's rare write side makes moot.
 *
 * Other memory ordering (each atomic below names its partner):
 *   - writer -> later readers: the writer's release store W := 0 pairs with
 *     the reader's acquire load of W.
 *   - readers -> writer: a reader's release store R[c] := 0 pairs with the
 *     writer's acquire load of R[c].
 *   - writer -> writer: the ticket lock.
 *
 * The reader's attempt and its unlock are inline in brlock.h (every IPC
 * entry of `fine` runs them); the argument above covers them.
 *
 * Hardware assumptions: coherent caches, 64-byte lines, 32-bit atomic
 * loads and stores, a store-load fence.  Per uncontended read lock/unlock:
 * x86 1 barrier (the fence), ARMv7 3 DMBs (fence and acquire load in, one
 * release store out).
 */
#include "brlock.h"
#include "cpu_relax.h"

void brlock_init(struct brlock *b, struct brlock_reader *readers, unsigned ncores)
{
    ticket_init(&b->wlock);
    for (unsigned i = 0; i < ncores; i++) {
        /* Relaxed: nothing is shared yet; starting the other cores publishes it. */
        __atomic_store_n(&readers[i].active, 0, __ATOMIC_RELAXED);
    }
    b->readers = readers;
    b->ncores = ncores;
    /* Relaxed: as above. */
    __atomic_store_n(&b->writer, 0, __ATOMIC_RELAXED);
}

unsigned brlock_read_lock(struct brlock *b, unsigned core, lock_wait_fn hook)
{
    unsigned attempts = 1;

    while (!brlock_read_trylock(b, core)) {
        attempts++;
        /* Relaxed polling; the acquire load of the next attempt orders us. */
        while (__atomic_load_n(&b->writer, __ATOMIC_RELAXED) != 0) {
            cpu_relax();
            hook();
        }
    }
    return attempts;
}

bool brlock_write_lock(struct brlock *b, lock_wait_fn hook)
{
    bool waited = ticket_acquire(&b->wlock, hook);

    /* Relaxed: ordered before the flag loads by the fence below. */
    __atomic_store_n(&b->writer, 1, __ATOMIC_RELAXED);
    /* Seq_cst fence: the Dekker store-load barrier; pairs with the fence
     * in brlock_read_lock(). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < b->ncores; i++) {
        /* Acquire: pairs with the release stores of the flag in
         * brlock_read_unlock() and in the reader's back-off.  A reader
         * that raises its flag after our fence sees W = 1 and lowers it
         * again, so waiting for 0 always ends. */
        while (__atomic_load_n(&b->readers[i].active, __ATOMIC_ACQUIRE) != 0) {
            waited = true;
            /* Relaxed polling between the acquire checks. */
            while (__atomic_load_n(&b->readers[i].active, __ATOMIC_RELAXED) != 0) {
                cpu_relax();
                hook();
            }
        }
    }
    return waited;
}

void brlock_write_unlock(struct brlock *b)
{
    /* Release: pairs with the acquire load of W in brlock_read_lock().
     * It must precede the ticket release: the next writer's W := 1 must
     * not be overwritten by our 0. */
    __atomic_store_n(&b->writer, 0, __ATOMIC_RELEASE);
    ticket_release(&b->wlock);
}
