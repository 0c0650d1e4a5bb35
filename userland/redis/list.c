/*
 * The ring buffer behind list values.  It doubles when full and halves when
 * a quarter full, so its memory follows its length.
 */
#include "list.h"

#define LIST_MIN_CAP 4

void list_init(struct list *l)
{
    memset(l, 0, sizeof(*l));
}

void list_clear(struct list *l)
{
    for (size_t i = 0; i < l->len; i++)
        free(list_at(l, i));
    free(l->items);
    list_init(l);
}

static bool list_move(struct list *l, size_t cap)
{
    struct rstr **items = malloc(cap * sizeof(*items));
    if (!items)
        return false;
    for (size_t i = 0; i < l->len; i++)
        items[i] = list_at(l, i);
    free(l->items);
    l->items = items;
    l->cap = cap;
    l->head = 0;
    return true;
}

bool list_reserve(struct list *l, size_t more)
{
    if (more > SIZE_MAX / sizeof(struct rstr *) / 2 - l->len)
        return false;
    if (l->len + more <= l->cap)
        return true;
    size_t cap = l->cap ? l->cap : LIST_MIN_CAP;
    while (cap < l->len + more)
        cap *= 2;
    return list_move(l, cap);
}

void list_push_head(struct list *l, struct rstr *s)
{
    l->head = (l->head + l->cap - 1) % l->cap;
    l->items[l->head] = s;
    l->len++;
}

void list_push_tail(struct list *l, struct rstr *s)
{
    l->items[(l->head + l->len) % l->cap] = s;
    l->len++;
}

/* Give memory back once the list is a quarter full; without memory, keep the bigger ring. */
static void list_shrink(struct list *l)
{
    if (l->cap > LIST_MIN_CAP && l->len < l->cap / 4)
        list_move(l, l->cap / 2);
}

struct rstr *list_pop_head(struct list *l)
{
    struct rstr *s = l->items[l->head];
    l->head = (l->head + 1) % l->cap;
    l->len--;
    list_shrink(l);
    return s;
}

struct rstr *list_pop_tail(struct list *l)
{
    struct rstr *s = list_at(l, l->len - 1);
    l->len--;
    list_shrink(l);
    return s;
}

struct rstr *list_at(const struct list *l, size_t i)
{
    return l->items[(l->head + i) % l->cap];
}
