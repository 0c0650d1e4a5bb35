/*
 * Pipes inside the process: a ring of PIPE_SIZE bytes between a read end
 * and a write end.  Redis makes one to wake its own event loop (modules'
 * blocked clients); a pipe between two threads works too, since a blocked
 * end waits through px_block_until().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include "personality.h"

#define PIPE_SIZE 65536

struct pipe {
    unsigned head, len;
    bool reader_open, writer_open;
    uint64_t woken;             /* px_wakeup() of the last read, write or close (under px_lock) */
    unsigned char data[PIPE_SIZE];
};

long px_pipe2(int *fds, int flags)
{
    if (flags & ~(O_NONBLOCK | O_CLOEXEC))
        return -EINVAL;
    struct pipe *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->reader_open = p->writer_open = true;
    int r = fd_install(FD_PIPE_READ, flags, p);
    if (r < 0) {
        free(p);
        return r;
    }
    int w = fd_install(FD_PIPE_WRITE, flags, p);
    if (w < 0) {
        px_close(r);
        return w;
    }
    fds[0] = r;
    fds[1] = w;
    return 0;
}

static bool can_read(void *ctx)
{
    struct pipe *p = ctx;
    return __atomic_load_n(&p->len, __ATOMIC_ACQUIRE) || !p->writer_open;
}

static bool can_write(void *ctx)
{
    struct pipe *p = ctx;
    return __atomic_load_n(&p->len, __ATOMIC_ACQUIRE) < PIPE_SIZE || !p->reader_open;
}

long pipe_read(void *pipe, void *buf, size_t len, bool nonblock)
{
    struct pipe *p = pipe;
    if (!can_read(p)) {
        if (nonblock)
            return -EAGAIN;
        px_block_until(can_read, p, UINT64_MAX);
    }
    px_lock();
    size_t n = len < p->len ? len : p->len;
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)buf)[i] = p->data[(p->head + i) % PIPE_SIZE];
    p->head = (unsigned)((p->head + n) % PIPE_SIZE);
    p->len -= (unsigned)n;
    __atomic_store_n(&p->woken, px_wakeup(), __ATOMIC_RELAXED);
    px_unlock();
    return (long)n;
}

long pipe_write(void *pipe, const void *buf, size_t len, bool nonblock)
{
    struct pipe *p = pipe;
    if (!p->reader_open)
        return -EPIPE;
    if (!can_write(p)) {
        if (nonblock)
            return -EAGAIN;
        px_block_until(can_write, p, UINT64_MAX);
        if (!p->reader_open)
            return -EPIPE;
    }
    px_lock();
    size_t n = len < PIPE_SIZE - p->len ? len : PIPE_SIZE - p->len;
    for (size_t i = 0; i < n; i++)
        p->data[(p->head + p->len + i) % PIPE_SIZE] = ((const unsigned char *)buf)[i];
    p->len += (unsigned)n;
    __atomic_store_n(&p->woken, px_wakeup(), __ATOMIC_RELAXED);
    px_unlock();
    return (long)n;
}

void pipe_close(void *pipe, bool write_end)
{
    struct pipe *p = pipe;
    px_lock();
    if (write_end)
        p->writer_open = false;
    else
        p->reader_open = false;
    bool last = !p->reader_open && !p->writer_open;
    __atomic_store_n(&p->woken, px_wakeup(), __ATOMIC_RELAXED);
    px_unlock();
    if (last)
        free(p);
}

unsigned pipe_ready(void *pipe, bool write_end)
{
    struct pipe *p = pipe;
    if (write_end)
        return (can_write(p) ? EPOLLOUT : 0) | (p->reader_open ? 0 : EPOLLERR);
    return (can_read(p) ? EPOLLIN : 0) | (p->writer_open ? 0 : EPOLLHUP);
}

/* Read without px_lock by epoll on the main thread: one atomic load, whole on 32-bit ARM too. */
uint64_t pipe_woken(void *pipe)
{
    return __atomic_load_n(&((struct pipe *)pipe)->woken, __ATOMIC_RELAXED);
}
