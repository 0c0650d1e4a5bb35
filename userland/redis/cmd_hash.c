/*
 * Hash commands: HSET, HMSET, HGET, HMGET, HGETALL, HDEL, HLEN, as Redis
 * 7.0's t_hash.c.  Fields are reported in insertion order, as Redis
 * reports a small (listpack) hash.
 */
#include "server.h"

/* HSET and HMSET: every field's new value, and entries for new fields, are
 * allocated before the hash changes. */
static bool hash_set(struct redis_conn *c, const char *fullname, int64_t *added)
{
    if (c->argc % 2 == 1) {
        reply_arity_error(c, fullname);
        return false;
    }
    bool wrong;
    struct value *h = lookup_typed(c, 1, VALUE_HASH, &wrong);
    if (wrong)
        return false;
    size_t pairs = (c->argc - 2) / 2;
    struct dict_entry *key_entry = NULL;
    if (!h) {
        key_entry = key_entry_new(c, 1, VALUE_HASH);
        if (!key_entry)
            return false;
        h = key_entry->value;
    }
    void **values = prepared_new(c, pairs);
    void **entries = values ? prepared_new(c, pairs) : NULL;
    bool ok = entries != NULL;
    for (size_t k = 0; ok && k < pairs; k++) {
        const struct resp_arg *field = &c->argv[2 + 2 * k], *val = &c->argv[3 + 2 * k];
        values[k] = rstr_new(val->data, val->len);
        ok = values[k] != NULL;
        if (ok && !dict_find(&h->u.dict, field->data, field->len)) {
            entries[k] = dict_entry_new(field->data, field->len, NULL);
            ok = entries[k] != NULL;
        }
    }
    if (!ok) {
        for (size_t k = 0; values && entries && k < pairs; k++) {
            free(values[k]);
            free(entries[k]);
        }
        if (values && entries)
            reply_error(&c->reply, ERR_OOM);
        free(values);
        free(entries);
        if (key_entry) {
            value_free(key_entry->value);
            free(key_entry);
        }
        return false;
    }
    if (key_entry)
        db_add(c->db, key_entry);
    *added = 0;
    for (size_t k = 0; k < pairs; k++) {
        const struct resp_arg *field = &c->argv[2 + 2 * k];
        struct dict_entry *e = dict_find(&h->u.dict, field->data, field->len);
        if (e) {
            free(e->value);
            e->value = values[k];
            free(entries[k]);
        } else {
            ((struct dict_entry *)entries[k])->value = values[k];
            dict_insert(&h->u.dict, entries[k]);
            (*added)++;
        }
    }
    free(values);
    free(entries);
    return true;
}

void cmd_hset(struct redis_conn *c)
{
    int64_t added;
    if (hash_set(c, "hset", &added))
        reply_integer(&c->reply, added);
}

void cmd_hmset(struct redis_conn *c)
{
    int64_t added;
    if (hash_set(c, "hmset", &added))
        reply_status(&c->reply, "OK");
}

static void reply_field(struct redis_conn *c, struct value *h, const struct resp_arg *field)
{
    struct dict_entry *e = h ? dict_find(&h->u.dict, field->data, field->len) : NULL;
    if (e) {
        struct rstr *s = e->value;
        reply_bulk(&c->reply, s->data, s->len);
    } else {
        reply_nil(&c->reply);
    }
}

void cmd_hget(struct redis_conn *c)
{
    bool wrong;
    struct value *h = lookup_typed(c, 1, VALUE_HASH, &wrong);
    if (!wrong)
        reply_field(c, h, &c->argv[2]);
}

void cmd_hmget(struct redis_conn *c)
{
    bool wrong;
    struct value *h = lookup_typed(c, 1, VALUE_HASH, &wrong);
    if (wrong)
        return;
    reply_array(&c->reply, c->argc - 2);
    for (size_t i = 2; i < c->argc; i++)
        reply_field(c, h, &c->argv[i]);
}

void cmd_hgetall(struct redis_conn *c)
{
    bool wrong;
    struct value *h = lookup_typed(c, 1, VALUE_HASH, &wrong);
    if (wrong)
        return;
    if (!h) {
        reply_array(&c->reply, 0);
        return;
    }
    reply_array(&c->reply, 2 * h->u.dict.count);
    for (struct dict_entry *e = h->u.dict.first; e; e = e->after) {
        struct rstr *s = e->value;
        reply_bulk(&c->reply, e->key, e->key_len);
        reply_bulk(&c->reply, s->data, s->len);
    }
}

void cmd_hdel(struct redis_conn *c)
{
    bool wrong;
    struct value *h = lookup_typed(c, 1, VALUE_HASH, &wrong);
    if (wrong)
        return;
    int64_t deleted = 0;
    for (size_t i = 2; h && i < c->argc; i++) {
        struct dict_entry *e = dict_find(&h->u.dict, c->argv[i].data, c->argv[i].len);
        if (e) {
            dict_unlink(&h->u.dict, e);
            free(e->value);
            free(e);
            deleted++;
        }
    }
    if (h && h->u.dict.count == 0)
        db_delete_key(c->db, c->argv[1].data, c->argv[1].len);
    reply_integer(&c->reply, deleted);
}

void cmd_hlen(struct redis_conn *c)
{
    bool wrong;
    struct value *h = lookup_typed(c, 1, VALUE_HASH, &wrong);
    if (!wrong)
        reply_integer(&c->reply, h ? (int64_t)h->u.dict.count : 0);
}
