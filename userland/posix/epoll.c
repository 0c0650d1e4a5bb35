/*
 * epoll and poll over the fds of fd.c.  A set is a list of (fd, events,
 * data); a wait asks each fd for its readiness (fd_ready()) after running
 * the network, and sleeps until the driver wakes the process when nothing
 * is ready.  Every event is level-triggered: EPOLLET and EPOLLONESHOT are
 * accepted and ignored (Redis asks for neither).
 *
 * A wait reports the ready fds in the order they became ready, as Linux's
 * ready list does, not in the order they were added: Redis serves its
 * clients in the order epoll gives them, and a client whose command came
 * first must be served first.  Linux links an fd at the list's tail when a
 * wakeup finds it unlinked (or when it is added or modified while ready),
 * unlinks it when a wait finds it no longer ready, and links a reported
 * level-triggered fd at the tail again.  Here an entry's place is a stamp
 * of the process's wakeup count (px_wakeup()): the stamp of the wakeup
 * that made it ready, which the fd's object keeps (fd_woken()), or a fresh
 * one where readiness changed without a wakeup the object records (room to
 * write, which lwIP's sent callback would tell and the sockets do not ask
 * for).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include "personality.h"

struct epoll_entry {
    int fd;
    uint32_t events;
    uint64_t data;
    uint32_t ready;             /* the events it had when last looked at */
    uint64_t queued;            /* its place in the ready list (a wakeup stamp); 0: not in it */
    uint64_t idle_since;        /* the wakeup count when it was last found not ready */
};

struct epoll_set {
    struct epoll_set *next;     /* every set, so that a closed fd leaves them all */
    unsigned len, cap;
    struct epoll_entry *entries;
    struct epoll_entry **ready; /* cap places, for sorting the ready entries of a wait */
};

static struct epoll_set *sets;

/* Stamps count from 1: 0 is "no wakeup" (fd_woken) and "not in the ready list". */
static uint64_t wakeups;

uint64_t px_wakeup(void)
{
    return __atomic_add_fetch(&wakeups, 1, __ATOMIC_RELAXED);
}

static uint64_t wakeups_so_far(void)
{
    return __atomic_load_n(&wakeups, __ATOMIC_RELAXED);
}

/* Looks at e's fd: puts e into the ready list or takes it out (see the top). */
static void entry_update(struct epoll_entry *e)
{
    struct fd *f = fd_get(e->fd);
    e->ready = f ? fd_ready(f) & (e->events | EPOLLERR | EPOLLHUP) : 0;
    if (!e->ready) {
        e->queued = 0;
        e->idle_since = wakeups_so_far();
    } else if (!e->queued) {
        uint64_t woken = fd_woken(f);
        e->queued = woken > e->idle_since ? woken : px_wakeup();
    }
}

long px_epoll_create(int flags)
{
    if (flags & ~EPOLL_CLOEXEC)
        return -EINVAL;
    struct epoll_set *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    int fd = fd_install(FD_EPOLL, flags & EPOLL_CLOEXEC ? O_CLOEXEC : 0, s);
    if (fd < 0) {
        free(s);
        return fd;
    }
    s->next = sets;
    sets = s;
    return fd;
}

static struct epoll_entry *entry_of(struct epoll_set *s, int fd)
{
    for (unsigned i = 0; i < s->len; i++)
        if (s->entries[i].fd == fd)
            return &s->entries[i];
    return NULL;
}

static void entry_remove(struct epoll_set *s, struct epoll_entry *e)
{
    *e = s->entries[--s->len];
}

long px_epoll_ctl(int epfd, int op, int fd, void *event)
{
    struct fd *ef = fd_get(epfd);
    if (!ef)
        return -EBADF;
    if (ef->kind != FD_EPOLL || epfd == fd)
        return -EINVAL;
    struct fd *f = fd_get(fd);
    if (!f)
        return -EBADF;
    if (f->kind == FD_EPOLL)
        return -EINVAL;         /* no nested sets */
    struct epoll_set *s = ef->object;
    struct epoll_entry *e = entry_of(s, fd);
    struct epoll_event ev;
    if (op != EPOLL_CTL_DEL) {
        if (!event)
            return -EFAULT;
        memcpy(&ev, event, sizeof ev);
    }
    switch (op) {
    case EPOLL_CTL_ADD:
        if (e)
            return -EEXIST;
        if (s->len == s->cap) {
            unsigned cap = s->cap ? 2 * s->cap : 16;
            struct epoll_entry **ready = realloc(s->ready, cap * sizeof *ready);
            if (!ready)
                return -ENOMEM;
            s->ready = ready;
            struct epoll_entry *grown = realloc(s->entries, cap * sizeof *grown);
            if (!grown)
                return -ENOMEM;
            s->entries = grown;
            s->cap = cap;
        }
        /* Ready now, it goes to the list's tail now, whenever its object was woken. */
        e = &s->entries[s->len++];
        *e = (struct epoll_entry){ fd, ev.events, ev.data.u64, 0, 0, wakeups_so_far() };
        entry_update(e);
        return 0;
    case EPOLL_CTL_MOD:
        if (!e)
            return -ENOENT;
        e->events = ev.events;
        e->data = ev.data.u64;
        entry_update(e);
        return 0;
    case EPOLL_CTL_DEL:
        if (!e)
            return -ENOENT;
        entry_remove(s, e);
        return 0;
    default:
        return -EINVAL;
    }
}

