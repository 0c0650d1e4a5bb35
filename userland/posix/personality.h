/*
 * The POSIX personality (docs/posix.md): the Linux system calls of a static
 * program built on musl, implemented on the kernel's objects.  musl's patched
 * system-call layer calls __posix_syscall(); syscall.c hands each call to the
 * part below that implements it.  Every function returns what the Linux call
 * would: a result >= 0, or -errno.
 *
 * Threads: the program's threads all run on one core (the process's, chosen
 * by the root task).  The network, the sockets, the pipes and epoll belong to the
 * main thread, which runs the program's event loop; the other threads (Redis's
 * background jobs) use memory, clocks, futexes and the console.  The parts
 * that any thread can reach (memory, futexes, the thread pool) take
 * px_lock.
 */
#ifndef POSIX_PERSONALITY_H
#define POSIX_PERSONALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <abi/types.h>
#include <abi/ipc_buffer.h>
#include <posix_start.h>

/* The start page the root task mapped (posix_start.h). */
#define posix_start_page ((const struct posix_start *)POSIX_START_VADDR)

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f);

/* ---- Threads (thread.c) */
int px_self(void);                       /* the calling thread's index in the pool */
struct ipc_buffer *px_ipcbuf(void);      /* the calling thread's IPC buffer */
long px_set_tls(unsigned long base);
long px_clone(unsigned long flags, unsigned long stack, int *parent_tid, int *child_tid,
                 unsigned long tls);
long px_futex(int *uaddr, int op, int val, uint64_t timeout_ns, int *uaddr2, int val3);  /* UINT64_MAX: none */
long px_set_tid_address(int *tidptr);
long px_gettid(void);
_Noreturn void px_thread_exit(void);
/* arch/<port>/user/posix_run_on_stack.S: call fn(arg) with the stack pointer at top, never return. */
_Noreturn void arch_posix_run_on_stack(void *top, void (*fn)(word_t arg), word_t arg);
bool px_defer_own_stack(unsigned long addr, unsigned long len);  /* munmap of the caller's stack */
void px_reap_exited(void);                  /* free what threads that ended left behind */
_Noreturn void px_exit_group(int status);

/* A lock for state every thread reaches; waiting yields, since all threads share one core. */
void px_lock(void);
void px_unlock(void);

/* ---- Kernel calls (kernel.c) */
void px_console_write(const char *s, size_t len);
_Noreturn void px_linux_exit_group(int status);  /* the end of the process, through its fault handler */
word_t px_invoke(cptr_t cap, word_t label, word_t count, const word_t *args);
void px_wait(cptr_t ntfn);               /* block until ntfn is signalled */
void px_signal(cptr_t ntfn);
void px_yield(void);

/* ---- Memory (memory.c) */
long px_brk(unsigned long addr);
long px_mmap(unsigned long addr, size_t len, int prot, int flags, int fd, off_t off);
long px_munmap(unsigned long addr, size_t len);
long px_mremap(unsigned long old, size_t old_len, size_t new_len, int flags, unsigned long new_addr);

/* ---- Pseudo-random numbers (random.c): seeded by the clock, not for keys */
uint64_t px_random64(void);
void px_random_fill(void *out, size_t len);     /* /dev/urandom and getrandom */

/* ---- Clocks (clock.c) */
uint64_t px_now_ns(void);                /* monotonic: nanoseconds since boot */
long px_clock_now(int clock, uint64_t *ns);         /* -EINVAL for a clock that does not exist */
long px_clock_resolution(int clock, uint64_t *ns);
long px_sleep(int clock, bool absolute, uint64_t ns);   /* until the clock reads ns, or for ns */

/* ---- The network (net.c): the socket transport the start page names (socket_transport.h) */
bool px_net_present(void);
void px_net_poll(void);                  /* bring the sockets up to date, send what waits */
void px_net_wait(void);                  /* block until the transport's notification is signalled */

