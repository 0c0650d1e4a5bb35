/*
 * What commands see: the connection (struct redis_conn of redis.h) with the
 * request's arguments and the reply writer, the command table's entries,
 * and the argument helpers every command uses.
 *
 * Commands follow the kernel's decode/invoke split: each first checks its
 * arguments, the key's type and allocates everything it will need, replying
 * with Redis's error and changing nothing if any of that fails; only then
 * does it change the keyspace, which cannot fail.
 */
#ifndef REDIS_SERVER_H
#define REDIS_SERVER_H

#include <redis.h>
#include "keyspace.h"
#include "limits.h"
#include "reply.h"
#include "resp_parser.h"

struct redis_conn {
    struct redis_db *db;
    struct resp_parser parser;
    struct reply reply;
    const struct resp_arg *argv;    /* the request being run */
    size_t argc;
    bool closing;                   /* QUIT: close after the reply */
    size_t name_len;
    char name[REDIS_MAX_CLIENT_NAME];
};

typedef void command_fn(struct redis_conn *c);

struct command {
    const char *name;               /* lower case, as Redis names it in errors */
    int arity;                      /* n: exactly n arguments; -n: at least n */
    command_fn *run;
    int first_key, last_key, step;  /* COMMAND's key positions */
    const struct command *subcommands;  /* container commands (CONFIG GET): NULL-name terminated */
};

extern const struct command redis_commands[];
extern const size_t redis_command_count;

/* Run the request in c->argv. */
void command_dispatch(struct redis_conn *c);

/* Argument helpers. */
bool arg_is(const struct redis_conn *c, size_t i, const char *name);
bool arg_i64_or_reply(struct redis_conn *c, size_t i, int64_t *v);
/* getPositiveLongFromObjectOrReply(): a count, 0 or more. */
bool count_arg_or_reply(struct redis_conn *c, size_t i, int64_t *count);
void reply_arity_error(struct redis_conn *c, const char *fullname);

/* The value at key argv[i] if it is of `type`; NULL when absent or of
 * another type, in which case *wrong says so and WRONGTYPE was replied. */
struct value *lookup_typed(struct redis_conn *c, size_t i, enum value_type type, bool *wrong);

/* A new key argv[i] holding a fresh value of type; NULL (and OOM replied)
 * when memory is exhausted.  Nothing is added to the keyspace yet. */
struct dict_entry *key_entry_new(struct redis_conn *c, size_t i, enum value_type type);

/* An array of n NULL pointers for a command's prepared allocations; NULL (OOM replied) on failure. */
void **prepared_new(struct redis_conn *c, size_t n);

/* After a failed preparation: release each prepared item, reply OOM (unless
 * prepared_new did, p being NULL), free the array and the key entry not yet
 * added to the keyspace, so that the command leaves the db as it found it. */
void prepared_abandon(struct redis_conn *c, void **p, size_t n, void (*release)(void *),
                      struct dict_entry *key_entry);

/* Clamp an inclusive [start, end] range whose negative ends count from the
 * back, as Redis's LRANGE and ZRANGE do; false when it selects nothing. */
bool range_clamp(int64_t *start, int64_t *end, int64_t len);

/* Commands, by concern. */
command_fn cmd_get, cmd_set, cmd_incr, cmd_decr, cmd_incrby, cmd_decrby, cmd_mget, cmd_mset;
command_fn cmd_del, cmd_exists, cmd_ttl, cmd_pttl, cmd_dbsize, cmd_flushall;
command_fn cmd_hset, cmd_hmset, cmd_hget, cmd_hmget, cmd_hgetall, cmd_hdel, cmd_hlen;
command_fn cmd_lpush, cmd_rpush, cmd_lpop, cmd_rpop, cmd_lrange, cmd_llen;
command_fn cmd_sadd, cmd_spop, cmd_scard, cmd_sismember;
command_fn cmd_zadd, cmd_zrem, cmd_zrangebyscore, cmd_zrange, cmd_zcard, cmd_zscore;
command_fn cmd_ping, cmd_echo, cmd_select, cmd_info, cmd_command, cmd_command_count,
    cmd_command_docs, cmd_config_get, cmd_client_setname, cmd_client_getname;
command_fn cmd_debug_kstats, cmd_debug_check;

#endif
