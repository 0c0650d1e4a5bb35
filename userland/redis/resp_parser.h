/*
 * The incremental RESP2 request parser.  Bytes may arrive split anywhere and
 * several requests may arrive together; the parser keeps its place between
 * calls.  A request is either a multibulk array of bulk strings ("*2\r\n$3\r\n
 * GET\r\n$1\r\nk\r\n") or an inline line ("GET k\r\n") split as Redis's
 * sdssplitargs() splits it, quotes and escapes included.
 */
#ifndef REDIS_RESP_PARSER_H
#define REDIS_RESP_PARSER_H

#include "redis_env.h"

#define RESP_HEADER_KEEP 32     /* header characters kept: longer ones are never valid numbers */
#define RESP_INLINE_KEEP 1024   /* an inline buffer up to this size is kept between requests */

struct resp_arg {
    char *data;         /* NUL-terminated copy (the NUL is not counted in len) */
    size_t len;
};

enum resp_state {
    RESP_START,         /* between requests */
    RESP_MULTIBULK,     /* reading the "*<count>" line */
    RESP_BULK_HEADER,   /* reading a "$<length>" line */
    RESP_BULK_DATA,     /* reading an argument's bytes */
    RESP_SKIP,          /* skipping the line end after a header or an argument */
    RESP_INLINE,        /* reading an inline line up to '\n' */
};

enum resp_result {
    RESP_MORE,          /* every byte consumed, no request complete */
    RESP_REQUEST,       /* a request is complete: argv/argc (argc may be 0: ignore it) */
    RESP_OOM,           /* a request is complete but memory ran out storing it: reject it */
    RESP_PROTOCOL,      /* a protocol error: error holds Redis's message; close after replying */
    RESP_TOO_BIG,       /* the request exceeds REDIS_MAX_REQUEST: close without a reply */
};

struct resp_parser {
    enum resp_state state;
    enum resp_state after_skip;
    size_t skip;                    /* bytes left to skip */
    char header[RESP_HEADER_KEEP];
    size_t header_len;              /* characters seen, kept or not */
    char *inline_buf;               /* grows up to REDIS_MAX_INLINE */
    size_t inline_len, inline_cap;
    struct resp_arg *argv;
    size_t argc, expected;          /* arguments stored / announced */
    size_t bulk_len, bulk_done;
    size_t request_bytes;
    bool nul_seen;                  /* a NUL in the current header or inline line */
    bool storing;                   /* the argument being read has its allocation */
    bool oom;                       /* an allocation failed: discard the rest of this request */
    bool too_many;                  /* an inline line with more than REDIS_MAX_ARGS arguments */
    const char *error;              /* with RESP_PROTOCOL */
    char error_buf[64];
};

void resp_parser_init(struct resp_parser *p);
void resp_parser_free(struct resp_parser *p);

/* Consume bytes from data[0..len) until a request completes or an error;
 * returns how many were consumed. */
size_t resp_parse(struct resp_parser *p, const char *data, size_t len, enum resp_result *result);

/* Free the completed request's arguments before parsing on. */
void resp_request_done(struct resp_parser *p);

#endif
