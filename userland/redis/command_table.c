/*
 * The command table and dispatch, following Redis 7.0's processCommand():
 * QUIT first, then the lookup (a container command such as CONFIG looks up
 * its subcommand), then the arity check, with Redis's exact error texts.
 * Arities are Redis's: n means exactly n arguments including the name, -n
 * at least n.
 */
#include "number.h"
#include "server.h"

static const struct command config_subcommands[] = {
    { "get", -3, cmd_config_get, 0, 0, 0, NULL },
    { NULL, 0, NULL, 0, 0, 0, NULL },
};

static const struct command command_subcommands[] = {
    { "count", 2, cmd_command_count, 0, 0, 0, NULL },
    { "docs", -2, cmd_command_docs, 0, 0, 0, NULL },
    { NULL, 0, NULL, 0, 0, 0, NULL },
};

static const struct command client_subcommands[] = {
    { "setname", 3, cmd_client_setname, 0, 0, 0, NULL },
    { "getname", 2, cmd_client_getname, 0, 0, 0, NULL },
    { NULL, 0, NULL, 0, 0, 0, NULL },
};

static const struct command debug_subcommands[] = {
    { "kstats", 3, cmd_debug_kstats, 0, 0, 0, NULL },
    { "check", 2, cmd_debug_check, 0, 0, 0, NULL },
    { NULL, 0, NULL, 0, 0, 0, NULL },
};

const struct command redis_commands[] = {
    { "ping", -1, cmd_ping, 0, 0, 0, NULL },
    { "echo", 2, cmd_echo, 0, 0, 0, NULL },
    { "get", 2, cmd_get, 1, 1, 1, NULL },
    { "set", -3, cmd_set, 1, 1, 1, NULL },
    { "incr", 2, cmd_incr, 1, 1, 1, NULL },
    { "decr", 2, cmd_decr, 1, 1, 1, NULL },
    { "incrby", 3, cmd_incrby, 1, 1, 1, NULL },
    { "decrby", 3, cmd_decrby, 1, 1, 1, NULL },
    { "mget", -2, cmd_mget, 1, -1, 1, NULL },
    { "mset", -3, cmd_mset, 1, -1, 2, NULL },
    { "del", -2, cmd_del, 1, -1, 1, NULL },
    { "exists", -2, cmd_exists, 1, -1, 1, NULL },
    { "ttl", 2, cmd_ttl, 1, 1, 1, NULL },
    { "pttl", 2, cmd_pttl, 1, 1, 1, NULL },
    { "hset", -4, cmd_hset, 1, 1, 1, NULL },
    { "hmset", -4, cmd_hmset, 1, 1, 1, NULL },
    { "hget", 3, cmd_hget, 1, 1, 1, NULL },
    { "hmget", -3, cmd_hmget, 1, 1, 1, NULL },
    { "hgetall", 2, cmd_hgetall, 1, 1, 1, NULL },
    { "hdel", -3, cmd_hdel, 1, 1, 1, NULL },
    { "hlen", 2, cmd_hlen, 1, 1, 1, NULL },
    { "lpush", -3, cmd_lpush, 1, 1, 1, NULL },
    { "rpush", -3, cmd_rpush, 1, 1, 1, NULL },
    { "lpop", -2, cmd_lpop, 1, 1, 1, NULL },
    { "rpop", -2, cmd_rpop, 1, 1, 1, NULL },
    { "lrange", 4, cmd_lrange, 1, 1, 1, NULL },
    { "llen", 2, cmd_llen, 1, 1, 1, NULL },
    { "sadd", -3, cmd_sadd, 1, 1, 1, NULL },
    { "spop", -2, cmd_spop, 1, 1, 1, NULL },
    { "scard", 2, cmd_scard, 1, 1, 1, NULL },
    { "sismember", 3, cmd_sismember, 1, 1, 1, NULL },
    { "zadd", -4, cmd_zadd, 1, 1, 1, NULL },
    { "zrem", -3, cmd_zrem, 1, 1, 1, NULL },
    { "zrangebyscore", -4, cmd_zrangebyscore, 1, 1, 1, NULL },
    { "zrange", -4, cmd_zrange, 1, 1, 1, NULL },
    { "zcard", 2, cmd_zcard, 1, 1, 1, NULL },
    { "zscore", 3, cmd_zscore, 1, 1, 1, NULL },
    { "flushall", -1, cmd_flushall, 0, 0, 0, NULL },
    { "dbsize", 1, cmd_dbsize, 0, 0, 0, NULL },
    { "select", 2, cmd_select, 0, 0, 0, NULL },
    { "info", -1, cmd_info, 0, 0, 0, NULL },
    { "config", -2, NULL, 0, 0, 0, config_subcommands },
    { "command", -1, cmd_command, 0, 0, 0, command_subcommands },
    { "client", -2, NULL, 0, 0, 0, client_subcommands },
    { "debug", -2, NULL, 0, 0, 0, debug_subcommands },
};

const size_t redis_command_count = sizeof(redis_commands) / sizeof(redis_commands[0]);

static const struct command *find(const struct command *table, size_t n, const struct resp_arg *name)
{
    for (size_t i = 0; i < n && table[i].name; i++) {
        if (name_equals(name->data, name->len, table[i].name))
            return &table[i];
    }
    return NULL;
}

