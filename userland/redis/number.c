/*
 * Integer parsing and formatting with Redis's exact rules (util.c's
 * string2ll and ll2string), so that what is "not an integer" here is what
 * Redis says is not one.
 */
#include "number.h"

bool number_parse_i64(const char *s, size_t len, int64_t *value)
{
    if (len == 0 || len >= NUMBER_MAX_CHARS)
        return false;
    if (len == 1 && s[0] == '0') {
        *value = 0;
        return true;
    }
    size_t i = 0;
    bool negative = false;
    if (s[0] == '-') {
        negative = true;
        if (++i == len)
            return false;
    }
    if (s[i] < '1' || s[i] > '9')
        return false;
    uint64_t v = (uint64_t)(s[i++] - '0');
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t digit = (uint64_t)(s[i] - '0');
        if (v > UINT64_MAX / 10 || v * 10 > UINT64_MAX - digit)
            return false;
        v = v * 10 + digit;
    }
    if (negative) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        /* Two's complement negation in unsigned arithmetic: INT64_MIN has no positive twin. */
        *value = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *value = (int64_t)v;
    }
    return true;
}

size_t number_format_i64(char *buf, int64_t v)
{
    char tmp[NUMBER_MAX_CHARS];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool name_equals(const char *s, size_t len, const char *lit)
{
    for (size_t i = 0; i < len; i++) {
        if (lit[i] == '\0' || ascii_lower(s[i]) != ascii_lower(lit[i]))
            return false;
    }
    return lit[len] == '\0';
}
