/*
 * The lock environment of lockbench (lock/lockenv.h): pinned threads play
 * cores, the cycle counter is the TSC, and the wait hook does nothing, as
 * the kernel's does when no cross-core request is pending.
 */
#ifndef BENCH_LOCKBENCH_BENCH_ENV_H
#define BENCH_LOCKBENCH_BENCH_ENV_H

#include <stdbool.h>
#include <stdint.h>

/* Make the calling thread core `core` for lock_env_core_id() and lock_env_core_data(). */
void bench_set_core(unsigned core);

/* The CPUs this process may run on. */
unsigned bench_cpus_allowed(void);

/* Pin the calling thread to the core-th CPU this process may run on; false if there is none. */
bool bench_pin(unsigned core);

/*
 * Whether RTM transactions commit on this CPU: CPUID leaf 7 EBX bit 11,
 * then empty transactions under a SIGILL/SIGSEGV handler (a hypervisor may
 * advertise RTM and fault on XBEGIN).  On false, *why says which check
 * failed.  LOCKBENCH_RTM=0 in the environment forces false.
 */
bool bench_rtm_usable(const char **why);

#endif
