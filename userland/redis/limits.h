/*
 * The server's bounds.  Each is checked where input arrives, so no request
 * can make the server allocate more than these allow (docs/redis.md).
 */
#ifndef REDIS_LIMITS_H
#define REDIS_LIMITS_H

#define REDIS_MAX_ARGS          1024            /* arguments of one command */
#define REDIS_MAX_BULK          (1024 * 1024)   /* bytes of one argument */
#define REDIS_MAX_REQUEST       (4 * 1024 * 1024) /* bytes of one command's arguments together */
#define REDIS_MAX_INLINE        (64 * 1024)     /* an inline command line, as Redis's PROTO_INLINE_MAX_SIZE */
#define REDIS_REPLY_BUFFER      4096            /* reply bytes gathered before they are handed out: a conn fits the guest heap's 8 KiB blocks */
#define REDIS_MAX_CLIENT_NAME   128

#endif
