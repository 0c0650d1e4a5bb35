/*
 * Chained hashing with two tables during a rehash, as Redis's dict.c does:
 * new entries go to the new table, lookups search both, and every
 * operation moves one bucket of the old table (skipping at most
 * REHASH_EMPTY_VISITS empty ones) until it is empty.  The table doubles when
 * it holds as many entries as buckets and halves down when it is less than
 * one eighth full, so memory stays proportional to the entries.
 */
#include "dict.h"

#define REHASH_EMPTY_VISITS 10
#define RANDOM_BUCKET_TRIES 64

/* FNV-1a, 64 bits: a single-threaded in-memory table needs spread, not secrecy. */
static uint64_t hash_bytes(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t dict_next_random(uint64_t *seed)
{
    uint64_t x = *seed;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *seed = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void dict_init(struct dict *d)
{
    memset(d, 0, sizeof(*d));
    d->table[0] = d->small;
    d->size[0] = DICT_SMALL_BUCKETS;
}

static bool rehashing(const struct dict *d)
{
    return d->table[1] != NULL;
}

static void free_table(struct dict *d, struct dict_entry **t)
{
    if (t != d->small)
        free(t);
}

static void rehash_step(struct dict *d)
{
    if (!rehashing(d))
        return;
    int empty = REHASH_EMPTY_VISITS;
    while (d->rehash_index < d->size[0] && !d->table[0][d->rehash_index]) {
        d->rehash_index++;
        if (--empty == 0)
            return;
    }
    if (d->rehash_index < d->size[0]) {
        struct dict_entry *e = d->table[0][d->rehash_index];
        while (e) {
            struct dict_entry *next = e->next;
            size_t b = (size_t)(e->hash & (d->size[1] - 1));
            e->next = d->table[1][b];
            d->table[1][b] = e;
            e = next;
        }
        d->table[0][d->rehash_index++] = NULL;
    }
    if (d->rehash_index == d->size[0]) {
        free_table(d, d->table[0]);
        d->table[0] = d->table[1];
        d->size[0] = d->size[1];
        d->table[1] = NULL;
        d->size[1] = 0;
        d->rehash_index = 0;
    }
}

/* Start moving into a table of `buckets`; without memory, carry on as we are. */
static void start_rehash(struct dict *d, size_t buckets)
{
    if (buckets > SIZE_MAX / sizeof(struct dict_entry *))
        return;
    struct dict_entry **t = malloc(buckets * sizeof(*t));
    if (!t)
        return;
    memset(t, 0, buckets * sizeof(*t));
    d->table[1] = t;
    d->size[1] = buckets;
    d->rehash_index = 0;
}

static void resize_if_needed(struct dict *d)
{
    if (rehashing(d))
        return;
    if (d->count >= d->size[0]) {
        start_rehash(d, d->size[0] * 2);
    } else if (d->size[0] > DICT_SMALL_BUCKETS && d->count < d->size[0] / 8) {
        size_t buckets = DICT_SMALL_BUCKETS;
        while (buckets < d->count)
            buckets *= 2;
        start_rehash(d, buckets);
    }
}

void dict_clear(struct dict *d, void (*free_value)(void *value))
{
    struct dict_entry *e = d->first;
    while (e) {
        struct dict_entry *after = e->after;
        if (free_value && e->value)
            free_value(e->value);
        free(e);
        e = after;
    }
    free_table(d, d->table[0]);
    if (d->table[1])
        free_table(d, d->table[1]);
    dict_init(d);
}

struct dict_entry *dict_find(struct dict *d, const void *key, size_t len)
{
    rehash_step(d);
    uint64_t h = hash_bytes(key, len);
    for (int t = 0; t < 2 && d->table[t]; t++) {
        for (struct dict_entry *e = d->table[t][h & (d->size[t] - 1)]; e; e = e->next) {
            if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0)
                return e;
        }
    }
    return NULL;
}

struct dict_entry *dict_entry_new(const void *key, size_t len, void *value)
{
    if (len > SIZE_MAX - sizeof(struct dict_entry))
        return NULL;
    struct dict_entry *e = malloc(sizeof(*e) + len);
    if (!e)
        return NULL;
    memset(e, 0, sizeof(*e));
    memcpy(e->key, key, len);
    e->key_len = len;
    e->hash = hash_bytes(key, len);
    e->value = value;
    return e;
}

void dict_insert(struct dict *d, struct dict_entry *e)
{
    rehash_step(d);
    int t = rehashing(d) ? 1 : 0;
    size_t b = (size_t)(e->hash & (d->size[t] - 1));
    e->next = d->table[t][b];
    d->table[t][b] = e;
    e->before = d->last;
    e->after = NULL;
    if (d->last)
        d->last->after = e;
    else
        d->first = e;
    d->last = e;
    d->count++;
    resize_if_needed(d);
}

void dict_unlink(struct dict *d, struct dict_entry *e)
{
    for (int t = 0; t < 2 && d->table[t]; t++) {
        struct dict_entry **link = &d->table[t][e->hash & (d->size[t] - 1)];
        while (*link && *link != e)
            link = &(*link)->next;
        if (*link) {
            *link = e->next;
            break;
        }
    }
    if (e->before)
        e->before->after = e->after;
    else
        d->first = e->after;
    if (e->after)
        e->after->before = e->before;
    else
        d->last = e->before;
    d->count--;
    rehash_step(d);
    resize_if_needed(d);
}

struct dict_entry *dict_random(struct dict *d, uint64_t *seed)
{
    if (d->count == 0)
        return NULL;
    size_t buckets = d->size[0] + d->size[1];
    for (int tries = 0; tries < RANDOM_BUCKET_TRIES; tries++) {
        size_t i = (size_t)(dict_next_random(seed) % buckets);
        struct dict_entry *chain = i < d->size[0] ? d->table[0][i] : d->table[1][i - d->size[0]];
        if (!chain)
            continue;
        size_t len = 0;
        for (struct dict_entry *e = chain; e; e = e->next)
            len++;
        size_t pick = (size_t)(dict_next_random(seed) % len);
        while (pick--)
            chain = chain->next;
        return chain;
    }
    /* A sparse table (one that could not shrink): walk the order list instead. */
    size_t pick = (size_t)(dict_next_random(seed) % d->count);
    struct dict_entry *e = d->first;
    while (pick--)
        e = e->after;
    return e;
}
