/*
 * Connection and server commands: PING, ECHO, SELECT, CLIENT SETNAME and
 * GETNAME, CONFIG GET, COMMAND (COUNT, DOCS), INFO.  These answer what
 * redis-cli, redis-benchmark and Jedis ask when they connect.
 */
#include "number.h"
#include "server.h"

void cmd_ping(struct redis_conn *c)
{
    if (c->argc > 2)
        reply_arity_error(c, "ping");
    else if (c->argc == 2)
        reply_bulk(&c->reply, c->argv[1].data, c->argv[1].len);
    else
        reply_status(&c->reply, "PONG");
}

void cmd_echo(struct redis_conn *c)
{
    reply_bulk(&c->reply, c->argv[1].data, c->argv[1].len);
}

/* One keyspace per instance: only database 0 exists. */
void cmd_select(struct redis_conn *c)
{
    int64_t id;
    if (!arg_i64_or_reply(c, 1, &id))
        return;
    if (id < INT32_MIN || id > INT32_MAX)
        reply_error(&c->reply, "ERR value is out of range, value must between -2147483648 and 2147483647");
    else if (id != 0)
        reply_error(&c->reply, "ERR DB index is out of range");
    else
        reply_status(&c->reply, "OK");
}

void cmd_client_setname(struct redis_conn *c)
{
    const struct resp_arg *name = &c->argv[2];
    for (size_t i = 0; i < name->len; i++) {
        if (name->data[i] < '!' || name->data[i] > '~') {
            reply_error(&c->reply, "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
    }
    if (name->len > sizeof(c->name)) {
        reply_error(&c->reply, "ERR Client name is too long for this server");
        return;
    }
    memcpy(c->name, name->data, name->len);
    c->name_len = name->len;
    reply_status(&c->reply, "OK");
}

void cmd_client_getname(struct redis_conn *c)
{
    if (c->name_len)
        reply_bulk(&c->reply, c->name, c->name_len);
    else
        reply_nil(&c->reply);
}

/* The configuration a client may ask about: this server has no persistence. */
static const struct { const char *name, *value; } config[] = {
    { "save", "" },
    { "appendonly", "no" },
};

/* Redis's stringmatchlen() for '*' and '?', ignoring case as CONFIG GET does. */
static bool glob_match(const char *p, size_t plen, const char *s)
{
    if (plen == 0)
        return *s == '\0';
    if (p[0] == '*') {
        for (;; s++) {
            if (glob_match(p + 1, plen - 1, s))
                return true;
            if (*s == '\0')
                return false;
        }
    }
    if (*s == '\0')
        return false;
    char a = p[0] >= 'A' && p[0] <= 'Z' ? (char)(p[0] - 'A' + 'a') : p[0];
    char b = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
    return (p[0] == '?' || a == b) && glob_match(p + 1, plen - 1, s + 1);
}

static bool is_glob(const struct resp_arg *a)
{
    for (size_t i = 0; i < a->len; i++) {
        if (a->data[i] == '*' || a->data[i] == '?' || a->data[i] == '[')
            return true;
    }
    return false;
}

/* The argument that selects parameter k, or NULL.  A plain name is matched
 * ignoring case and, as Redis does, answered with the name as asked. */
static const struct resp_arg *config_match(struct redis_conn *c, size_t k)
{
    for (size_t i = 2; i < c->argc; i++) {
        const struct resp_arg *a = &c->argv[i];
        if (is_glob(a) ? glob_match(a->data, a->len, config[k].name)
                       : name_equals(a->data, a->len, config[k].name))
            return a;
    }
    return NULL;
}

void cmd_config_get(struct redis_conn *c)
{
    size_t n = 0;
    for (size_t k = 0; k < sizeof(config) / sizeof(config[0]); k++)
        n += config_match(c, k) != NULL;
    reply_array(&c->reply, 2 * n);
    for (size_t k = 0; k < sizeof(config) / sizeof(config[0]); k++) {
        const struct resp_arg *a = config_match(c, k);
        if (!a)
            continue;
        if (is_glob(a))
            reply_bulk_cstr(&c->reply, config[k].name);
        else
            reply_bulk(&c->reply, a->data, a->len);
        reply_bulk_cstr(&c->reply, config[k].value);
    }
}

/* COMMAND: Redis 7.0's ten fields per command; flags, ACL categories, tips,
 * key specs and subcommands are left empty. */
void cmd_command(struct redis_conn *c)
{
    reply_array(&c->reply, redis_command_count);
    for (size_t i = 0; i < redis_command_count; i++) {
        const struct command *cmd = &redis_commands[i];
        reply_array(&c->reply, 10);
        reply_bulk_cstr(&c->reply, cmd->name);
        reply_integer(&c->reply, cmd->arity);
        reply_array(&c->reply, 0);
        reply_integer(&c->reply, cmd->first_key);
        reply_integer(&c->reply, cmd->last_key);
        reply_integer(&c->reply, cmd->step);
        for (int k = 0; k < 4; k++)
            reply_array(&c->reply, 0);
    }
}

void cmd_command_count(struct redis_conn *c)
{
    reply_integer(&c->reply, (int64_t)redis_command_count);
}

/* No documentation is kept: clients (redis-cli's hints) do without. */
void cmd_command_docs(struct redis_conn *c)
{
    reply_array(&c->reply, 0);
}

static void info_line(char *buf, size_t size, size_t *len, const char *name, int64_t value)
{
    char num[NUMBER_MAX_CHARS];
    size_t nlen = strlen(name), vlen = number_format_i64(num, value);
    if (*len + nlen + vlen + 2 > size)
        return;
    memcpy(buf + *len, name, nlen);
    memcpy(buf + *len + nlen, num, vlen);
    memcpy(buf + *len + nlen + vlen, "\r\n", 2);
    *len += nlen + vlen + 2;
}

static void info_text(char *buf, size_t size, size_t *len, const char *text)
{
    size_t n = strlen(text);
    if (*len + n <= size) {
        memcpy(buf + *len, text, n);
        *len += n;
    }
}

/* The environment's memory figures (redis.h); none where it gives none (the host build). */
__attribute__((weak)) bool redis_env_memory(struct redis_memory *m)
{
    (void)m;
    return false;
}

struct info_figure {
    const char *name;       /* with its colon */
    uint64_t value;
};

static void info_figures(char *buf, size_t size, size_t *len, const struct info_figure *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        info_line(buf, size, len, f[i].name, (int64_t)f[i].value);
}

/* # Memory from the environment's figures m. */
static void info_memory(char *buf, size_t size, size_t *len, const struct redis_memory *m)
{
    const struct info_figure memory[] = {
        { "used_memory:", m->used },
        { "heap_carved:", m->carved },
        { "heap_size:", m->size },
        { "tcp_pcbs:", m->tcp_pcbs },
        { "tcp_pcbs_time_wait:", m->tcp_pcbs_time_wait },
        { "stack_heap_used:", m->stack_heap_used },
        { "rx_pool_empty:", m->rx_pool_empty },
        { "nic_rx_overruns:", m->nic_rx_overruns },
        { "tcp_output_queued:", m->output_queued },
    };
    info_text(buf, size, len, "\r\n# Memory\r\n");
    info_figures(buf, size, len, memory, sizeof(memory) / sizeof(memory[0]));
}

/* The TCP glue's connection counters, from the environment's figures m. */
static void info_connections(char *buf, size_t size, size_t *len, const struct redis_memory *m)
{
    /* Redis's names where Redis has the figure, and ours for the TCP glue's own ends. */
    const struct info_figure stats[] = {
        { "total_connections_received:", m->conns_accepted },
        { "rejected_connections:", m->conns_refused },
        { "connections_evicted:", m->conns_evicted },
        { "connections_reset_by_server:", m->conns_reset },
        { "connections_reset_by_peer:", m->conns_reset_by_peer },
        { "connections_aborted_by_stack:", m->conns_aborted_by_lwip },
    };
    info_figures(buf, size, len, stats, sizeof(stats) / sizeof(stats[0]));
}

/* # Memory where the environment has figures, then # Stats: the commands db ran, and the
 * connection counters where the environment has them. */
static void info_environment(char *buf, size_t size, size_t *len, const struct redis_db *db)
{
    struct redis_memory m;
    bool have = redis_env_memory(&m);

    if (have)
        info_memory(buf, size, len, &m);
    info_text(buf, size, len, "\r\n# Stats\r\n");
    info_line(buf, size, len, "total_commands_processed:", (int64_t)db->commands);
    if (have)
        info_connections(buf, size, len, &m);
}

/* INFO: the sections clients read, whatever section is asked for. */
void cmd_info(struct redis_conn *c)
{
    char buf[1024];
    size_t len = 0;
    info_text(buf, sizeof(buf), &len, "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n");
    info_line(buf, sizeof(buf), &len, "arch_bits:", (int64_t)(sizeof(void *) * 8));
    info_text(buf, sizeof(buf), &len, "\r\n# Clients\r\n");
    info_line(buf, sizeof(buf), &len, "connected_clients:", (int64_t)c->db->connections);
    info_environment(buf, sizeof(buf), &len, c->db);
    info_text(buf, sizeof(buf), &len, "\r\n# Persistence\r\nloading:0\r\naof_enabled:0\r\n"
              "\r\n# Keyspace\r\n");
    if (c->db->keys.count) {
        info_line(buf, sizeof(buf), &len, "db0:keys=", (int64_t)c->db->keys.count);
        len -= 2;
        info_line(buf, sizeof(buf), &len, ",expires=", (int64_t)c->db->expires);
        len -= 2;
        info_text(buf, sizeof(buf), &len, ",avg_ttl=0\r\n");
    }
    reply_bulk(&c->reply, buf, len);
}
