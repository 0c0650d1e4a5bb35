/*
 * The value a key holds: one of Redis's five types, and the key's expiry.
 * Hashes map fields to strings and sets map members to nothing, both in a
 * dict; lists and sorted sets have their own structures.
 */
#ifndef REDIS_VALUE_H
#define REDIS_VALUE_H

#include "dict.h"
#include "list.h"
#include "rstr.h"
#include "zset.h"

enum value_type { VALUE_STRING, VALUE_LIST, VALUE_HASH, VALUE_SET, VALUE_ZSET };

#define NO_EXPIRY (-1)

struct value {
    enum value_type type;
    int64_t expire_ms;          /* Unix time in ms when the key goes, or NO_EXPIRY */
    union {
        struct rstr *str;       /* VALUE_STRING */
        struct list list;       /* VALUE_LIST */
        struct dict dict;       /* VALUE_HASH (values: struct rstr *), VALUE_SET (values: NULL) */
        struct zset zset;       /* VALUE_ZSET */
    } u;
};

/* An empty value of the type (a string value takes str); NULL when memory is exhausted.
 * A value holds pointers into itself (dict_init), so it is never copied. */
struct value *value_new(enum value_type type, struct rstr *str);
void value_free(void *value);

#endif
