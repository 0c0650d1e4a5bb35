/*
 * CLH queue lock.
 *
 * Algorithm: T. S. Craig, "Building FIFO and priority-queuing spin locks
 * from atomic swap", TR 93-02-02, Dept. of Computer Science and
 * Engineering, University of Washington, 1993; independently Magnusson,
 * Landin and Hagersten, "Queue locks on cache coherent multiprocessors",
 * IPPS 1994.  The paper this kernel follows ("An Evaluation of
 * Coarse-Grained Locking for Multicore Microkernels" §3.2, "For a
 * Microkernel, a Big Lock Is Fine" §3.1) uses it for the big kernel lock
 * because it is a scalable queue lock.
 *
 * Each core enqueues a node whose `locked` word is 1 by swapping it into
 * the tail, then spins on its predecessor's node until that reads 0.  To
 * release, the holder writes 0 into its own node, which its successor is
 * spinning on, and adopts its predecessor's node for its next acquire: the
 * predecessor has finished with that node and the releasing core was its
 * only spinner, so nobody else can still read it.  Every waiter spins on a
 * different cache line, and a release touches exactly one remote line.
 *
 * State (tail T, node n of core c):
 *   free                 T = n0, n0.locked = 0
 *   c holds              T = nc, nc.locked = 1, c watched n0 until it read 0
 *   c holds, d queued    T = nd, nd.locked = 1, d spins on nc
 *   acquire by c:  nc.locked := 1; pred := swap(T, nc); spin until pred.locked = 0;
 *                  c.held := nc; c.mine := pred
 *   release by c:  c.held.locked := 0
 *
 * The adoption happens at the end of the acquire, not at the release (as
 * Craig has it): once the predecessor's word reads 0 its node is ours, and
 * the release is then a single store through one pointer (ARMv7: a load,
 * a DMB and a store).
 *
 * Fairness and progress: FIFO in the order of the swaps on the tail, hence
 * starvation-free; a waiter is overtaken by no one.  Blocking: a holder or
 * waiter that stops running stops everyone behind it (cores in the kernel
 * run with interrupts off, so they are never descheduled).
 *
 * Memory ordering (each atomic below names its partner):
 *   - The swap on the tail is acq_rel.  Its release half publishes
 *     `locked = 1` of our node before the successor can find the node; its
 *     acquire half pairs with the predecessor's swap, so our read of the
 *     predecessor's `locked` sees its 1 and never an older 0 left by the
 *     node's previous use.
 *   - The release store of 0 in clh_release() pairs with the successor's
 *     acquire load after its spin: the whole critical section happens
 *     before the successor's.
 *   - The first look at the predecessor's word is that acquire load; when
 *     it reads 0 the lock is ours with no second load.  Otherwise the spin
 *     (clh_wait(), out of line) uses relaxed loads and is followed by one
 *     acquire load of the same word (it cannot change back: only the
 *     successor ever writes a node it has adopted), which keeps the DMB out
 *     of the loop on ARM and keeps the pairing visible to ThreadSanitizer.
 *
 * clh_acquire() and clh_release() are inline in clh.h (they run on every
 * kernel entry); each atomic there names its partner as below.
 *
 * Hardware assumptions: atomic pointer-sized swap (XCHG on x86; LDREX/STREX
 * on ARMv7), coherent caches, 64-byte lines.  Cost per acquire/release pair:
 * 1 barrier on x86 (the XCHG), 4 DMBs on ARMv7 (2 + 1 acquiring, 1
 * releasing).
 */
#include "clh.h"

void clh_init(struct clh_lock *lock, struct clh_core *cores, unsigned ncores)
{
    for (unsigned i = 0; i < CLH_CORES_STORAGE(ncores); i++) {
        /* Relaxed: nothing is shared yet; whoever starts the other cores
         * publishes these stores.  Every core's first node is marked (the
         * ARMv7 acquire enqueues a node marked in advance, armv7/clh_armv7.h;
         * the C acquire marks it itself), the dummy is free. */
        __atomic_store_n(&cores[i].node.locked, i < ncores, __ATOMIC_RELAXED);
        cores[i].mine = &cores[i].node;
        cores[i].held = NULL;
#if defined(__arm__)
        cores[i].tail = &lock->tail;
#endif
    }
    lock->cores = cores;
    /* Relaxed: as above. */
    __atomic_store_n(&lock->tail, &cores[ncores].node, __ATOMIC_RELAXED);
}
