/*
 * The Redis-protocol server core (userland/redis) in a host process, for
 * tests/test_redis_server.py: a poll() loop on 127.0.0.1:PORT with many
 * connections, one redis_conn each, all on one redis_db (one thread, as the
 * core requires).  Usage: redis_host [--max-memory BYTES] PORT.  It prints
 * "ready PORT" once it listens and runs until SIGTERM or SIGINT.
 *
 * The core is compiled with -Dmalloc=redis_host_malloc -Dfree=redis_host_free
 * (tests/test_redis_server.py), so that --max-memory can make its allocations
 * fail once they hold that many bytes, as the guest's fixed heap does.  This
 * file's own allocations are the host libc's.
 *
 * Replies that the client does not read are buffered per connection; while
 * a connection holds more than OUTPUT_PAUSE bytes unsent its input is not
 * read, so memory stays bounded however fast a client pipelines.
 */
#define _POSIX_C_SOURCE 200809L
#undef malloc
#undef free
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <redis.h>

#define MAX_CLIENTS     4096
#define OUTPUT_PAUSE    (1024 * 1024)
#define READ_CHUNK      16384

struct client {
    int fd;
    struct redis_conn *conn;
    char *out;
    size_t out_len, out_cap, out_sent;
    bool closing;                   /* close once the output is sent */
    bool failed;                    /* out of memory for output: drop */
};

/* The core's allocator: the host's, within a budget.  A 16-byte header keeps
 * each block's size (and the 16-byte alignment). */
#define BLOCK_HEADER 16
static size_t memory_budget = SIZE_MAX, memory_used;

void *redis_host_malloc(size_t size);
void redis_host_free(void *p);

void *redis_host_malloc(size_t size)
{
    if (size > memory_budget - memory_used || memory_budget - memory_used - size < BLOCK_HEADER)
        return NULL;
    char *block = malloc(size + BLOCK_HEADER);
    if (!block)
        return NULL;
    memcpy(block, &size, sizeof(size));
    memory_used += size + BLOCK_HEADER;
    return block + BLOCK_HEADER;
}

void redis_host_free(void *p)
{
    if (!p)
        return;
    char *block = (char *)p - BLOCK_HEADER;
    size_t size;
    memcpy(&size, block, sizeof(size));
    memory_used -= size + BLOCK_HEADER;
    free(block);
}

static struct client clients[MAX_CLIENTS];
static size_t nclients;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void append_output(void *ctx, const void *buf, size_t len)
{
    struct client *cl = ctx;
    if (cl->failed)
        return;
    if (cl->out_len + len > cl->out_cap) {
        size_t cap = cl->out_cap ? cl->out_cap : 4096;
        while (cap < cl->out_len + len)
            cap *= 2;
        char *grown = realloc(cl->out, cap);
        if (!grown) {
            cl->failed = true;
            return;
        }
        cl->out = grown;
        cl->out_cap = cap;
    }
    memcpy(cl->out + cl->out_len, buf, len);
    cl->out_len += len;
}

static void drop(size_t i)
{
    close(clients[i].fd);
    redis_conn_free(clients[i].conn);
    free(clients[i].out);
    clients[i] = clients[--nclients];
}

static void set_nonblocking(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void accept_clients(int listener, struct redis_db *db)
{
    for (;;) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0)
            return;
        struct redis_conn *conn = nclients < MAX_CLIENTS ? redis_conn_new(db) : NULL;
        if (!conn) {
            close(fd);
            continue;
        }
        set_nonblocking(fd);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        clients[nclients++] = (struct client){ .fd = fd, .conn = conn };
    }
}

/* Read what is there and run it; false when the connection is to be dropped now. */
static bool serve_input(struct client *cl)
{
    char buf[READ_CHUNK];
    ssize_t n = read(cl->fd, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return false;
    if (n > 0 && !redis_conn_input(cl->conn, buf, (size_t)n, append_output, cl))
        cl->closing = true;
    return !cl->failed;
}

/* Send what is pending; false when the connection is to be dropped now. */
static bool serve_output(struct client *cl)
{
    while (cl->out_sent < cl->out_len) {
        ssize_t n = send(cl->fd, cl->out + cl->out_sent, cl->out_len - cl->out_sent, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR;
        cl->out_sent += (size_t)n;
    }
    cl->out_len = cl->out_sent = 0;
    return !cl->closing;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--max-memory") == 0) {
        memory_budget = strtoull(argv[2], NULL, 10);
        argv += 2;
        argc -= 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s [--max-memory BYTES] PORT\n", argv[0]);
        return 2;
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Room for MAX_CLIENTS connections where the soft limit on open files is lower. */
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])) };
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        listen(listener, 1024) < 0) {
        perror("listen");
        return 1;
    }
    set_nonblocking(listener);
    struct redis_db *db = redis_db_new();
    if (!db)
        return 1;
    redis_db_set_clock(db, now_ms);
    printf("ready %s\n", argv[1]);
    fflush(stdout);

    static struct pollfd fds[MAX_CLIENTS + 1];
    while (!stop) {
        fds[0] = (struct pollfd){ .fd = listener, .events = POLLIN };
        for (size_t i = 0; i < nclients; i++) {
            short events = 0;
            if (!clients[i].closing && clients[i].out_len - clients[i].out_sent < OUTPUT_PAUSE)
                events |= POLLIN;
            if (clients[i].out_len > clients[i].out_sent)
                events |= POLLOUT;
            fds[i + 1] = (struct pollfd){ .fd = clients[i].fd, .events = events };
        }
        size_t polled = nclients;
        if (poll(fds, polled + 1, 1000) < 0) {
            if (errno == EINTR)
                continue;
            perror("poll");
            break;
        }
        /* Backwards, so that drop() moving the last client into slot i skips nothing polled. */
        for (size_t i = polled; i-- > 0;) {
            struct client *cl = &clients[i];
            bool keep = true;
            if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
                keep = cl->closing || serve_input(cl);
            if (keep && (cl->out_len > cl->out_sent || cl->closing))
                keep = serve_output(cl);
            if (!keep)
                drop(i);
        }
        if (fds[0].revents & POLLIN)
            accept_clients(listener, db);
    }
    while (nclients)
        drop(nclients - 1);
    redis_db_free(db);
    close(listener);
    return 0;
}
