/*
 * List values: a ring buffer of strings, so both ends push and pop in
 * constant time and LRANGE indexes directly.  Growth is reserved before a
 * command changes anything, so pushing itself cannot fail.
 */
#ifndef REDIS_LIST_H
#define REDIS_LIST_H

#include "rstr.h"

struct list {
    struct rstr **items;
    size_t cap, head, len;      /* items[(head + i) % cap] is element i */
};

void list_init(struct list *l);
void list_clear(struct list *l);
bool list_reserve(struct list *l, size_t more);        /* false when memory is exhausted */
void list_push_head(struct list *l, struct rstr *s);   /* room reserved */
void list_push_tail(struct list *l, struct rstr *s);
struct rstr *list_pop_head(struct list *l);            /* the list is not empty */
struct rstr *list_pop_tail(struct list *l);
struct rstr *list_at(const struct list *l, size_t i);

#endif
