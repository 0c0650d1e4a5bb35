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

#endif
