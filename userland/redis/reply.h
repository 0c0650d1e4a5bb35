/*
 * The reply writer: RESP2 replies gathered in a bounded buffer and handed
 * to the connection's output function when it fills and when a batch of
 * input has been handled.  Large bulk strings go out from where they lie,
 * without a copy.
 */
#ifndef REDIS_REPLY_H
#define REDIS_REPLY_H

#include "limits.h"
#include "redis_env.h"

struct reply {
    void (*out)(void *ctx, const void *buf, size_t len);
    void *ctx;
    size_t used;
    char buf[REDIS_REPLY_BUFFER];
};

void reply_flush(struct reply *r);
void reply_raw(struct reply *r, const void *data, size_t len);
void reply_status(struct reply *r, const char *status);     /* +status */
void reply_error(struct reply *r, const char *message);     /* -message, "ERR ..." etc. */
void reply_integer(struct reply *r, int64_t v);             /* :v */
void reply_bulk(struct reply *r, const void *data, size_t len);
void reply_bulk_cstr(struct reply *r, const char *s);
void reply_bulk_integer(struct reply *r, int64_t v);
void reply_bulk_score(struct reply *r, uint64_t score_bits);
void reply_nil(struct reply *r);                            /* $-1 */
void reply_nil_array(struct reply *r);                      /* *-1 */
void reply_array(struct reply *r, size_t count);            /* *count, then the elements */

/* An error text built in pieces, as Redis's addReplyErrorFormat does:
 * CR and LF become spaces so the reply stays one line. */
struct error_text {
    char buf[512];
    size_t len;
};
void error_text_init(struct error_text *e, const char *prefix);
void error_text_add(struct error_text *e, const char *s, size_t len);
void error_text_cstr(struct error_text *e, const char *s);
void reply_error_text(struct reply *r, struct error_text *e);

/* Redis's shared error replies. */
#define ERR_WRONGTYPE   "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOT_INTEGER "ERR value is not an integer or out of range"
#define ERR_SYNTAX      "ERR syntax error"
#define ERR_OOM         "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_NOT_FLOAT   "ERR value is not a valid float"

#endif
