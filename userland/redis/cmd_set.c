/*
 * Set commands: SADD, SPOP (with a count), SCARD, SISMEMBER, as Redis 7.0's
 * t_set.c.  SPOP picks members pseudo-randomly, as Redis does.
 */
#include "server.h"

void cmd_sadd(struct redis_conn *c)
{
    bool wrong;
    struct value *s = lookup_typed(c, 1, VALUE_SET, &wrong);
    if (wrong)
        return;
    size_t n = c->argc - 2;
    struct dict_entry *key_entry = NULL;
    if (!s) {
        key_entry = key_entry_new(c, 1, VALUE_SET);
        if (!key_entry)
            return;
        s = key_entry->value;
    }
    void **entries = prepared_new(c, n);
    bool ok = entries != NULL;
    for (size_t k = 0; ok && k < n; k++) {
        if (!dict_find(&s->u.dict, c->argv[2 + k].data, c->argv[2 + k].len)) {
            entries[k] = dict_entry_new(c->argv[2 + k].data, c->argv[2 + k].len, NULL);
            ok = entries[k] != NULL;
        }
    }
    if (!ok) {
        prepared_abandon(c, entries, n, free, key_entry);
        return;
    }
    if (key_entry)
        db_add(c->db, key_entry);
    int64_t added = 0;
    for (size_t k = 0; k < n; k++) {
        if (entries[k] && !dict_find(&s->u.dict, c->argv[2 + k].data, c->argv[2 + k].len)) {
            dict_insert(&s->u.dict, entries[k]);
            added++;
        } else {
            free(entries[k]);
        }
    }
    free(entries);
    reply_integer(&c->reply, added);
}

static void pop_member(struct redis_conn *c, struct value *s)
{
    struct dict_entry *e = dict_random(&s->u.dict, &c->db->seed);
    reply_bulk(&c->reply, e->key, e->key_len);
    dict_unlink(&s->u.dict, e);
    free(e);
}

void cmd_spop(struct redis_conn *c)
{
    if (c->argc > 3) {
        reply_error(&c->reply, ERR_SYNTAX);
        return;
    }
    int64_t count = 1;
    bool has_count = c->argc == 3;
    if (has_count && !count_arg_or_reply(c, 2, &count))
        return;
    bool wrong;
    struct value *s = lookup_typed(c, 1, VALUE_SET, &wrong);
    if (wrong)
        return;
    if (!s) {
        if (has_count)
            reply_array(&c->reply, 0);
        else
            reply_nil(&c->reply);
        return;
    }
    if (has_count) {
        if ((uint64_t)count > s->u.dict.count)
            count = (int64_t)s->u.dict.count;
        reply_array(&c->reply, (size_t)count);
    }
    for (int64_t k = 0; k < count; k++)
        pop_member(c, s);
    if (s->u.dict.count == 0)
        db_delete_key(c->db, c->argv[1].data, c->argv[1].len);
}

void cmd_scard(struct redis_conn *c)
{
    bool wrong;
    struct value *s = lookup_typed(c, 1, VALUE_SET, &wrong);
    if (!wrong)
        reply_integer(&c->reply, s ? (int64_t)s->u.dict.count : 0);
}

void cmd_sismember(struct redis_conn *c)
{
    bool wrong;
    struct value *s = lookup_typed(c, 1, VALUE_SET, &wrong);
    if (!wrong)
        reply_integer(&c->reply, s && dict_find(&s->u.dict, c->argv[2].data, c->argv[2].len) ? 1 : 0);
}
