/*
 * Host implementation of the lock environment: lock_env_core_id(),
 * lock_env_core_data(), lock_env_cycles(), kernel_lock_wait_hook(), lock_panic() and
 * lock_rtm_probe() of lock/lock.h, with threads in place of cores.
 */
#include "env.h"
#include "lock.h"
#include "rtm_insn.h"

#include <cpuid.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static _Thread_local unsigned this_core;
static _Thread_local uint64_t wait_calls;

void host_set_core(unsigned core)
{
    this_core = core;
}

void host_pin_core(unsigned core)
{
    cpu_set_t allowed, one;
    int n;

    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || (n = CPU_COUNT(&allowed)) == 0) {
        return;
    }
    int want = (int)(core % (unsigned)n);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed) && want-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof(one), &one);
            return;
        }
    }
}

uint64_t host_wait_calls(void)
{
    return wait_calls;
}

unsigned lock_env_core_id(void)
{
    return this_core;
}

/*
 * A weak reference: lockprops and rtmprobe test the algorithms alone and
 * link no variant (lock/<variant>.c), so they have no lock_core_data().
 */
#pragma weak lock_core_data

void *lock_env_core_data(void)
{
    if (!lock_core_data)
        lock_panic("lock_env_core_data: no lock variant linked");
    return lock_core_data(this_core);
}

uint64_t lock_env_cycles(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/*
 * Threads outnumber the host's cores in the 4- and 8-thread tests, so a
 * waiter gives its CPU away: otherwise a FIFO lock handed to a preempted
 * thread stalls everyone for a whole time slice.
 */
void kernel_lock_wait_hook(void)
{
    wait_calls++;
    sched_yield();
}

_Noreturn void lock_panic(const char *msg)
{
    fprintf(stderr, "lock_panic: %s\n", msg);
    fflush(stderr);
    _exit(HOST_PANIC_EXIT);
}

/* Run 100 empty transactions; exit 0 if at least one committed. */
static _Noreturn void rtm_probe_child(void)
{
    _exit(rtm_empty_commits(100) > 0 ? 0 : 1);
}

bool host_rtm_usable(const char **why)
{
    const char *reason = NULL;
    unsigned a, b, c, d;
    const char *force = getenv("HOST_RTM");

    if (force != NULL && strcmp(force, "0") == 0) {
        reason = "RTM disabled by HOST_RTM=0";
    } else if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 11))) {
        reason = "CPUID leaf 7 EBX bit 11 (RTM) is clear";
    } else {
        int status;
        pid_t pid = fork();

        if (pid == 0) {
            rtm_probe_child();
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid) {
            reason = "could not fork the RTM probe";
        } else if (WIFSIGNALED(status)) {
            reason = WTERMSIG(status) == SIGILL ? "XBEGIN raised SIGILL (#UD)"
                                                : "XBEGIN raised a signal (#GP under a hypervisor?)";
        } else if (WEXITSTATUS(status) != 0) {
            reason = "100 empty transactions all aborted";
        }
    }
    if (why != NULL) {
        *why = reason;
    }
    return reason == NULL;
}

bool lock_rtm_probe(void)
{
    return host_rtm_usable(NULL);
}
