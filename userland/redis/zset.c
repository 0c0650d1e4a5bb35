/*
 * The skip list of sorted sets.  Levels are drawn with probability 1/4 per
 * level, as Redis does, from a per-set generator so runs are reproducible.
 */
#include "zset.h"
#include "score.h"

void zset_init(struct zset *z)
{
    memset(z, 0, sizeof(*z));
    dict_init(&z->members);
    z->level = 1;
    z->seed = 0x9e3779b97f4a7c15ULL;
}

void zset_clear(struct zset *z)
{
    struct zset_node *n = z->head[0];
    while (n) {
        struct zset_node *next = n->forward[0];
        free(n);
        n = next;
    }
    dict_clear(&z->members, NULL);
    zset_init(z);
}

static int random_level(struct zset *z)
{
    int level = 1;
    while (level < ZSET_MAX_LEVEL && (dict_next_random(&z->seed) & 3) == 0)
        level++;
    return level;
}

struct zset_node *zset_node_new(struct zset *z, const void *member, size_t len)
{
    int level = random_level(z);
    struct zset_node *n = malloc(sizeof(*n) + (size_t)level * sizeof(n->forward[0]));
    if (!n)
        return NULL;
    n->entry = dict_entry_new(member, len, n);
    if (!n->entry) {
        free(n);
        return NULL;
    }
    n->level = level;
    n->score = 0;
    return n;
}

void zset_node_free(struct zset_node *n)
{
    free(n->entry);
    free(n);
}

struct zset_node *zset_find(struct zset *z, const void *member, size_t len)
{
    struct dict_entry *e = dict_find(&z->members, member, len);
    return e ? e->value : NULL;
}

/* True when a sorts before (score, member). */
static bool node_before(const struct zset_node *a, uint64_t score, const struct dict_entry *member)
{
    uint64_t oa = score_order(a->score), ob = score_order(score);
    if (oa != ob)
        return oa < ob;
    size_t la = a->entry->key_len, lb = member->key_len;
    int c = memcmp(a->entry->key, member->key, la < lb ? la : lb);
    return c < 0 || (c == 0 && la < lb);
}

static struct zset_node **forward_slot(struct zset *z, struct zset_node *x, int i)
{
    return x ? &x->forward[i] : &z->head[i];
}

static void link_node(struct zset *z, struct zset_node *n)
{
    struct zset_node *x = NULL;
    for (int i = ZSET_MAX_LEVEL - 1; i >= 0; i--) {
        while (*forward_slot(z, x, i) && node_before(*forward_slot(z, x, i), n->score, n->entry))
            x = *forward_slot(z, x, i);
        if (i < n->level) {
            n->forward[i] = *forward_slot(z, x, i);
            *forward_slot(z, x, i) = n;
        }
    }
    if (n->level > z->level)
        z->level = n->level;
}

static void unlink_node(struct zset *z, struct zset_node *n)
{
    struct zset_node *x = NULL;
    for (int i = ZSET_MAX_LEVEL - 1; i >= 0; i--) {
        while (*forward_slot(z, x, i) && *forward_slot(z, x, i) != n &&
               node_before(*forward_slot(z, x, i), n->score, n->entry))
            x = *forward_slot(z, x, i);
        if (i < n->level && *forward_slot(z, x, i) == n)
            *forward_slot(z, x, i) = n->forward[i];
    }
}

void zset_insert(struct zset *z, struct zset_node *n, uint64_t score)
{
    n->score = score;
    dict_insert(&z->members, n->entry);
    link_node(z, n);
}

void zset_set_score(struct zset *z, struct zset_node *n, uint64_t score)
{
    unlink_node(z, n);
    n->score = score;
    link_node(z, n);
}

void zset_delete(struct zset *z, struct zset_node *n)
{
    unlink_node(z, n);
    dict_unlink(&z->members, n->entry);
    zset_node_free(n);
}

struct zset_node *zset_first_from(struct zset *z, uint64_t min, bool exclusive)
{
    uint64_t key = score_order(min);
    struct zset_node *x = NULL;
    for (int i = z->level - 1; i >= 0; i--) {
        for (struct zset_node *next = *forward_slot(z, x, i); next; next = *forward_slot(z, x, i)) {
            uint64_t k = score_order(next->score);
            if (k > key || (k == key && !exclusive))
                break;
            x = next;
        }
    }
    return *forward_slot(z, x, 0);
}

struct zset_node *zset_first(struct zset *z)
{
    return z->head[0];
}
