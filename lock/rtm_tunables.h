/*
 * Tunables of the RTM lock elision in lock/rtm.h.  Kept apart, as glibc
 * keeps its elision tunables, so experiments change one file.  Each may be
 * overridden with -D.  Read `rtm_aborts` and `rtm_fallbacks` in the
 * lockstats record (docs/locking.md) before changing them.
 */
#ifndef LOCK_RTM_TUNABLES_H
#define LOCK_RTM_TUNABLES_H

/*
 * RTM_ATTEMPTS_THRESHOLD of Figure 1 ("An Evaluation of Coarse-Grained
 * Locking for Multicore Microkernels" §3.4): transactions started per
 * kernel entry before taking the fallback lock for real.  Only aborts that
 * may succeed on retry (the CPU's retry hint, or the fallback lock having
 * been held) consume attempts; the others fall back at once.
 */
#ifndef RTM_ATTEMPTS_THRESHOLD
#define RTM_ATTEMPTS_THRESHOLD 5
#endif

/*
 * After an abort that retrying cannot fix (capacity, an instruction that
 * aborts every transaction), the core takes the lock directly for this many
 * further entries before trying a transaction again: glibc's adaptive skip
 * count, which keeps a doomed workload from paying an abort per entry.
 */
#ifndef RTM_SKIP_AFTER_DOOMED
#define RTM_SKIP_AFTER_DOOMED 3
#endif

_Static_assert(RTM_ATTEMPTS_THRESHOLD >= 1, "at least one transaction per entry");

#endif
