/*
 * __posix_syscall: musl's system-call layer ends here (docs/posix.md).  Each
 * Linux call the personality supports goes to the part that implements it;
 * any other gets ENOSYS, and the first time a number is seen the console
 * says so, so that a program's missing call is easy to find.
 *
 * The numbers are the target's (musl's <sys/syscall.h>): x86_64 and 32-bit
 * ARM differ in numbers and in some calls (mmap2, the 64-bit time calls,
 * set_tls on ARM; arch_prctl on x86_64).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include "personality.h"

#define ARCH_SET_FS 0x1002
#define ARM_SET_TLS 0xf0005

static void say_unsupported(long n)
{
    static unsigned long said[16];
    unsigned long bit = (unsigned long)n % (16 * 8 * sizeof(unsigned long));
    unsigned long *w = &said[bit / (8 * sizeof(unsigned long))];
    unsigned long m = 1UL << (bit % (8 * sizeof(unsigned long)));
    if (*w & m)
        return;
    *w |= m;
    char text[64];
    int len = snprintf(text, sizeof text, "posix: system call %ld: ENOSYS\n", n);
    if (len > 0)
        px_console_write(text, (size_t)len);
}

#define P(x) ((void *)(x))

/*
 * Times as the Linux calls pass them: two 64-bit words in the 64-bit calls
 * (x86_64's, and ARM's *_time64), two 32-bit words in ARM's older ones,
 * which musl still makes when the seconds fit.
 */
struct time64 { int64_t sec, nsec; };
struct time32 { int32_t sec, nsec; };

static uint64_t ns_from(const void *p, bool wide)
{
    if (!p)
        return UINT64_MAX;
    int64_t sec = wide ? ((const struct time64 *)p)->sec : ((const struct time32 *)p)->sec;
    int64_t nsec = wide ? ((const struct time64 *)p)->nsec : ((const struct time32 *)p)->nsec;
    if (sec < 0 || nsec < 0 || nsec >= 1000000000)
        return UINT64_MAX - 1;      /* invalid: the callers say EINVAL */
    return (uint64_t)sec * 1000000000ULL + (uint64_t)nsec;
}

static void ns_to(void *p, uint64_t ns, bool wide)
{
    if (wide)
        *(struct time64 *)p = (struct time64){ (int64_t)(ns / 1000000000ULL), (int64_t)(ns % 1000000000ULL) };
    else
        *(struct time32 *)p = (struct time32){ (int32_t)(ns / 1000000000ULL), (int32_t)(ns % 1000000000ULL) };
}

static long clock_get(int clock, void *ts, bool wide, bool resolution)
{
    uint64_t ns;
    long err = resolution ? px_clock_resolution(clock, &ns) : px_clock_now(clock, &ns);
    if (!err && ts)
        ns_to(ts, ns, wide);
    return err;
}

static long clock_sleep(int clock, int flags, const void *req, void *rem, bool wide)
{
    uint64_t ns = ns_from(req, wide);
    if (ns >= UINT64_MAX - 1)
        return -EINVAL;
    long err = px_sleep(clock, flags & TIMER_ABSTIME, ns);
    if (!err && rem && !(flags & TIMER_ABSTIME))
        ns_to(rem, 0, wide);
    return err;
}

/* Only FUTEX_WAIT (0) takes a time; the other operations pass a count in its place. */
static long futex(long a, long b, long c, const void *timeout, long e, long f, bool wide)
{
    uint64_t ns = (b & 0x7f) == 0 ? ns_from(timeout, wide) : UINT64_MAX;
    if (ns == UINT64_MAX - 1)
        return -EINVAL;
    return px_futex(P(a), (int)b, (int)c, ns, P(e), (int)f);
}

#if defined(__x86_64__)
static long time_of_day(void *tv)
{
    uint64_t ns;
    px_clock_now(CLOCK_REALTIME, &ns);
    if (tv)
        *(struct time64 *)tv = (struct time64){ (int64_t)(ns / 1000000000ULL), (int64_t)(ns % 1000000000ULL / 1000) };
    return 0;
}
#endif


