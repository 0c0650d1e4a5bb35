/*
 * Sorted-set commands: ZADD (NX XX GT LT CH INCR), ZREM, ZRANGEBYSCORE
 * (WITHSCORES, LIMIT), ZRANGE by index (WITHSCORES), ZCARD, ZSCORE, as Redis
 * 7.0's t_zset.c.  ZRANGE's BYSCORE, BYLEX, REV and LIMIT are not
 * implemented: they get a syntax error (docs/redis.md).
 */
#include "score.h"
#include "server.h"

/*
 * Redis 7.0 keeps a sorted set created with at most 128 members of at most 64
 * bytes as a listpack until it outgrows those bounds, and a listpack stores a
 * score as text that reads -0 back as 0; a bigger set keeps -0.  Clients see
 * the difference (ZSCORE says "0" or "-0"), so struct zset tracks which one
 * Redis would have.
 */
#define ZSET_LISTPACK_ENTRIES 128
#define ZSET_LISTPACK_VALUE 64

enum zadd_flags { ZADD_NX = 1, ZADD_XX = 2, ZADD_CH = 4, ZADD_GT = 8, ZADD_LT = 16, ZADD_INCR = 32 };

/* getDoubleFromObject(): a score that is a whole finite-or-infinite number, no spaces, no range errors. */
/* zset_node_free for prepared_abandon's untyped items. */
static void zset_node_release(void *node)
{
    zset_node_free(node);
}

static bool score_arg(const struct resp_arg *a, uint64_t *bits)
{
    return a->len > 0 && score_parse(a->data, a->len, bits) == SCORE_OK;
}