struct epoll_wait {
    struct epoll_set *set;
    struct epoll_event *out;
    int max;
    int found;
};

/* Earlier place first; two entries of one wakeup (a pipe's two ends) in the set's order. */
static int earlier_in_list(const void *a, const void *b)
{
    const struct epoll_entry *x = *(struct epoll_entry *const *)a, *y = *(struct epoll_entry *const *)b;
    if (x->queued != y->queued)
        return x->queued < y->queued ? -1 : 1;
    return x < y ? -1 : x > y;
}

static bool collect_ready(void *ctx)
{
    struct epoll_wait *w = ctx;
    struct epoll_set *s = w->set;
    unsigned nready = 0;
    for (unsigned i = 0; i < s->len; i++) {
        struct epoll_entry *e = &s->entries[i];
        entry_update(e);
        if (e->queued)
            s->ready[nready++] = e;
    }
    qsort(s->ready, nready, sizeof *s->ready, earlier_in_list);
    w->found = 0;
    for (unsigned i = 0; i < nready && w->found < w->max; i++) {
        struct epoll_entry *e = s->ready[i];
        struct epoll_event ev = { .events = e->ready, .data.u64 = e->data };
        memcpy(&w->out[w->found++], &ev, sizeof ev);
        e->queued = px_wakeup();      /* level-triggered: back to the tail */
    }
    return w->found > 0;
}

static uint64_t deadline_after(int timeout_ms)
{
    return timeout_ms < 0 ? UINT64_MAX : px_now_ns() + (uint64_t)timeout_ms * 1000000;
}

long px_epoll_wait(int epfd, void *events, int max, int timeout_ms)
{
    struct fd *ef = fd_get(epfd);
    if (!ef)
        return -EBADF;
    if (ef->kind != FD_EPOLL || max <= 0)
        return -EINVAL;
    struct epoll_wait w = { ef->object, events, max, 0 };
    px_block_until(collect_ready, &w, timeout_ms ? deadline_after(timeout_ms) : 0);
    return w.found;
}

void epoll_close(void *set)
{
    struct epoll_set **p = &sets;
    while (*p != set)
        p = &(*p)->next;
    *p = ((struct epoll_set *)set)->next;
    free(((struct epoll_set *)set)->entries);
    free(((struct epoll_set *)set)->ready);
    free(set);
}

void epoll_forget(int fd)
{
    for (struct epoll_set *s = sets; s; s = s->next) {
        struct epoll_entry *e = entry_of(s, fd);
        if (e)
            entry_remove(s, e);
    }
}

_Static_assert(POLLIN == EPOLLIN && POLLOUT == EPOLLOUT && POLLERR == EPOLLERR &&
               POLLHUP == EPOLLHUP, "poll's bits are epoll's");

struct poll_wait {
    struct pollfd *fds;
    unsigned long n;
    int found;
};

static bool poll_ready(void *ctx)
{
    struct poll_wait *w = ctx;
    w->found = 0;
    for (unsigned long i = 0; i < w->n; i++) {
        struct pollfd *p = &w->fds[i];
        p->revents = 0;
        if (p->fd < 0)
            continue;
        struct fd *f = fd_get(p->fd);
        p->revents = f ? (short)(fd_ready(f) & ((unsigned)p->events | POLLERR | POLLHUP)) : POLLNVAL;
        if (p->revents)
            w->found++;
    }
    return w->found > 0;
}

long px_poll(void *fds, unsigned long n, int timeout_ms)
{
    if (n > POSIX_MAX_FDS)
        return -EINVAL;
    struct poll_wait w = { fds, n, 0 };
    px_block_until(poll_ready, &w, timeout_ms ? deadline_after(timeout_ms) : 0);
    return w.found;
}
