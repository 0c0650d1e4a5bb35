/*
 * The process-wide calls with no object behind them: identity, limits,
 * signals, the host's name and size.  What they answer is what a program
 * running alone on one core of a machine without users or files should
 * see.
 *
 * Signals are never delivered: nothing raises one (there is no kill, no
 * terminal, no child), so installing a handler or changing the mask
 * succeeds and has no effect.  Timers that would raise one (setitimer, for
 * Redis's watchdog) are accepted likewise.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include "personality.h"

long px_prlimit(int resource, const struct rlimit *new_limit, struct rlimit *old)
{
    if (resource < 0 || resource >= RLIM_NLIMITS)
        return -EINVAL;
    if (old) {
        rlim_t v = RLIM_INFINITY;
        if (resource == RLIMIT_NOFILE)
            v = POSIX_MAX_FDS;
        else if (resource == RLIMIT_NPROC)
            v = POSIX_MAX_THREADS;
        old->rlim_cur = old->rlim_max = v;
    }
    if (new_limit && resource == RLIMIT_NOFILE && new_limit->rlim_cur > POSIX_MAX_FDS)
        return -EPERM;          /* the fd table is fixed */
    return 0;
}

long px_uname(struct utsname *u)
{
    memset(u, 0, sizeof *u);
    strcpy(u->sysname, "Linux");    /* the personality's ABI: programs test for it */
    strcpy(u->nodename, "guest");
    strcpy(u->release, "6.1.0-posix");
    strcpy(u->version, "posix personality");
#if defined(__x86_64__)
    strcpy(u->machine, "x86_64");
#elif defined(__arm__)
    strcpy(u->machine, "armv7l");
#endif
    return 0;
}

long px_sysinfo(struct sysinfo *si)
{
    memset(si, 0, sizeof *si);
    si->uptime = (long)(px_now_ns() / 1000000000ULL);
    si->totalram = posix_start_page->heap_size;
    si->mem_unit = 1;
    si->procs = 1;
    return 0;
}

long px_sigprocmask(int how, const sigset_t *set, sigset_t *old, size_t size)
{
    (void)set;
    if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
        return -EINVAL;
    if (old)
        memset(old, 0, size);
    return 0;
}

long px_sched_getaffinity(size_t size, void *mask)
{
    if (size < sizeof(unsigned long))
        return -EINVAL;
    memset(mask, 0, size);
    *(unsigned long *)mask = 1;   /* one CPU: the process's core */
    return sizeof(unsigned long);
}

/* The kernel keeps no per-process CPU time the personality can read: report none. */
long px_getrusage(int who, struct rusage *ru)
{
    if (who != RUSAGE_SELF && who != RUSAGE_CHILDREN && who != RUSAGE_THREAD)
        return -EINVAL;
    memset(ru, 0, sizeof *ru);
    return 0;
}

long px_getcwd(char *buf, size_t size)
{
    if (size < 2)
        return -ERANGE;
    strcpy(buf, "/");
    return 2;
}
