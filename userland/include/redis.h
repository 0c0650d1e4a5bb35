/*
 * A volatile in-memory key-value server speaking the Redis protocol (RESP2),
 * independent of any network stack (docs/redis.md).
 *
 * Threading: a db and the conns made on it are used by one thread at a time.
 * Nothing here takes a lock; each core runs its own server instance with its
 * own db, so instances never share state.
 *
 * Memory comes from malloc/calloc/free.  An allocation that fails makes the
 * command fail with Redis's OOM error before it changes anything.
 */
#ifndef REDIS_H
#define REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct redis_db;                       /* one keyspace: one per server instance (per core) */
struct redis_conn;                     /* one client connection's parser state and output */

struct redis_db *redis_db_new(void);   /* NULL when memory is exhausted */
void redis_db_free(struct redis_db *db);    /* every conn on it must be freed first */

/* The clock that expiry (SET EX/PX/EXAT/PXAT, TTL) reads: milliseconds since
 * the Unix epoch.  Without one, SET's expiry options are refused. */
void redis_db_set_clock(struct redis_db *db, uint64_t (*now_ms)(void));

/*
 * DEBUG KSTATS <tag> (a measured window's mark, docs/benchmarks.md): have the
 * kernel print its per-core accounting labelled `tag`.  The guest provides
 * it (userland/roottask/redis_kstats.c); elsewhere a default returns false
 * and the command replies with an error.
 */
bool redis_env_kstats(uint64_t tag);

/*
 * DEBUG CHECK (a long run's final check, tests/test_redis_soak.py): run the
 * kernel's invariant checker.  The guest provides it
 * (userland/roottask/redis_check.c); elsewhere the default says ABSENT and
 * the command replies with an error.
 */
enum redis_check { REDIS_CHECK_ABSENT, REDIS_CHECK_PASSED, REDIS_CHECK_FAILED };
enum redis_check redis_env_check(void);

/*
 * INFO's `# Memory` and `# Stats` sections: what the environment's allocator
 * and network stack hold, so that a long run can show its memory stays
 * bounded, and how the stack's connections came and went, so that it can say
 * why a client lost its connection.  The guest provides it
 * (userland/net/redis_memory.c); elsewhere the default returns false and
 * INFO has no such sections.
 */
struct redis_memory {
    uint64_t used;              /* heap bytes allocated and not freed */
    uint64_t carved;            /* heap bytes ever taken: in use or free for reuse */
    uint64_t size;              /* the heap's bytes */
    uint64_t tcp_pcbs;          /* the stack's TCP connections, TIME-WAIT ones left out */
    uint64_t tcp_pcbs_time_wait;
    uint64_t stack_heap_used;   /* the stack's own heap (queued output) */
    uint64_t rx_pool_empty;     /* received frames dropped: no pool pbuf free */
    uint64_t nic_rx_overruns;   /* NIC interrupts that reported frames dropped: no ring buffer free */
    uint64_t output_queued;     /* reply bytes waiting for the stack's send buffers */
    uint64_t conns_accepted;    /* connections the stack's TCP server accepted */
    uint64_t conns_refused;     /* refused at accept: no pcb or no slot */
    uint64_t conns_evicted;     /* idle ones reset to give their memory to a new one */
    uint64_t conns_reset;       /* reset by the server later (no memory, no state in time, a stuck close) */
    uint64_t conns_reset_by_peer;   /* the client reset them */
    uint64_t conns_aborted_by_lwip; /* the stack ended them: a timeout, or their pcb taken for a new one */
};
bool redis_env_memory(struct redis_memory *m);

struct redis_conn *redis_conn_new(struct redis_db *db);    /* NULL when memory is exhausted */
void redis_conn_free(struct redis_conn *c);

/* Feed received bytes.  Replies are handed to out(ctx, bytes, len) in order,
 * possibly in several pieces, all before this returns; out must copy or send
 * the bytes before it returns (a large value is handed over from where the
 * db keeps it).  Returns false when the connection must be closed (QUIT after
 * its +OK, a protocol error after its -ERR reply, a limit exceeded); the
 * caller then closes it and feeds it nothing more. */
bool redis_conn_input(struct redis_conn *c, const void *data, size_t len,
                      void (*out)(void *ctx, const void *buf, size_t len), void *ctx);

/*
 * As redis_conn_input, but after each request it asks pause(ctx) whether the
 * consumer of out can take more, and stops there when it cannot, so that a
 * client pipelining requests for large values cannot make the server queue
 * more than one reply past the consumer's bound.  Returns the bytes taken;
 * the caller keeps the rest, unacknowledged, and feeds it again later.
 * *open is redis_conn_input's result.  Replies so far are handed to out
 * before it returns, as there.
 */
size_t redis_conn_input_paced(struct redis_conn *c, const void *data, size_t len,
                              void (*out)(void *ctx, const void *buf, size_t len), void *ctx,
                              bool (*pause)(void *ctx), bool *open);

#endif
