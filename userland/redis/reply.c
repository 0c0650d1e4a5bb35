/*
 * RESP2 reply encoding into the connection's bounded buffer.
 */
#include "reply.h"
#include "number.h"
#include "score.h"

void reply_flush(struct reply *r)
{
    if (r->used) {
        r->out(r->ctx, r->buf, r->used);
        r->used = 0;
    }
}

void reply_raw(struct reply *r, const void *data, size_t len)
{
    if (len > sizeof(r->buf) - r->used) {
        reply_flush(r);
        if (len > sizeof(r->buf)) {
            r->out(r->ctx, data, len);
            return;
        }
    }
    memcpy(r->buf + r->used, data, len);
    r->used += len;
}

static void reply_line(struct reply *r, char type, const char *text, size_t len)
{
    reply_raw(r, &type, 1);
    reply_raw(r, text, len);
    reply_raw(r, "\r\n", 2);
}

void reply_status(struct reply *r, const char *status)
{
    reply_line(r, '+', status, strlen(status));
}

void reply_error(struct reply *r, const char *message)
{
    reply_line(r, '-', message, strlen(message));
}

static void reply_prefixed_number(struct reply *r, char type, int64_t v)
{
    char num[NUMBER_MAX_CHARS];
    reply_line(r, type, num, number_format_i64(num, v));
}

void reply_integer(struct reply *r, int64_t v)
{
    reply_prefixed_number(r, ':', v);
}

void reply_bulk(struct reply *r, const void *data, size_t len)
{
    reply_prefixed_number(r, '$', (int64_t)len);
    reply_raw(r, data, len);
    reply_raw(r, "\r\n", 2);
}

void reply_bulk_cstr(struct reply *r, const char *s)
{
    reply_bulk(r, s, strlen(s));
}

void reply_bulk_integer(struct reply *r, int64_t v)
{
    char num[NUMBER_MAX_CHARS];
    reply_bulk(r, num, number_format_i64(num, v));
}

void reply_bulk_score(struct reply *r, uint64_t score_bits)
{
    char text[SCORE_MAX_CHARS];
    reply_bulk(r, text, score_format(text, score_bits));
}

void reply_nil(struct reply *r)
{
    reply_raw(r, "$-1\r\n", 5);
}

void reply_nil_array(struct reply *r)
{
    reply_raw(r, "*-1\r\n", 5);
}

void reply_array(struct reply *r, size_t count)
{
    reply_prefixed_number(r, '*', (int64_t)count);
}

void error_text_init(struct error_text *e, const char *prefix)
{
    e->len = 0;
    error_text_cstr(e, prefix);
}

void error_text_add(struct error_text *e, const char *s, size_t len)
{
    for (size_t i = 0; i < len && e->len < sizeof(e->buf); i++)
        e->buf[e->len++] = s[i] == '\r' || s[i] == '\n' ? ' ' : s[i];
}

void error_text_cstr(struct error_text *e, const char *s)
{
    error_text_add(e, s, strlen(s));
}

void reply_error_text(struct reply *r, struct error_text *e)
{
    reply_line(r, '-', e->buf, e->len);
}
