/*
 * Sorted-set values: a dict from member to node for lookups by member, and
 * a skip list (Pugh 1990, as Redis's t_zset.c) ordering the nodes by score
 * and then by member bytes, for ranges by score.  A node is allocated with
 * its dict entry before a command changes anything, so adding cannot fail.
 */
#ifndef REDIS_ZSET_H
#define REDIS_ZSET_H

#include "dict.h"

#define ZSET_MAX_LEVEL 32

struct zset_node {
    uint64_t score;             /* a double's bits (score.h) */
    struct dict_entry *entry;   /* the member: entry->key; entry->value is this node */
    int level;
    struct zset_node *forward[];
};

struct zset {
    struct dict members;
    struct zset_node *head[ZSET_MAX_LEVEL];
    int level;
    uint64_t seed;              /* node levels */
    bool small;                 /* Redis would hold it as a listpack (see cmd_zadd) */
};

void zset_init(struct zset *z);
void zset_clear(struct zset *z);

/* A detached node for member; NULL when memory is exhausted. */
struct zset_node *zset_node_new(struct zset *z, const void *member, size_t len);
void zset_node_free(struct zset_node *n);

struct zset_node *zset_find(struct zset *z, const void *member, size_t len);
void zset_insert(struct zset *z, struct zset_node *n, uint64_t score);  /* member absent */
void zset_set_score(struct zset *z, struct zset_node *n, uint64_t score);
void zset_delete(struct zset *z, struct zset_node *n);                 /* unlinks and frees */

/* The first node whose score is above min (exclusive) or at least min. */
struct zset_node *zset_first_from(struct zset *z, uint64_t min, bool exclusive);
struct zset_node *zset_first(struct zset *z);
static inline struct zset_node *zset_next(struct zset_node *n)
{
    return n->forward[0];
}

#endif