void cmd_zadd(struct redis_conn *c)
{
    unsigned flags = 0;
    size_t idx = 2;
    for (; idx < c->argc; idx++) {
        if (arg_is(c, idx, "nx")) flags |= ZADD_NX;
        else if (arg_is(c, idx, "xx")) flags |= ZADD_XX;
        else if (arg_is(c, idx, "ch")) flags |= ZADD_CH;
        else if (arg_is(c, idx, "gt")) flags |= ZADD_GT;
        else if (arg_is(c, idx, "lt")) flags |= ZADD_LT;
        else if (arg_is(c, idx, "incr")) flags |= ZADD_INCR;
        else break;
    }
    size_t elements = c->argc - idx;
    if (elements % 2 || !elements) {
        reply_error(&c->reply, ERR_SYNTAX);
        return;
    }
    elements /= 2;
    if ((flags & ZADD_NX) && (flags & ZADD_XX)) {
        reply_error(&c->reply, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((flags & ZADD_GT) && (flags & ZADD_NX)) || ((flags & ZADD_LT) && (flags & ZADD_NX)) ||
        ((flags & ZADD_GT) && (flags & ZADD_LT))) {
        reply_error(&c->reply, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if ((flags & ZADD_INCR) && elements > 1) {
        reply_error(&c->reply, "ERR INCR option supports a single increment-element pair");
        return;
    }
    uint64_t *scores = malloc(elements * sizeof(*scores));
    if (!scores) {
        reply_error(&c->reply, ERR_OOM);
        return;
    }
    for (size_t k = 0; k < elements; k++) {
        if (!score_arg(&c->argv[idx + 2 * k], &scores[k])) {
            reply_error(&c->reply, ERR_NOT_FLOAT);
            free(scores);
            return;
        }
    }
    bool wrong;
    struct value *z = lookup_typed(c, 1, VALUE_ZSET, &wrong);
    if (wrong || (!z && (flags & ZADD_XX))) {
        if (!wrong && (flags & ZADD_INCR))
            reply_nil(&c->reply);
        else if (!wrong)
            reply_integer(&c->reply, 0);
        free(scores);
        return;
    }
    if (z && (flags & ZADD_INCR) && !(flags & ZADD_NX)) {
        const struct resp_arg *m = &c->argv[idx + 1];
        struct zset_node *n = zset_find(&z->u.zset, m->data, m->len);
        uint64_t sum;
        if (n && !score_add(n->score, scores[0], &sum)) {
            reply_error(&c->reply, "ERR resulting score is not a number (NaN)");
            free(scores);
            return;
        }
    }
    struct dict_entry *key_entry = NULL;
    if (!z) {
        key_entry = key_entry_new(c, 1, VALUE_ZSET);
        if (!key_entry) {
            free(scores);
            return;
        }
        z = key_entry->value;
        size_t longest = 0;
        for (size_t k = 0; k < elements; k++) {
            if (c->argv[idx + 2 * k + 1].len > longest)
                longest = c->argv[idx + 2 * k + 1].len;
        }
        z->u.zset.small = elements <= ZSET_LISTPACK_ENTRIES && longest <= ZSET_LISTPACK_VALUE;
    }
    void **nodes = prepared_new(c, elements);
    bool ok = nodes != NULL;
    for (size_t k = 0; ok && k < elements; k++) {
        const struct resp_arg *m = &c->argv[idx + 2 * k + 1];
        if (!(flags & ZADD_XX) && !zset_find(&z->u.zset, m->data, m->len)) {
            nodes[k] = zset_node_new(&z->u.zset, m->data, m->len);
            ok = nodes[k] != NULL;
        }
    }
    if (!ok) {
        free(scores);
        prepared_abandon(c, nodes, elements, zset_node_release, key_entry);
        return;
    }
    if (key_entry)
        db_add(c->db, key_entry);
    int64_t added = 0, updated = 0;
    bool processed = false;
    uint64_t result = 0;        /* INCR's reply: the member's new score */
    for (size_t k = 0; k < elements; k++) {
        const struct resp_arg *m = &c->argv[idx + 2 * k + 1];
        struct zset_node *n = zset_find(&z->u.zset, m->data, m->len);
        if (!n && (z->u.zset.members.count + 1 > ZSET_LISTPACK_ENTRIES || m->len > ZSET_LISTPACK_VALUE))
            z->u.zset.small = false;
        uint64_t score = scores[k];
        if (n && (flags & ZADD_INCR))
            score_add(n->score, score, &score);     /* not NaN: checked above */
        uint64_t stored = z->u.zset.small && score == SCORE_NEG_ZERO ? 0 : score;
        if (n) {
            if (nodes[k])
                zset_node_free(nodes[k]);
            uint64_t now = score_order(n->score), want = score_order(stored);
            if ((flags & ZADD_NX) || ((flags & ZADD_GT) && want <= now) ||
                ((flags & ZADD_LT) && want >= now))
                continue;
            if (want != now) {
                zset_set_score(&z->u.zset, n, stored);
                updated++;
            }
        } else if (nodes[k]) {
            zset_insert(&z->u.zset, nodes[k], stored);
            added++;
        } else {
            continue;
        }
        processed = true;
        result = score;
    }
    if (z->u.zset.members.count == 0)
        db_delete_key(c->db, c->argv[1].data, c->argv[1].len);
    free(nodes);
    free(scores);
    if (!(flags & ZADD_INCR))
        reply_integer(&c->reply, (flags & ZADD_CH) ? added + updated : added);
    else if (processed)
        reply_bulk_score(&c->reply, result);
    else
        reply_nil(&c->reply);
}

void cmd_zrem(struct redis_conn *c)
{
    bool wrong;
    struct value *z = lookup_typed(c, 1, VALUE_ZSET, &wrong);
    if (wrong)
        return;
    int64_t removed = 0;
    for (size_t i = 2; z && i < c->argc; i++) {
        struct zset_node *n = zset_find(&z->u.zset, c->argv[i].data, c->argv[i].len);
        if (n) {
            zset_delete(&z->u.zset, n);
            removed++;
        }
    }
    if (z && z->u.zset.members.count == 0)
        db_delete_key(c->db, c->argv[1].data, c->argv[1].len);
    reply_integer(&c->reply, removed);
}

/* zslParseRange()'s bound: strtod() after an optional '(' with nothing left over; an
 * empty text is 0 and a range error gives +-inf or 0, as strtod() returns them. */
static bool range_bound(const struct resp_arg *a, uint64_t *bits, bool *exclusive)
{
    const char *s = a->data;
    size_t len = a->len;
    *exclusive = len > 0 && s[0] == '(';
    if (*exclusive) {
        s++;
        len--;
    }
    if (len == 0) {
        *bits = 0;
        return true;
    }
    return score_parse(s, len, bits) != SCORE_INVALID;
}

static bool below_max(uint64_t score, uint64_t max, bool exclusive)
{
    uint64_t s = score_order(score), m = score_order(max);
    return exclusive ? s < m : s <= m;
}

static void reply_member(struct redis_conn *c, struct zset_node *n, bool withscores)
{
    reply_bulk(&c->reply, n->entry->key, n->entry->key_len);
    if (withscores)
        reply_bulk_score(&c->reply, n->score);
}

void cmd_zrangebyscore(struct redis_conn *c)
{
    bool withscores = false;
    int64_t offset = 0, limit = -1;
    for (size_t j = 4; j < c->argc; j++) {
        size_t left = c->argc - j - 1;
        if (arg_is(c, j, "withscores")) {
            withscores = true;
        } else if (arg_is(c, j, "limit") && left >= 2) {
            if (!arg_i64_or_reply(c, j + 1, &offset) || !arg_i64_or_reply(c, j + 2, &limit))
                return;
            j += 2;
        } else {
            reply_error(&c->reply, ERR_SYNTAX);
            return;
        }
    }
    uint64_t min, max;
    bool minex, maxex;
    if (!range_bound(&c->argv[2], &min, &minex) || !range_bound(&c->argv[3], &max, &maxex)) {
        reply_error(&c->reply, "ERR min or max is not a float");
        return;
    }
    bool wrong;
    struct value *z = lookup_typed(c, 1, VALUE_ZSET, &wrong);
    if (wrong)
        return;
    uint64_t omin = score_order(min), omax = score_order(max);
    /* zslIsInRange(): an empty range, or negative offsets (Redis skips everything). */
    if (!z || omin > omax || (omin == omax && (minex || maxex)) || offset < 0 ||
        (offset > 0 && (uint64_t)offset >= z->u.zset.members.count)) {
        reply_array(&c->reply, 0);
        return;
    }
    struct zset_node *first = zset_first_from(&z->u.zset, min, minex);
    for (int64_t k = 0; first && k < offset; k++)
        first = zset_next(first);
    size_t count = 0;
    for (struct zset_node *n = first; n && below_max(n->score, max, maxex) &&
         (limit < 0 || count < (uint64_t)limit); n = zset_next(n))
        count++;
    reply_array(&c->reply, withscores ? 2 * count : count);
    struct zset_node *n = first;
    for (size_t k = 0; k < count; k++, n = zset_next(n))
        reply_member(c, n, withscores);
}

void cmd_zrange(struct redis_conn *c)
{
    bool withscores = false;
    for (size_t j = 4; j < c->argc; j++) {
        if (arg_is(c, j, "withscores")) {
            withscores = true;
        } else {
            reply_error(&c->reply, ERR_SYNTAX);
            return;
        }
    }
    int64_t start, end;
    if (!arg_i64_or_reply(c, 2, &start) || !arg_i64_or_reply(c, 3, &end))
        return;
    bool wrong;
    struct value *z = lookup_typed(c, 1, VALUE_ZSET, &wrong);
    if (wrong)
        return;
    if (!z || !range_clamp(&start, &end, (int64_t)z->u.zset.members.count)) {
        reply_array(&c->reply, 0);
        return;
    }
    size_t count = (size_t)(end - start + 1);
    reply_array(&c->reply, withscores ? 2 * count : count);
    struct zset_node *n = zset_first(&z->u.zset);
    for (int64_t i = 0; i < start; i++)
        n = zset_next(n);
    for (size_t k = 0; k < count; k++, n = zset_next(n))
        reply_member(c, n, withscores);
}

void cmd_zcard(struct redis_conn *c)
{
    bool wrong;
    struct value *z = lookup_typed(c, 1, VALUE_ZSET, &wrong);
    if (!wrong)
        reply_integer(&c->reply, z ? (int64_t)z->u.zset.members.count : 0);
}

void cmd_zscore(struct redis_conn *c)
{
    bool wrong;
    struct value *z = lookup_typed(c, 1, VALUE_ZSET, &wrong);
    if (wrong)
        return;
    struct zset_node *n = z ? zset_find(&z->u.zset, c->argv[2].data, c->argv[2].len) : NULL;
    if (n)
        reply_bulk_score(&c->reply, n->score);
    else
        reply_nil(&c->reply);
}
