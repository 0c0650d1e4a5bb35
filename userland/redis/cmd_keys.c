/*
 * Keyspace commands: DEL, EXISTS, TTL, PTTL, DBSIZE, FLUSHALL.
 */
#include "server.h"

void cmd_del(struct redis_conn *c)
{
    int64_t deleted = 0;
    for (size_t i = 1; i < c->argc; i++) {
        struct dict_entry *e = db_lookup_entry(c->db, c->argv[i].data, c->argv[i].len);
        if (e) {
            db_delete(c->db, e);
            deleted++;
        }
    }
    reply_integer(&c->reply, deleted);
}

void cmd_exists(struct redis_conn *c)
{
    int64_t found = 0;
    for (size_t i = 1; i < c->argc; i++)
        found += db_lookup(c->db, c->argv[i].data, c->argv[i].len) != NULL;
    reply_integer(&c->reply, found);
}

/* ttlGenericCommand(): -2 absent, -1 no expiry, else the time left (rounded in seconds). */
static void ttl(struct redis_conn *c, bool ms)
{
    struct value *v = db_lookup(c->db, c->argv[1].data, c->argv[1].len);
    if (!v) {
        reply_integer(&c->reply, -2);
        return;
    }
    if (v->expire_ms == NO_EXPIRY) {
        reply_integer(&c->reply, -1);
        return;
    }
    int64_t left = v->expire_ms - db_now(c->db);
    if (left < 0)
        left = 0;
    reply_integer(&c->reply, ms ? left : (left + 500) / 1000);
}

void cmd_ttl(struct redis_conn *c)
{
    ttl(c, false);
}

void cmd_pttl(struct redis_conn *c)
{
    ttl(c, true);
}

void cmd_dbsize(struct redis_conn *c)
{
    reply_integer(&c->reply, (int64_t)c->db->keys.count);
}

void cmd_flushall(struct redis_conn *c)
{
    if (c->argc > 2 || (c->argc == 2 && !arg_is(c, 1, "sync") && !arg_is(c, 1, "async"))) {
        reply_error(&c->reply, ERR_SYNTAX);
        return;
    }
    db_flush(c->db);
    reply_status(&c->reply, "OK");
}