long __posix_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    switch (n) {
    /* file descriptors */
    case SYS_read:          return px_read((int)a, P(b), (size_t)c);
    case SYS_write:         return px_write((int)a, P(b), (size_t)c);
    case SYS_readv:         return px_readv((int)a, P(b), (int)c);
    case SYS_writev:        return px_writev((int)a, P(b), (int)c);
    case SYS_close:         return px_close((int)a);
    case SYS_ioctl:         return px_ioctl((int)a, (unsigned long)b, c);
    case SYS_openat:        return px_openat((int)a, P(b), (int)c);
#ifdef SYS_open
    case SYS_open:          return px_openat(AT_FDCWD, P(a), (int)b);
#endif
#ifdef SYS_fcntl
    case SYS_fcntl:         return px_fcntl((int)a, (int)b, c);
#endif
#ifdef SYS_fcntl64
    case SYS_fcntl64:       return px_fcntl((int)a, (int)b, c);
#endif
#ifdef SYS_fstat
    case SYS_fstat:         return px_fstat((int)a, P(b));
#endif
#ifdef SYS_fstat64
    case SYS_fstat64:       return px_fstat((int)a, P(b));
#endif
    case SYS_dup:           return px_dup((int)a, -1, 0);
    case SYS_dup3:          return px_dup((int)a, (int)b, (int)c);
#ifdef SYS_dup2
    case SYS_dup2:          return px_dup((int)a, (int)b, 0);
#endif
    case SYS_pipe2:         return px_pipe2(P(a), (int)b);
#ifdef SYS_pipe
    case SYS_pipe:          return px_pipe2(P(a), 0);
#endif
    /* paths: there is no file system (fd.c) */
#ifdef SYS_stat
    case SYS_stat: case SYS_lstat:
#endif
#ifdef SYS_stat64
    case SYS_stat64: case SYS_lstat64:
#endif
#ifdef SYS_access
    case SYS_access:
#endif
#ifdef SYS_readlink
    case SYS_readlink:
#endif
    case SYS_faccessat: case SYS_readlinkat: case SYS_statx:
        return -ENOENT;
#ifdef SYS_newfstatat
    case SYS_newfstatat:
#endif
#ifdef SYS_fstatat64
    case SYS_fstatat64:
#endif
        return b && !*(const char *)P(b) && (d & AT_EMPTY_PATH) ? px_fstat((int)a, P(c)) : -ENOENT;
    case SYS_lseek:         return fd_get((int)a) ? -ESPIPE : -EBADF;
#ifdef SYS__llseek
    case SYS__llseek:       return fd_get((int)a) ? -ESPIPE : -EBADF;
#endif
    /* sockets */
    case SYS_socket:        return px_socket((int)a, (int)b, (int)c);
    case SYS_bind:          return px_bind((int)a, P(b), (socklen_t)c);
    case SYS_listen:        return px_listen((int)a, (int)b);
    case SYS_accept4:       return px_accept4((int)a, P(b), P(c), (int)d);
#ifdef SYS_accept
    case SYS_accept:        return px_accept4((int)a, P(b), P(c), 0);
#endif
    case SYS_connect:       return px_connect((int)a, P(b), (socklen_t)c);
    case SYS_setsockopt:    return px_setsockopt((int)a, (int)b, (int)c, P(d), (socklen_t)e);
    case SYS_getsockopt:    return px_getsockopt((int)a, (int)b, (int)c, P(d), P(e));
    case SYS_getsockname:   return px_getsockname((int)a, P(b), P(c), false);
    case SYS_getpeername:   return px_getsockname((int)a, P(b), P(c), true);
    case SYS_shutdown:      return px_shutdown((int)a, (int)b);
    case SYS_sendto:        return P(e) ? -EISCONN : px_write((int)a, P(b), (size_t)c);
    case SYS_recvfrom:      return px_read((int)a, P(b), (size_t)c);
    /* waiting for events */
    case SYS_epoll_create1: return px_epoll_create((int)a);
#ifdef SYS_epoll_create
    case SYS_epoll_create:  return a > 0 ? px_epoll_create(0) : -EINVAL;
#endif
    case SYS_epoll_ctl:     return px_epoll_ctl((int)a, (int)b, (int)c, P(d));
    case SYS_epoll_pwait:   return px_epoll_wait((int)a, P(b), (int)c, (int)d);
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:    return px_epoll_wait((int)a, P(b), (int)c, (int)d);
#endif
#ifdef SYS_poll
    case SYS_poll:          return px_poll(P(a), (unsigned long)b, (int)c);
#endif
    /* memory */
    case SYS_brk:           return px_brk((unsigned long)a);
#ifdef SYS_mmap
    case SYS_mmap:          return px_mmap((unsigned long)a, (size_t)b, (int)c, (int)d, (int)e, (off_t)f);
#endif
#ifdef SYS_mmap2
    case SYS_mmap2:         return px_mmap((unsigned long)a, (size_t)b, (int)c, (int)d, (int)e, (off_t)f * 4096);
#endif
    case SYS_munmap:        return px_munmap((unsigned long)a, (size_t)b);
    case SYS_mremap:        return px_mremap((unsigned long)a, (size_t)b, (size_t)c, (int)d, (unsigned long)e);
    case SYS_mprotect:      return 0;
    case SYS_madvise:       return 0;
    /* clocks */
#if defined(__x86_64__)
    case SYS_clock_gettime: return clock_get((int)a, P(b), true, false);
    case SYS_clock_getres:  return clock_get((int)a, P(b), true, true);
    case SYS_clock_nanosleep: return clock_sleep((int)a, (int)b, P(c), P(d), true);
    case SYS_nanosleep:     return clock_sleep(CLOCK_MONOTONIC, 0, P(a), P(b), true);
    case SYS_gettimeofday:  return time_of_day(P(a));
#elif defined(__arm__)
    case SYS_clock_gettime64:   return clock_get((int)a, P(b), true, false);
    case SYS_clock_getres_time64: return clock_get((int)a, P(b), true, true);
    case SYS_clock_nanosleep_time64: return clock_sleep((int)a, (int)b, P(c), P(d), true);
    case SYS_clock_gettime32:   return clock_get((int)a, P(b), false, false);
    case SYS_clock_getres_time32: return clock_get((int)a, P(b), false, true);
    case SYS_clock_nanosleep_time32: return clock_sleep((int)a, (int)b, P(c), P(d), false);
    case SYS_nanosleep:         return clock_sleep(CLOCK_MONOTONIC, 0, P(a), P(b), false);
#endif
    /* threads */
    case SYS_clone:
#if defined(__arm__)
        return px_clone((unsigned long)a, (unsigned long)b, P(c), P(e), (unsigned long)d);
#else
        return px_clone((unsigned long)a, (unsigned long)b, P(c), P(d), (unsigned long)e);
#endif
#ifdef SYS_futex_time64
    case SYS_futex_time64:  return futex(a, b, c, P(d), e, f, true);
    case SYS_futex:         return futex(a, b, c, P(d), e, f, false);
#else
    case SYS_futex:         return futex(a, b, c, P(d), e, f, true);
#endif
    case SYS_set_tid_address: return px_set_tid_address(P(a));
    case SYS_gettid:        return px_gettid();
#if defined(__x86_64__)
    case SYS_arch_prctl:    return a == ARCH_SET_FS ? px_set_tls((unsigned long)b) : -EINVAL;
#elif defined(__arm__)
    case ARM_SET_TLS:       return px_set_tls((unsigned long)a);
#endif
    case SYS_sched_yield:   px_yield(); return 0;
    case SYS_sched_getaffinity: return px_sched_getaffinity((size_t)b, P(c));
    case SYS_sched_setaffinity: return 0;
    case SYS_exit:          px_thread_exit();
    case SYS_exit_group:    px_exit_group((int)a);
    /* the process */
    case SYS_getpid:        return 1;
    case SYS_getppid:       return 0;
#ifdef SYS_getuid32
    case SYS_getuid32: case SYS_geteuid32: case SYS_getgid32: case SYS_getegid32:
#else
    case SYS_getuid: case SYS_geteuid: case SYS_getgid: case SYS_getegid:
#endif
        return 0;
    case SYS_umask:         return 022;
    case SYS_prlimit64:     return a ? -ESRCH : px_prlimit((int)b, P(c), P(d));
#ifdef SYS_getrlimit
    case SYS_getrlimit:     return px_prlimit((int)a, NULL, P(b));
#endif
#ifdef SYS_ugetrlimit
    case SYS_ugetrlimit:    return px_prlimit((int)a, NULL, P(b));
#endif
    case SYS_setrlimit:     return px_prlimit((int)a, P(b), NULL);
    case SYS_uname:         return px_uname(P(a));
    case SYS_sysinfo:       return px_sysinfo(P(a));
    case SYS_getrusage:     return px_getrusage((int)a, P(b));
    case SYS_getcwd:        return px_getcwd(P(a), (size_t)b);
    case SYS_prctl:         return 0;
    case SYS_getrandom:     px_random_fill(P(a), (size_t)b); return b;
    /* signals: never delivered (misc.c) */
    case SYS_rt_sigaction:  return a <= 0 || a > 64 ? -EINVAL : 0;
    case SYS_rt_sigprocmask: return px_sigprocmask((int)a, P(b), P(c), (size_t)d);
    case SYS_sigaltstack:   return 0;
    case SYS_setitimer:     return 0;
    default:
        say_unsupported(n);
        return -ENOSYS;
    }
}
