/*
 * The Redis server as a process of its own (layout=processes,
 * docs/network.md): the entry of its thread, in a space with a private copy
 * of the root task's globals and a heap of its own.  arg is its link
 * (server_link.h), which the root task filled.  Like an lwIP instance
 * (net_channel.h) it allocates no kernel object and no slot.
 */
#ifndef NET_REDIS_SERVER_PROCESS_H
#define NET_REDIS_SERVER_PROCESS_H

void redis_server_process_main(void *link);

#endif
