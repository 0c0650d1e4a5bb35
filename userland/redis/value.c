/*
 * Creating and freeing values of every type.
 */
#include "value.h"

struct value *value_new(enum value_type type, struct rstr *str)
{
    struct value *v = malloc(sizeof(*v));
    if (!v)
        return NULL;
    v->type = type;
    v->expire_ms = NO_EXPIRY;
    switch (type) {
    case VALUE_STRING:
        v->u.str = str;
        break;
    case VALUE_LIST:
        list_init(&v->u.list);
        break;
    case VALUE_HASH:
    case VALUE_SET:
        dict_init(&v->u.dict);
        break;
    case VALUE_ZSET:
        zset_init(&v->u.zset);
        break;
    }
    return v;
}

void value_free(void *value)
{
    struct value *v = value;
    switch (v->type) {
    case VALUE_STRING:
        free(v->u.str);
        break;
    case VALUE_LIST:
        list_clear(&v->u.list);
        break;
    case VALUE_HASH:
        dict_clear(&v->u.dict, free);
        break;
    case VALUE_SET:
        dict_clear(&v->u.dict, NULL);
        break;
    case VALUE_ZSET:
        zset_clear(&v->u.zset);
        break;
    }
    free(v);
}
