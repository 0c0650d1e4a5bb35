/*
 * One lwIP + Redis server instance of the per-core layout (docs/network.md):
 * the entry of its thread, in a space of its own with a private copy of the
 * root task's globals, so that its lwIP, its malloc and its server state are
 * its own.  arg is its channel (net_channel.h), which the root task filled.
 */
#ifndef NET_REDIS_INSTANCE_H
#define NET_REDIS_INSTANCE_H

void redis_instance_main(void *channel);

#endif
