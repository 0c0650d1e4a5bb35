/*
 * A hash table from byte strings to pointers, with incremental rehashing:
 * growing or shrinking moves one bucket per operation, so no single command
 * pays for moving the whole table.  Entries are also kept in insertion
 * order, which is the order Redis's small hashes and sets report.
 *
 * Adding never fails once the caller holds a new entry: the table starts
 * with a built-in set of buckets, and a bigger table that cannot be
 * allocated only leaves the chains longer.  Those buckets are inside struct
 * dict, so a dict is never copied or moved after dict_init().
 */
#ifndef REDIS_DICT_H
#define REDIS_DICT_H

#include "redis_env.h"

#define DICT_SMALL_BUCKETS 4

struct dict_entry {
    struct dict_entry *next;                /* bucket chain */
    struct dict_entry *before, *after;      /* insertion order */
    uint64_t hash;
    void *value;
    size_t key_len;
    char key[];
};

struct dict {
    struct dict_entry **table[2];   /* table[1] exists only while rehashing into it */
    size_t size[2];                 /* buckets, a power of two */
    size_t rehash_index;            /* next bucket of table[0] to move */
    size_t count;
    struct dict_entry *first, *last;
    struct dict_entry *small[DICT_SMALL_BUCKETS];
};

void dict_init(struct dict *d);

/* Free every entry (calling free_value on each value when it is not NULL) and the tables. */
void dict_clear(struct dict *d, void (*free_value)(void *value));

struct dict_entry *dict_find(struct dict *d, const void *key, size_t len);

/* A detached entry holding a copy of the key; NULL when memory is exhausted. */
struct dict_entry *dict_entry_new(const void *key, size_t len, void *value);

/* Add e, whose key is not in d.  Cannot fail. */
void dict_insert(struct dict *d, struct dict_entry *e);

/* Take e out of d; the caller owns (frees) it afterwards. */
void dict_unlink(struct dict *d, struct dict_entry *e);

/* A pseudo-random entry, NULL when d is empty. */
struct dict_entry *dict_random(struct dict *d, uint64_t *seed);

uint64_t dict_next_random(uint64_t *seed);

#endif
