/*
 * The host-side stand-in for the kernel's lock environment (lock/lock.h):
 * threads play cores.  Shared by every host test program.
 */
#ifndef TESTS_HOST_ENV_H
#define TESTS_HOST_ENV_H

#include <stdbool.h>
#include <stdint.h>

/* Exit status of a program whose lock_panic() was called. */
#define HOST_PANIC_EXIT 3

/* Exit status meaning "cannot run here" (RTM missing), as automake uses it. */
#define HOST_SKIP_EXIT 77

/* Make the calling thread core `core` for lock_env_core_id(). */
void host_set_core(unsigned core);

/*
 * Pin the calling thread to the (core mod n)-th CPU this process may use,
 * so that "cores" really run in parallel: left alone, the host scheduler
 * often starts two new threads on one CPU, where a broken lock would
 * almost never be caught.
 */
void host_pin_core(unsigned core);

/* kernel_lock_wait_hook() calls made by the calling thread so far. */
uint64_t host_wait_calls(void);

/*
 * Whether RTM transactions really commit on this machine: CPUID leaf 7 EBX
 * bit 11, then XBEGIN/XEND in a forked child (it may die of SIGILL or
 * SIGSEGV where RTM is disabled or virtualised away).  On false, *why says
 * which check failed.  HOST_RTM=0 in the environment forces false.
 */
bool host_rtm_usable(const char **why);

#endif
