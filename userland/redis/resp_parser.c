/*
 * RESP2 request parsing, following Redis 7.0's processMultibulkBuffer() and
 * processInlineBuffer() (networking.c) for what is accepted and for every
 * error text, but byte by byte so that no input is ever buffered whole:
 * header lines keep only their first characters, an argument is copied
 * straight into its own allocation, and only an inline line is gathered
 * (up to REDIS_MAX_INLINE bytes, as Redis bounds it).
 *
 * Like Redis, the two bytes after a header's '\r' and after an argument are
 * skipped without being looked at.
 */
#include "resp_parser.h"
#include "limits.h"
#include "number.h"

void resp_parser_init(struct resp_parser *p)
{
    memset(p, 0, sizeof(*p));
}

static void free_args(struct resp_parser *p)
{
    for (size_t i = 0; i < p->argc; i++)
        free(p->argv[i].data);
    free(p->argv);
    p->argv = NULL;
    p->argc = p->expected = 0;
}

void resp_parser_free(struct resp_parser *p)
{
    free_args(p);
    free(p->inline_buf);
    resp_parser_init(p);
}

void resp_request_done(struct resp_parser *p)
{
    free_args(p);
    if (p->inline_cap > RESP_INLINE_KEEP) {
        /* A long inline line was a one-off: an idle connection holds little memory. */
        free(p->inline_buf);
        p->inline_buf = NULL;
        p->inline_cap = 0;
    }
    p->oom = false;
    p->request_bytes = 0;
    p->inline_len = 0;
    p->state = RESP_START;
}

static enum resp_result protocol_error(struct resp_parser *p, const char *message)
{
    p->error = message;
    return RESP_PROTOCOL;
}

/* The request is whole: hand it over, or say it could not be stored. */
static enum resp_result complete(struct resp_parser *p)
{
    p->state = RESP_START;
    return p->oom ? RESP_OOM : RESP_REQUEST;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Split line[0..len) as sdssplitargs() does (the line holds no NUL: see
 * RESP_INLINE).  Every argument is at most as long as the rest of the line,
 * so each is allocated at that length.  Returns false on unbalanced quotes.
 */
static bool split_inline(struct resp_parser *p, const char *line, size_t len)
{
    size_t i = 0;
    for (;;) {
        while (i < len && is_space(line[i]))
            i++;
        if (i == len)
            return true;
        if (p->argc == REDIS_MAX_ARGS) {
            p->too_many = true;
            return true;
        }
        struct resp_arg arg = { NULL, 0 };
        if (!p->oom && !p->argv) {
            p->argv = malloc(REDIS_MAX_ARGS * sizeof(*p->argv));
            p->oom = p->argv == NULL;
        }
        if (!p->oom) {
            arg.data = malloc(len - i + 1);
            p->oom = arg.data == NULL;
        }
        bool store = arg.data != NULL;     /* after an allocation failure, only check the quotes */
        bool in_double = false, in_single = false;
        for (bool done = false; !done;) {
            char c = i < len ? line[i] : '\0';
            char next = i + 1 < len ? line[i + 1] : '\0';
            if (in_double) {
                if (c == '\\' && next == 'x' && i + 3 < len && hex_value(line[i + 2]) >= 0 &&
                    hex_value(line[i + 3]) >= 0) {
                    char byte = (char)(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3]));
                    if (store) arg.data[arg.len++] = byte;
                    i += 3;
                } else if (c == '\\' && next) {
                    i++;
                    char e = line[i];
                    char v = e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' :
                             e == 'b' ? '\b' : e == 'a' ? '\a' : e;
                    if (store) arg.data[arg.len++] = v;
                } else if (c == '"') {
                    if (next && !is_space(next))
                        goto unbalanced;
                    done = true;
                } else if (!c) {
                    goto unbalanced;
                } else if (store) {
                    arg.data[arg.len++] = c;
                }
            } else if (in_single) {
                if (c == '\\' && next == '\'') {
                    i++;
                    if (store) arg.data[arg.len++] = '\'';
                } else if (c == '\'') {
                    if (next && !is_space(next))
                        goto unbalanced;
                    done = true;
                } else if (!c) {
                    goto unbalanced;
                } else if (store) {
                    arg.data[arg.len++] = c;
                }
            } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0') {
                done = true;
            } else if (c == '"') {
                in_double = true;
            } else if (c == '\'') {
                in_single = true;
            } else if (store) {
                arg.data[arg.len++] = c;
            }
            if (i < len)
                i++;
        }
        if (store) {
            arg.data[arg.len] = '\0';
            p->argv[p->argc++] = arg;
        }
        continue;
