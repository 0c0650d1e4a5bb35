/*
 * File descriptors.  There is no file system: an fd is the console (0, 1
 * and 2 from the start), /dev/urandom, a socket, a pipe end or an epoll
 * set.  read, write and close go to the kind's own code.  Paths other than
 * /dev/urandom and /dev/null do not exist (ENOENT), which Redis takes as
 * "no such file" for /proc and its configuration checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "personality.h"

static struct fd fds[POSIX_MAX_FDS] = {
    [0] = { .kind = FD_CONSOLE }, [1] = { .kind = FD_CONSOLE }, [2] = { .kind = FD_CONSOLE },
};

struct fd *fd_get(int fd)
{
    if (fd < 0 || fd >= POSIX_MAX_FDS || fds[fd].kind == FD_FREE)
        return NULL;
    return &fds[fd];
}

int fd_install(enum fd_kind kind, int flags, void *object)
{
    for (int i = 0; i < POSIX_MAX_FDS; i++) {
        if (fds[i].kind == FD_FREE) {
            fds[i] = (struct fd){ kind, flags, object };
            return i;
        }
    }
    return -EMFILE;
}

unsigned fd_ready(struct fd *f)
{
    switch (f->kind) {
    case FD_SOCKET:     return socket_ready(f->object);
    case FD_PIPE_READ:  return pipe_ready(f->object, false);
    case FD_PIPE_WRITE: return pipe_ready(f->object, true);
    case FD_CONSOLE:    return 0x004;     /* EPOLLOUT: the console always takes bytes */
    case FD_URANDOM:    return 0x001 | 0x004;
    default:            return 0;
    }
}

uint64_t fd_woken(struct fd *f)
{
    switch (f->kind) {
    case FD_SOCKET:     return socket_woken(f->object);
    case FD_PIPE_READ:
    case FD_PIPE_WRITE: return pipe_woken(f->object);
    default:            return 0;     /* the console and /dev/urandom never change */
    }
}

long px_read(int fd, void *buf, size_t len)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    bool nonblock = f->flags & O_NONBLOCK;
    switch (f->kind) {
    case FD_SOCKET:     return socket_read(f->object, buf, len, nonblock);
    case FD_PIPE_READ:  return pipe_read(f->object, buf, len, nonblock);
    case FD_URANDOM:    px_random_fill(buf, len); return (long)len;
    case FD_CONSOLE:    return 0;       /* no input: end of file */
    default:            return -EINVAL;
    }
}

long px_write(int fd, const void *buf, size_t len)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    bool nonblock = f->flags & O_NONBLOCK;
    switch (f->kind) {
    case FD_SOCKET:     return socket_write(f->object, buf, len, nonblock);
    case FD_PIPE_WRITE: return pipe_write(f->object, buf, len, nonblock);
    case FD_CONSOLE:    px_console_write(buf, len); return (long)len;
    case FD_URANDOM:    return (long)len;
    default:            return -EINVAL;
    }
}

/* One iovec at a time; a short transfer ends the call, as a non-blocking socket's would. */
static long transfer_vector(int fd, const struct iovec *iov, int n, bool writing)
{
    if (n < 0 || n > IOV_MAX)
        return -EINVAL;
    long total = 0;
    for (int i = 0; i < n; i++) {
        if (!iov[i].iov_len)
            continue;
        long r = writing ? px_write(fd, iov[i].iov_base, iov[i].iov_len)
                         : px_read(fd, iov[i].iov_base, iov[i].iov_len);
        if (r < 0)
            return total ? total : r;
        total += r;
        if ((size_t)r < iov[i].iov_len)
            break;
    }
    return total;
}

long px_readv(int fd, const struct iovec *iov, int n)
{
    return transfer_vector(fd, iov, n, false);
}

long px_writev(int fd, const struct iovec *iov, int n)
{
    return transfer_vector(fd, iov, n, true);
}

long px_close(int fd)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    struct fd closing = *f;
    f->kind = FD_FREE;
    epoll_forget(fd);
    switch (closing.kind) {
    case FD_SOCKET:     socket_close(closing.object); break;
    case FD_PIPE_READ:  pipe_close(closing.object, false); break;
    case FD_PIPE_WRITE: pipe_close(closing.object, true); break;
    case FD_EPOLL:      epoll_close(closing.object); break;
    default:            break;
    }
    return 0;
}

long px_fcntl(int fd, int cmd, long arg)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    switch (cmd) {
    case F_GETFL:
        return (f->flags & O_NONBLOCK) | O_RDWR;
    case F_SETFL:
        f->flags = (f->flags & ~O_NONBLOCK) | (int)(arg & O_NONBLOCK);
        return 0;
    case F_GETFD:
        return f->flags & O_CLOEXEC ? FD_CLOEXEC : 0;
    case F_SETFD:
        f->flags = (f->flags & ~O_CLOEXEC) | (arg & FD_CLOEXEC ? O_CLOEXEC : 0);
        return 0;
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        return -EINVAL;     /* no fd can be shared by two numbers */
    default:
        return -EINVAL;
    }
}

long px_ioctl(int fd, unsigned long req, long arg)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    if (req == FIONBIO) {
        int on = *(const int *)arg;
        f->flags = on ? f->flags | O_NONBLOCK : f->flags & ~O_NONBLOCK;
        return 0;
    }
    return -ENOTTY;     /* not a terminal: isatty() says no */
}

long px_fstat(int fd, struct stat *st)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    memset(st, 0, sizeof *st);
    switch (f->kind) {
    case FD_SOCKET:     st->st_mode = S_IFSOCK | 0777; break;
    case FD_PIPE_READ:
    case FD_PIPE_WRITE: st->st_mode = S_IFIFO | 0600; break;
    case FD_CONSOLE:
    case FD_URANDOM:    st->st_mode = S_IFCHR | 0666; break;
    default:            st->st_mode = 0600; break;
    }
    st->st_blksize = 4096;
    return 0;
}

long px_openat(int dirfd, const char *path, int flags)
{
    (void)dirfd;
    if (!strcmp(path, "/dev/urandom") || !strcmp(path, "/dev/random"))
        return fd_install(FD_URANDOM, flags & (O_NONBLOCK | O_CLOEXEC), NULL);
    return -ENOENT;
}

long px_dup(int fd, int newfd, int flags)
{
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    if (f->kind != FD_CONSOLE && f->kind != FD_URANDOM)
        return -EINVAL;
    if (newfd < 0)
        return fd_install(f->kind, flags & O_CLOEXEC, NULL);
    if (newfd >= POSIX_MAX_FDS)
        return -EBADF;
    if (newfd != fd) {
        if (fds[newfd].kind != FD_FREE)
            px_close(newfd);
        fds[newfd] = (struct fd){ f->kind, flags & O_CLOEXEC, NULL };
    }
    return newfd;
}
