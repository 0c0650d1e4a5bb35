/*
 * Binary-safe strings: the values of string keys, list elements and hash
 * fields' values.
 */
#ifndef REDIS_RSTR_H
#define REDIS_RSTR_H

#include "redis_env.h"

struct rstr {
    size_t len;
    char data[];
};

struct rstr *rstr_new(const void *data, size_t len);   /* NULL when memory is exhausted */

#endif
