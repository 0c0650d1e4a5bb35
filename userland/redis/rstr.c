/*
 * Binary-safe string allocation.
 */
#include "rstr.h"

struct rstr *rstr_new(const void *data, size_t len)
{
    if (len > SIZE_MAX - sizeof(struct rstr))
        return NULL;
    struct rstr *s = malloc(sizeof(*s) + len);
    if (!s)
        return NULL;
    s->len = len;
    memcpy(s->data, data, len);
    return s;
}