unbalanced:
        free(arg.data);
        return false;
    }
}

static enum resp_result end_inline(struct resp_parser *p)
{
    size_t len = p->inline_len;
    if (len > 0 && p->inline_buf[len - 1] == '\r')
        len--;
    if (!split_inline(p, p->inline_buf ? p->inline_buf : "", len))
        return protocol_error(p, "Protocol error: unbalanced quotes in request");
    if (p->too_many)
        return RESP_TOO_BIG;
    return complete(p);
}

static bool inline_append(struct resp_parser *p, const char *data, size_t n)
{
    if (n == 0)
        return true;
    if (p->inline_len + n > p->inline_cap) {
        size_t cap = p->inline_cap ? p->inline_cap : 256;
        while (cap < p->inline_len + n)
            cap *= 2;
        char *grown = malloc(cap);
        if (!grown)
            return false;
        if (p->inline_buf)
            memcpy(grown, p->inline_buf, p->inline_len);
        free(p->inline_buf);
        p->inline_buf = grown;
        p->inline_cap = cap;
    }
    memcpy(p->inline_buf + p->inline_len, data, n);
    p->inline_len += n;
    return true;
}

/* A '*' line is complete: announce the arguments. */
static enum resp_result end_multibulk_header(struct resp_parser *p)
{
    int64_t count;
    bool ok = p->header_len <= RESP_HEADER_KEEP && number_parse_i64(p->header, p->header_len, &count);
    if (!ok || count > REDIS_MAX_ARGS)
        return protocol_error(p, "Protocol error: invalid multibulk length");
    p->skip = 1;
    p->state = RESP_SKIP;
    if (count <= 0) {
        /* An empty request: Redis skips it without a reply. */
        p->after_skip = RESP_START;
        return RESP_MORE;
    }
    p->expected = (size_t)count;
    p->argv = malloc(p->expected * sizeof(*p->argv));
    p->oom = p->argv == NULL;
    p->after_skip = RESP_BULK_HEADER;
    return RESP_MORE;
}

static enum resp_result end_bulk_header(struct resp_parser *p)
{
    if (p->header_len == 0 || p->header[0] != '$') {
        char got = p->header_len ? p->header[0] : '\r';
        /* Redis maps CR and LF in error texts to spaces. */
        if (got == '\r' || got == '\n')
            got = ' ';
        static const char prefix[] = "Protocol error: expected '$', got '";
        memcpy(p->error_buf, prefix, sizeof(prefix) - 1);
        p->error_buf[sizeof(prefix) - 1] = got;
        p->error_buf[sizeof(prefix)] = '\'';
        p->error_buf[sizeof(prefix) + 1] = '\0';
        return protocol_error(p, p->error_buf);
    }
    int64_t len;
    bool ok = p->header_len <= RESP_HEADER_KEEP && number_parse_i64(p->header + 1, p->header_len - 1, &len);
    if (!ok || len < 0 || len > REDIS_MAX_BULK)
        return protocol_error(p, "Protocol error: invalid bulk length");
    p->request_bytes += (size_t)len;
    if (p->request_bytes > REDIS_MAX_REQUEST)
        return RESP_TOO_BIG;
    p->bulk_len = (size_t)len;
    p->bulk_done = 0;
    p->storing = false;
    if (!p->oom) {
        char *data = malloc(p->bulk_len + 1);
        if (data) {
            p->argv[p->argc].data = data;
            p->argv[p->argc].len = p->bulk_len;
            p->argc++;
            p->storing = true;
        } else {
            p->oom = true;
        }
    }
    p->skip = 1;
    p->after_skip = RESP_BULK_DATA;
    p->state = RESP_SKIP;
    return RESP_MORE;
}

