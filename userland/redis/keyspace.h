/*
 * The keyspace: struct redis_db, a dict from key to struct value, with
 * expiry checked lazily when a key is looked up (Redis also expires keys in
 * the background; a key past its time that nobody touches here only holds
 * memory until it is next looked up or the db is flushed).
 */
#ifndef REDIS_KEYSPACE_H
#define REDIS_KEYSPACE_H

#include "value.h"

struct redis_db {
    struct dict keys;
    size_t expires;                 /* keys with an expiry */
    size_t connections;             /* conns open on this db (INFO) */
    uint64_t commands;              /* commands run to the end (INFO total_commands_processed) */
    uint64_t (*now_ms)(void);       /* NULL: no clock, no expiry */
    uint64_t seed;                  /* SPOP's choices */
};

/* The live value of key, NULL when absent (an expired key is deleted here). */
struct value *db_lookup(struct redis_db *db, const void *key, size_t len);
struct dict_entry *db_lookup_entry(struct redis_db *db, const void *key, size_t len);

/* Add entry (from dict_entry_new, its value a struct value) for an absent key. */
void db_add(struct redis_db *db, struct dict_entry *entry);

/* Replace the value of an existing entry, freeing the old one; the expiry goes. */
void db_replace(struct redis_db *db, struct dict_entry *entry, struct value *v);

void db_delete(struct redis_db *db, struct dict_entry *entry);

/* Delete key, expired or not: a command removing the key it emptied must not
 * find it gone because its time passed in between. */
void db_delete_key(struct redis_db *db, const void *key, size_t len);
void db_set_expiry(struct redis_db *db, struct value *v, int64_t expire_ms);
void db_flush(struct redis_db *db);
int64_t db_now(struct redis_db *db);

#endif
