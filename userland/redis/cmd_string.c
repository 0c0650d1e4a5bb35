/*
 * String commands: GET, SET (NX XX GET EX PX EXAT PXAT KEEPTTL), INCR,
 * DECR, INCRBY, DECRBY, MGET, MSET, as Redis 7.0's t_string.c.
 */
#include "number.h"
#include "server.h"

void cmd_get(struct redis_conn *c)
{
    bool wrong;
    struct value *v = lookup_typed(c, 1, VALUE_STRING, &wrong);
    if (wrong)
        return;
    if (!v)
        reply_nil(&c->reply);
    else
        reply_bulk(&c->reply, v->u.str->data, v->u.str->len);
}

enum set_flags {
    SET_NX = 1, SET_XX = 2, SET_GET = 4, SET_KEEPTTL = 8,
    SET_EX = 16, SET_PX = 32, SET_EXAT = 64, SET_PXAT = 128,
};
#define SET_ANY_EXPIRY (SET_EX | SET_PX | SET_EXAT | SET_PXAT)

/* SET's options as parseExtendedStringArgumentsOrReply() reads them. */
static bool parse_set_options(struct redis_conn *c, unsigned *flags, size_t *expire_arg)
{
    static const struct { const char *name; unsigned flag, excludes; } expiry[] = {
        { "ex", SET_EX, SET_KEEPTTL | SET_EXAT | SET_PX | SET_PXAT },
        { "px", SET_PX, SET_KEEPTTL | SET_EX | SET_EXAT | SET_PXAT },
        { "exat", SET_EXAT, SET_KEEPTTL | SET_EX | SET_PX | SET_PXAT },
        { "pxat", SET_PXAT, SET_KEEPTTL | SET_EX | SET_EXAT | SET_PX },
    };
    *flags = 0;
    for (size_t j = 3; j < c->argc; j++) {
        bool has_next = j + 1 < c->argc;
        if (arg_is(c, j, "nx") && !(*flags & SET_XX)) {
            *flags |= SET_NX;
            continue;
        }
        if (arg_is(c, j, "xx") && !(*flags & SET_NX)) {
            *flags |= SET_XX;
            continue;
        }
        if (arg_is(c, j, "get")) {
            *flags |= SET_GET;
            continue;
        }
        if (arg_is(c, j, "keepttl") && !(*flags & SET_ANY_EXPIRY)) {
            *flags |= SET_KEEPTTL;
            continue;
        }
        bool matched = false;
        for (size_t k = 0; k < sizeof(expiry) / sizeof(expiry[0]); k++) {
            if (arg_is(c, j, expiry[k].name) && !(*flags & expiry[k].excludes) && has_next) {
                *flags |= expiry[k].flag;
                *expire_arg = ++j;
                matched = true;
                break;
            }
        }
        if (!matched) {
            reply_error(&c->reply, ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* getExpireMillisecondsOrReply(): the absolute expiry time in ms. */
static bool expire_time_or_reply(struct redis_conn *c, size_t i, unsigned flags, int64_t *when)
{
    int64_t t;
    if (!arg_i64_or_reply(c, i, &t))
        return false;
    bool seconds = flags & (SET_EX | SET_EXAT);
    if (t <= 0 || (seconds && t > INT64_MAX / 1000))
        goto invalid;
    if (seconds)
        t *= 1000;
    if (flags & (SET_EX | SET_PX)) {
        int64_t now = db_now(c->db);
        if (t > INT64_MAX - now)
            goto invalid;   /* Redis's sum wraps negative here and fails the same check */
        t += now;
    }
    *when = t;
    return true;
invalid:
    reply_error(&c->reply, "ERR invalid expire time in 'set' command");
    return false;
}

void cmd_set(struct redis_conn *c)
{
    unsigned flags;
    size_t expire_arg = 0;
    int64_t when = NO_EXPIRY;
    if (!parse_set_options(c, &flags, &expire_arg))
        return;
    if (flags & SET_ANY_EXPIRY) {
        if (!c->db->now_ms) {
            /* No clock in this instance (redis_db_set_clock). */
            reply_error(&c->reply, ERR_SYNTAX);
            return;
        }
        if (!expire_time_or_reply(c, expire_arg, flags, &when))
            return;
    }
    struct dict_entry *e = db_lookup_entry(c->db, c->argv[1].data, c->argv[1].len);
    struct value *old = e ? e->value : NULL;
    if ((flags & SET_GET) && old && old->type != VALUE_STRING) {
        reply_error(&c->reply, ERR_WRONGTYPE);
        return;
    }
    if (((flags & SET_NX) && e) || ((flags & SET_XX) && !e)) {
        if (!(flags & SET_GET))
            reply_nil(&c->reply);
        else if (old)
            reply_bulk(&c->reply, old->u.str->data, old->u.str->len);
        else
            reply_nil(&c->reply);
        return;
    }
    struct rstr *s = rstr_new(c->argv[2].data, c->argv[2].len);
    struct value *v = s ? value_new(VALUE_STRING, s) : NULL;
    struct dict_entry *fresh = v && !e ? dict_entry_new(c->argv[1].data, c->argv[1].len, v) : NULL;
    if (!v || (!e && !fresh)) {
        free(s);
        free(v);
        reply_error(&c->reply, ERR_OOM);
        return;
    }
    if (flags & SET_GET) {
        if (old)
            reply_bulk(&c->reply, old->u.str->data, old->u.str->len);
        else
            reply_nil(&c->reply);
    }
    int64_t keep = old && (flags & SET_KEEPTTL) ? old->expire_ms : NO_EXPIRY;
    if (e)
        db_replace(c->db, e, v);
    else
        db_add(c->db, fresh);
    db_set_expiry(c->db, v, (flags & SET_ANY_EXPIRY) ? when : keep);
    if (!(flags & SET_GET))
        reply_status(&c->reply, "OK");
}

static void incr_by(struct redis_conn *c, int64_t by)
{
    struct dict_entry *e = db_lookup_entry(c->db, c->argv[1].data, c->argv[1].len);
    struct value *v = e ? e->value : NULL;
    if (v && v->type != VALUE_STRING) {
        reply_error(&c->reply, ERR_WRONGTYPE);
        return;
    }
    int64_t old = 0;
    if (v && !number_parse_i64(v->u.str->data, v->u.str->len, &old)) {
        reply_error(&c->reply, ERR_NOT_INTEGER);
        return;
    }
    if ((by < 0 && old < 0 && by < INT64_MIN - old) || (by > 0 && old > 0 && by > INT64_MAX - old)) {
        reply_error(&c->reply, "ERR increment or decrement would overflow");
        return;
    }
    int64_t now = old + by;
    char text[NUMBER_MAX_CHARS];
    struct rstr *s = rstr_new(text, number_format_i64(text, now));
    struct value *fresh = s && !v ? value_new(VALUE_STRING, s) : NULL;
    struct dict_entry *fresh_entry = fresh ? dict_entry_new(c->argv[1].data, c->argv[1].len, fresh) : NULL;
    if (!s || (!v && !fresh_entry)) {
        free(s);
        free(fresh);
        reply_error(&c->reply, ERR_OOM);
        return;
    }
    if (v) {
        /* The expiry stays, as Redis's dbOverwrite keeps it. */
        free(v->u.str);
        v->u.str = s;
    } else {
        db_add(c->db, fresh_entry);
    }
    reply_integer(&c->reply, now);
}

void cmd_incr(struct redis_conn *c)
{
    incr_by(c, 1);
}

void cmd_decr(struct redis_conn *c)
{
    incr_by(c, -1);
}

void cmd_incrby(struct redis_conn *c)
{
    int64_t by;
    if (arg_i64_or_reply(c, 2, &by))
        incr_by(c, by);
}

void cmd_decrby(struct redis_conn *c)
{
    int64_t by;
    if (!arg_i64_or_reply(c, 2, &by))
        return;
    if (by == INT64_MIN) {
        reply_error(&c->reply, "ERR decrement would overflow");
        return;
    }
    incr_by(c, -by);
}

void cmd_mget(struct redis_conn *c)
{
    reply_array(&c->reply, c->argc - 1);
    for (size_t i = 1; i < c->argc; i++) {
        struct value *v = db_lookup(c->db, c->argv[i].data, c->argv[i].len);
        if (v && v->type == VALUE_STRING)
            reply_bulk(&c->reply, v->u.str->data, v->u.str->len);
        else
            reply_nil(&c->reply);
    }
}

void cmd_mset(struct redis_conn *c)
{
    if (c->argc % 2 == 0) {
        reply_arity_error(c, "mset");
        return;
    }
    size_t pairs = (c->argc - 1) / 2;
    /* Prepared: for pair k, a string value and an entry in case its key is absent when
     * the pair is applied (an earlier pair may add it, a lookup may find it expired). */
    void **values = prepared_new(c, pairs);
    void **entries = values ? prepared_new(c, pairs) : NULL;
    bool ok = entries != NULL;
    for (size_t k = 0; ok && k < pairs; k++) {
        const struct resp_arg *key = &c->argv[1 + 2 * k], *val = &c->argv[2 + 2 * k];
        struct rstr *s = rstr_new(val->data, val->len);
        values[k] = s ? value_new(VALUE_STRING, s) : NULL;
        if (!values[k]) {
            free(s);
            ok = false;
        } else {
            entries[k] = dict_entry_new(key->data, key->len, NULL);
            ok = entries[k] != NULL;
        }
    }
    if (!ok) {
        /* prepared_new replied already when an array itself could not be had. */
        if (values && entries)
            reply_error(&c->reply, ERR_OOM);
        for (size_t k = 0; values && k < pairs; k++) {
            if (values[k])
                value_free(values[k]);
            if (entries)
                free(entries[k]);
        }
        free(values);
        free(entries);
        return;
    }
    for (size_t k = 0; k < pairs; k++) {
        const struct resp_arg *key = &c->argv[1 + 2 * k];
        struct dict_entry *e = db_lookup_entry(c->db, key->data, key->len);
        if (e) {
            /* Present already, or added by an earlier pair of this MSET. */
            db_replace(c->db, e, values[k]);
            free(entries[k]);
        } else {
            ((struct dict_entry *)entries[k])->value = values[k];
            db_add(c->db, entries[k]);
        }
    }
    free(values);
    free(entries);
    reply_status(&c->reply, "OK");
}
