/*
 * List commands: LPUSH, RPUSH, LPOP, RPOP (with a count), LRANGE, LLEN, as
 * Redis 7.0's t_list.c.
 */
#include "server.h"

static void push(struct redis_conn *c, bool head)
{
    bool wrong;
    struct value *l = lookup_typed(c, 1, VALUE_LIST, &wrong);
    if (wrong)
        return;
    size_t n = c->argc - 2;
    struct dict_entry *key_entry = NULL;
    if (!l) {
        key_entry = key_entry_new(c, 1, VALUE_LIST);
        if (!key_entry)
            return;
        l = key_entry->value;
    }
    void **items = prepared_new(c, n);
    bool ok = items && list_reserve(&l->u.list, n);
    for (size_t k = 0; ok && k < n; k++) {
        items[k] = rstr_new(c->argv[2 + k].data, c->argv[2 + k].len);
        ok = items[k] != NULL;
    }
    if (!ok) {
        prepared_abandon(c, items, n, free, key_entry);
        return;
    }
    if (key_entry)
        db_add(c->db, key_entry);
    for (size_t k = 0; k < n; k++) {
        if (head)
            list_push_head(&l->u.list, items[k]);
        else
            list_push_tail(&l->u.list, items[k]);
    }
    free(items);
    reply_integer(&c->reply, (int64_t)l->u.list.len);
}

void cmd_lpush(struct redis_conn *c)
{
    push(c, true);
}

void cmd_rpush(struct redis_conn *c)
{
    push(c, false);
}

static void pop(struct redis_conn *c, bool head)
{
    bool has_count = c->argc == 3;
    int64_t count = 1;
    if (c->argc > 3) {
        reply_arity_error(c, head ? "lpop" : "rpop");
        return;
    }
    if (has_count && !count_arg_or_reply(c, 2, &count))
        return;
    bool wrong;
    struct value *l = lookup_typed(c, 1, VALUE_LIST, &wrong);
    if (wrong)
        return;
    if (!l) {
        if (has_count)
            reply_nil_array(&c->reply);
        else
            reply_nil(&c->reply);
        return;
    }
    if (has_count && count == 0) {
        reply_array(&c->reply, 0);
        return;
    }
    if ((uint64_t)count > l->u.list.len)
        count = (int64_t)l->u.list.len;
    if (has_count)
        reply_array(&c->reply, (size_t)count);
    for (int64_t k = 0; k < count; k++) {
        struct rstr *s = head ? list_pop_head(&l->u.list) : list_pop_tail(&l->u.list);
        reply_bulk(&c->reply, s->data, s->len);
        free(s);
    }
    if (l->u.list.len == 0)
        db_delete_key(c->db, c->argv[1].data, c->argv[1].len);
}

void cmd_lpop(struct redis_conn *c)
{
    pop(c, true);
}

void cmd_rpop(struct redis_conn *c)
{
    pop(c, false);
}

void cmd_lrange(struct redis_conn *c)
{
    int64_t start, end;
    if (!arg_i64_or_reply(c, 2, &start) || !arg_i64_or_reply(c, 3, &end))
        return;
    bool wrong;
    struct value *l = lookup_typed(c, 1, VALUE_LIST, &wrong);
    if (wrong)
        return;
    if (!l || !range_clamp(&start, &end, (int64_t)l->u.list.len)) {
        reply_array(&c->reply, 0);
        return;
    }
    reply_array(&c->reply, (size_t)(end - start + 1));
    for (int64_t i = start; i <= end; i++) {
        struct rstr *s = list_at(&l->u.list, (size_t)i);
        reply_bulk(&c->reply, s->data, s->len);
    }
}

void cmd_llen(struct redis_conn *c)
{
    bool wrong;
    struct value *l = lookup_typed(c, 1, VALUE_LIST, &wrong);
    if (!wrong)
        reply_integer(&c->reply, l ? (int64_t)l->u.list.len : 0);
}
