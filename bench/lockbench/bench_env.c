/*
 * lockbench's lock environment (bench_env.h, lock/lockenv.h).
 */
#include "bench_env.h"
#include "lock.h"
#include "rtm_insn.h"

#include <cpuid.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Thread_local unsigned this_core;
static _Thread_local void *this_core_data;

void bench_set_core(unsigned core)
{
    this_core = core;
    this_core_data = lock_core_data(core);
}

unsigned lock_env_core_id(void)
{
    return this_core;
}

void *lock_env_core_data(void)
{
    return this_core_data;
}

uint64_t lock_env_cycles(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/*
 * The kernel's hook serves cross-core requests, and with none pending it is
 * a load and a branch; a system call here (sched_yield) would add microseconds
 * to every hand-over and measure the host's scheduler instead of the lock.
 */
void kernel_lock_wait_hook(void)
{
    __asm__ volatile("" ::: "memory");
}

_Noreturn void lock_panic(const char *msg)
{
    fprintf(stderr, "lock_panic: %s\n", msg);
    fflush(stderr);
    _exit(3);
}

unsigned bench_cpus_allowed(void)
{
    cpu_set_t allowed;

    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        return 1;
    }
    return (unsigned)CPU_COUNT(&allowed);
}

bool bench_pin(unsigned core)
{
    cpu_set_t allowed, one;
    unsigned seen = 0;

    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        return false;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed) && seen++ == core) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            return sched_setaffinity(0, sizeof(one), &one) == 0;
        }
    }
    return false;
}

static sigjmp_buf probe_escape;

static void probe_fault(int sig)
{
    siglongjmp(probe_escape, sig);
}

/* Empty transactions that commit out of 100, or -1 if XBEGIN faulted. */
static int probe_transactions(void)
{
    struct sigaction catch = {.sa_handler = probe_fault}, old_ill, old_segv;
    volatile int committed = 0;
    int fault;

    sigemptyset(&catch.sa_mask);
    sigaction(SIGILL, &catch, &old_ill);
    sigaction(SIGSEGV, &catch, &old_segv);
    fault = sigsetjmp(probe_escape, 1);
    if (fault == 0) {
        committed = rtm_empty_commits(100);
    }
    sigaction(SIGILL, &old_ill, NULL);
    sigaction(SIGSEGV, &old_segv, NULL);
    return fault == 0 ? committed : -1;
}

bool bench_rtm_usable(const char **why)
{
    const char *force = getenv("LOCKBENCH_RTM");
    const char *reason = NULL;
    unsigned a, b, c, d;

    if (force != NULL && strcmp(force, "0") == 0) {
        reason = "RTM disabled by LOCKBENCH_RTM=0";
    } else if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 11))) {
        reason = "CPUID leaf 7 EBX bit 11 (RTM) is clear: this CPU has no TSX";
    } else {
        int committed = probe_transactions();

        if (committed < 0) {
            reason = "XBEGIN faulted (RTM advertised but not usable, e.g. under a hypervisor)";
        } else if (committed == 0) {
            reason = "100 empty transactions all aborted (TSX disabled by microcode?)";
        }
    }
    if (why != NULL) {
        *why = reason;
    }
    return reason == NULL;
}

bool lock_rtm_probe(void)
{
    return bench_rtm_usable(NULL);
}