/* ---- File descriptors (fd.c) */
enum fd_kind { FD_FREE, FD_CONSOLE, FD_URANDOM, FD_SOCKET, FD_PIPE_READ, FD_PIPE_WRITE, FD_EPOLL };

struct fd_ops;

struct fd {
    enum fd_kind kind;
    int flags;                              /* O_NONBLOCK, O_CLOEXEC as given */
    void *object;                           /* the socket, pipe or epoll set */
};

#define POSIX_MAX_FDS 1024

struct fd *fd_get(int fd);                  /* NULL when fd is not open */
int fd_install(enum fd_kind kind, int flags, void *object);     /* -EMFILE when full */
long px_read(int fd, void *buf, size_t len);
long px_write(int fd, const void *buf, size_t len);
long px_readv(int fd, const struct iovec *iov, int n);
long px_writev(int fd, const struct iovec *iov, int n);
long px_close(int fd);
long px_fcntl(int fd, int cmd, long arg);
long px_ioctl(int fd, unsigned long req, long arg);
long px_fstat(int fd, struct stat *st);
long px_openat(int dirfd, const char *path, int flags);
long px_dup(int fd, int newfd, int flags);


/* Readiness of an fd for epoll and poll: EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP bits. */
unsigned fd_ready(struct fd *f);

/*
 * Wakeups, for the order of epoll's ready list (epoll.c): an object whose
 * readiness may have changed (data or a connection came, a peer closed or
 * reset, a pipe was written, read or closed) takes a stamp of the process's
 * one wakeup count, which only grows.
 */
uint64_t px_wakeup(void);                   /* the next stamp (any thread) */
uint64_t fd_woken(struct fd *f);            /* the stamp of f's object's last wakeup; 0: none */

/* ---- Sockets (socket.c) */
long px_socket(int domain, int type, int protocol);
long px_bind(int fd, const void *addr, socklen_t len);
long px_listen(int fd, int backlog);
long px_accept4(int fd, void *addr, socklen_t *len, int flags);
long px_connect(int fd, const void *addr, socklen_t len);
long px_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
long px_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
long px_getsockname(int fd, void *addr, socklen_t *len, bool peer);
long px_shutdown(int fd, int how);
long socket_read(void *sock, void *buf, size_t len, bool nonblock);
long socket_write(void *sock, const void *buf, size_t len, bool nonblock);
void socket_close(void *sock);
unsigned socket_ready(void *sock);
uint64_t socket_woken(void *sock);

/* ---- Pipes (pipe.c) */
long px_pipe2(int *fds, int flags);
long pipe_read(void *pipe, void *buf, size_t len, bool nonblock);
long pipe_write(void *pipe, const void *buf, size_t len, bool nonblock);
void pipe_close(void *pipe, bool write_end);
unsigned pipe_ready(void *pipe, bool write_end);
uint64_t pipe_woken(void *pipe);

/* ---- epoll and poll (epoll.c) */
long px_epoll_create(int flags);
long px_epoll_ctl(int epfd, int op, int fd, void *event);
long px_epoll_wait(int epfd, void *events, int max, int timeout_ms);
long px_poll(void *fds, unsigned long n, int timeout_ms);
void epoll_close(void *set);
void epoll_forget(int fd);                  /* fd closed: drop it from every set */

/* ---- Process-wide calls (misc.c) */
struct rlimit;
struct utsname;
struct sysinfo;
struct rusage;
long px_prlimit(int resource, const struct rlimit *new_limit, struct rlimit *old);
long px_uname(struct utsname *u);
long px_sysinfo(struct sysinfo *si);
long px_sigprocmask(int how, const sigset_t *set, sigset_t *old, size_t size);
long px_sched_getaffinity(size_t size, void *mask);
long px_getrusage(int who, struct rusage *ru);
long px_getcwd(char *buf, size_t size);

/* Wait, running the network, until ready() says so or the deadline (ns; UINT64_MAX: none) passes. */
bool px_block_until(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns);

#endif
