/*
 * Variant `rtm`: per-object locks do nothing, so struct object_lock holds
 * only a placeholder byte (C11 forbids empty structs).  Included by
 * lock/lock.h via -Ilock/variant/rtm.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#define LOCK_VARIANT_RTM 1

struct object_lock {
    char unused;
};

#endif