/* "%.128s" of an argument: printf stops at a NUL byte too. */
static void add_truncated(struct error_text *e, const struct resp_arg *a, size_t max)
{
    size_t n = 0;
    while (n < a->len && n < max && a->data[n] != '\0')
        n++;
    error_text_add(e, a->data, n);
}

static void reply_unknown_command(struct redis_conn *c)
{
    struct error_text e;
    error_text_init(&e, "ERR unknown command '");
    add_truncated(&e, &c->argv[0], 128);
    error_text_cstr(&e, "', with args beginning with: ");
    size_t args_start = e.len, args = 0;
    for (size_t i = 1; i < c->argc && args < 128; i++) {
        error_text_cstr(&e, "'");
        add_truncated(&e, &c->argv[i], 128 - args);
        error_text_cstr(&e, "' ");
        args = e.len - args_start;
    }
    reply_error_text(&c->reply, &e);
}

static void reply_unknown_subcommand(struct redis_conn *c, const struct command *container)
{
    struct error_text e;
    error_text_init(&e, "ERR unknown subcommand '");
    add_truncated(&e, &c->argv[1], 128);
    error_text_cstr(&e, "'. Try ");
    for (const char *p = container->name; *p; p++) {
        char upper = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
        error_text_add(&e, &upper, 1);
    }
    error_text_cstr(&e, " HELP.");
    reply_error_text(&c->reply, &e);
}

void command_dispatch(struct redis_conn *c)
{
    if (name_equals(c->argv[0].data, c->argv[0].len, "quit")) {
        reply_status(&c->reply, "OK");
        c->closing = true;
        return;
    }
    const struct command *cmd = find(redis_commands, redis_command_count, &c->argv[0]);
    if (!cmd) {
        reply_unknown_command(c);
        return;
    }
    char fullname[64];
    size_t n = strlen(cmd->name);
    memcpy(fullname, cmd->name, n + 1);
    if (cmd->subcommands && c->argc >= 2) {
        const struct command *sub = find(cmd->subcommands, SIZE_MAX, &c->argv[1]);
        if (!sub) {
            reply_unknown_subcommand(c, cmd);
            return;
        }
        fullname[n] = '|';
        memcpy(fullname + n + 1, sub->name, strlen(sub->name) + 1);
        cmd = sub;
    }
    if ((cmd->arity > 0 && (size_t)cmd->arity != c->argc) ||
        (cmd->arity < 0 && c->argc < (size_t)-cmd->arity) || !cmd->run) {
        reply_arity_error(c, fullname);
        return;
    }
    cmd->run(c);
    /* Counted after it ran, as Redis's call() counts: an INFO does not count itself. */
    c->db->commands++;
}

bool arg_is(const struct redis_conn *c, size_t i, const char *name)
{
    return name_equals(c->argv[i].data, c->argv[i].len, name);
}

bool arg_i64_or_reply(struct redis_conn *c, size_t i, int64_t *v)
{
    if (number_parse_i64(c->argv[i].data, c->argv[i].len, v))
        return true;
    reply_error(&c->reply, ERR_NOT_INTEGER);
    return false;
}

bool count_arg_or_reply(struct redis_conn *c, size_t i, int64_t *count)
{
    if (number_parse_i64(c->argv[i].data, c->argv[i].len, count) && *count >= 0)
        return true;
    reply_error(&c->reply, "ERR value is out of range, must be positive");
    return false;
}

void reply_arity_error(struct redis_conn *c, const char *fullname)
{
    struct error_text e;
    error_text_init(&e, "ERR wrong number of arguments for '");
    error_text_cstr(&e, fullname);
    error_text_cstr(&e, "' command");
    reply_error_text(&c->reply, &e);
}

struct value *lookup_typed(struct redis_conn *c, size_t i, enum value_type type, bool *wrong)
{
    struct value *v = db_lookup(c->db, c->argv[i].data, c->argv[i].len);
    *wrong = v && v->type != type;
    if (*wrong) {
        reply_error(&c->reply, ERR_WRONGTYPE);
        return NULL;
    }
    return v;
}

struct dict_entry *key_entry_new(struct redis_conn *c, size_t i, enum value_type type)
{
    struct value *v = value_new(type, NULL);
    struct dict_entry *e = v ? dict_entry_new(c->argv[i].data, c->argv[i].len, v) : NULL;
    if (!e) {
        free(v);
        reply_error(&c->reply, ERR_OOM);
    }
    return e;
}

void prepared_abandon(struct redis_conn *c, void **p, size_t n, void (*release)(void *),
                      struct dict_entry *key_entry)
{
    for (size_t k = 0; p && k < n; k++) {
        if (p[k])
            release(p[k]);
    }
    if (p)
        reply_error(&c->reply, ERR_OOM);
    free(p);
    if (key_entry) {
        value_free(key_entry->value);
        free(key_entry);
    }
}

bool range_clamp(int64_t *start, int64_t *end, int64_t len)
{
    if (*start < 0)
        *start = len + *start;
    if (*end < 0)
        *end = len + *end;
    if (*start < 0)
        *start = 0;
    if (*start > *end || *start >= len)
        return false;
    if (*end >= len)
        *end = len - 1;
    return true;
}

void **prepared_new(struct redis_conn *c, size_t n)
{
    void **p = malloc((n ? n : 1) * sizeof(*p));
    if (!p) {
        reply_error(&c->reply, ERR_OOM);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = NULL;
    return p;
}
