/*
 * Integers as Redis reads and writes them: strict decimal parsing (no sign
 * but '-', no leading zeros, no spaces, 64 bits) and formatting, and the
 * ASCII case-insensitive comparison that command and option names use.
 */
#ifndef REDIS_NUMBER_H
#define REDIS_NUMBER_H

#include "redis_env.h"

#define NUMBER_MAX_CHARS 21     /* "-9223372036854775808" and a NUL */

/* Redis's string2ll(): true when all of s[0..len) is one 64-bit integer. */
bool number_parse_i64(const char *s, size_t len, int64_t *value);

/* Decimal text of v into buf (NUMBER_MAX_CHARS bytes); returns its length. */
size_t number_format_i64(char *buf, int64_t v);

/* True when s[0..len) equals the NUL-terminated lit, ignoring ASCII case. */
bool name_equals(const char *s, size_t len, const char *lit);

#endif