size_t resp_parse(struct resp_parser *p, const char *data, size_t len, enum resp_result *result)
{
    size_t i = 0;
    while (i < len) {
        switch (p->state) {
        case RESP_START:
            p->nul_seen = false;
            p->header_len = 0;
            p->inline_len = 0;
            p->request_bytes = 0;
            p->oom = false;
            if (data[i] == '*') {
                p->state = RESP_MULTIBULK;
                i++;
            } else {
                p->state = RESP_INLINE;
            }
            break;
        case RESP_MULTIBULK:
        case RESP_BULK_HEADER: {
            char c = data[i++];
            /* Redis finds the line end with strchr(), which stops at a NUL: after one, no line
             * end is seen and the line only grows until it is too big. */
            p->nul_seen |= c == '\0';
            if (c != '\r' || p->nul_seen) {
                if (p->header_len < RESP_HEADER_KEEP)
                    p->header[p->header_len] = c;
                if (++p->header_len > REDIS_MAX_INLINE) {
                    *result = protocol_error(p, p->state == RESP_MULTIBULK
                                             ? "Protocol error: too big mbulk count string"
                                             : "Protocol error: too big bulk count string");
                    return i;
                }
                break;
            }
            *result = p->state == RESP_MULTIBULK ? end_multibulk_header(p) : end_bulk_header(p);
            if (*result != RESP_MORE)
                return i;
            break;
        }
        case RESP_SKIP:
            i++;
            if (--p->skip > 0)
                break;
            p->state = p->after_skip;
            p->header_len = 0;
            if (p->state == RESP_START && p->expected == 0 && p->argc + (p->oom ? 1 : 0) > 0) {
                *result = complete(p);
                return i;
            }
            break;
        case RESP_BULK_DATA: {
            size_t n = p->bulk_len - p->bulk_done;
            if (n > len - i)
                n = len - i;
            if (p->storing)
                memcpy(p->argv[p->argc - 1].data + p->bulk_done, data + i, n);
            p->bulk_done += n;
            i += n;
            if (p->bulk_done == p->bulk_len) {
                if (p->storing)
                    p->argv[p->argc - 1].data[p->bulk_len] = '\0';
                /* Like Redis, the request runs only once its last line end has arrived. */
                p->expected--;
                p->skip = 2;
                p->after_skip = p->expected == 0 ? RESP_START : RESP_BULK_HEADER;
                p->state = RESP_SKIP;
            }
            break;
        }
        case RESP_INLINE: {
            size_t n = 0;
            while (i + n < len && (p->nul_seen || data[i + n] != '\n')) {
                p->nul_seen |= data[i + n] == '\0';
                n++;
            }
            bool nl = i + n < len;
            if (p->inline_len + n > REDIS_MAX_INLINE) {
                *result = protocol_error(p, "Protocol error: too big inline request");
                return i;
            }
            if (p->nul_seen) {
                /* Counted, not kept: this line can only end in an error. */
                p->inline_len += n;
                i += n;
                break;
            }
            if (!inline_append(p, data + i, n)) {
                /* Without room for the line, the request cannot be read. */
                *result = RESP_TOO_BIG;
                return i;
            }
            i += n;
            if (nl) {
                i++;
                *result = end_inline(p);
                return i;
            }
            break;
        }
        }
    }
    *result = RESP_MORE;
    return i;
}
