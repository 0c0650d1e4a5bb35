/*
 * How layout=processes' lwIP stack process and Redis server process talk
 * (docs/network.md): one large frame, mapped at the same address in the root
 * task's space and in both processes', and an endpoint.  The stack Calls
 * the server once per connection event of redis_link.h: the operation in
 * the label, the connection's id in MR0 and the request's length in MR1,
 * the request bytes in request[].  The reply carries the result in MR0 and
 * struct link_answer's value, taken and pending in MR1 to MR3, the reply
 * bytes in reply[].  Before each LINK_INPUT the stack writes its figures
 * into stack (stack_figures.h), for the server's INFO.
 */
#ifndef NET_SERVER_LINK_H
#define NET_SERVER_LINK_H

#include <abi/types.h>
#include <redis_link.h>
#include "stack_figures.h"

struct server_link {
    cptr_t endpoint;        /* the server receives on it, the stack Calls it */
    cptr_t driver;          /* the driver's notification, to tell it the server's state changed */
    word_t state;           /* channel_state (net_channel.h), set by the server */
    word_t heap_vaddr;      /* the server's heap, mapped in its space only */
    word_t heap_size;
    word_t reply_max;       /* bytes reply[] holds: the rest of the frame */
    struct stack_figures stack; /* the stack's, as of the request being served */
    uint8_t request[LINK_REQUEST_MAX];
    uint8_t reply[];
};

#endif
