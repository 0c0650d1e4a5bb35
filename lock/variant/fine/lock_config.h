/*
 * Variant `fine`: every TCB, endpoint, notification and scheduler queue
 * carries a ticket lock (lock/ticket.h).  Included by lock/lock.h via
 * -Ilock/variant/fine.
 */
#ifndef LOCK_CONFIG_H
#define LOCK_CONFIG_H

#include "ticket.h"

#define LOCK_VARIANT_FINE 1

struct object_lock {
    struct ticket_lock ticket;
};

#endif
