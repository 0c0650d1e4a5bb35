/*
 * The keyspace and the public db functions of redis.h.
 */
#include <redis.h>
#include "keyspace.h"

struct redis_db *redis_db_new(void)
{
    struct redis_db *db = malloc(sizeof(*db));
    if (!db)
        return NULL;
    memset(db, 0, sizeof(*db));
    dict_init(&db->keys);
    db->seed = 0x2545F4914F6CDD1DULL;
    return db;
}

void redis_db_free(struct redis_db *db)
{
    db_flush(db);
    free(db);
}

void redis_db_set_clock(struct redis_db *db, uint64_t (*now_ms)(void))
{
    db->now_ms = now_ms;
}

int64_t db_now(struct redis_db *db)
{
    return db->now_ms ? (int64_t)db->now_ms() : 0;
}

struct dict_entry *db_lookup_entry(struct redis_db *db, const void *key, size_t len)
{
    struct dict_entry *e = dict_find(&db->keys, key, len);
    if (!e)
        return NULL;
    struct value *v = e->value;
    if (v->expire_ms != NO_EXPIRY && db->now_ms && v->expire_ms <= db_now(db)) {
        db_delete(db, e);
        return NULL;
    }
    return e;
}

struct value *db_lookup(struct redis_db *db, const void *key, size_t len)
{
    struct dict_entry *e = db_lookup_entry(db, key, len);
    return e ? e->value : NULL;
}

void db_add(struct redis_db *db, struct dict_entry *entry)
{
    dict_insert(&db->keys, entry);
}

void db_set_expiry(struct redis_db *db, struct value *v, int64_t expire_ms)
{
    if (v->expire_ms == NO_EXPIRY && expire_ms != NO_EXPIRY)
        db->expires++;
    else if (v->expire_ms != NO_EXPIRY && expire_ms == NO_EXPIRY)
        db->expires--;
    v->expire_ms = expire_ms;
}

void db_replace(struct redis_db *db, struct dict_entry *entry, struct value *v)
{
    struct value *old = entry->value;
    db_set_expiry(db, old, NO_EXPIRY);
    value_free(old);
    entry->value = v;
}

void db_delete(struct redis_db *db, struct dict_entry *entry)
{
    struct value *v = entry->value;
    db_set_expiry(db, v, NO_EXPIRY);
    dict_unlink(&db->keys, entry);
    value_free(v);
    free(entry);
}

void db_delete_key(struct redis_db *db, const void *key, size_t len)
{
    struct dict_entry *e = dict_find(&db->keys, key, len);
    if (e)
        db_delete(db, e);
}

void db_flush(struct redis_db *db)
{
    dict_clear(&db->keys, value_free);
    db->expires = 0;
}
