/*
 * Bytes waiting to be sent, kept in heap chunks (lwip_test_out_queue.c): the
 * part of a reply that the consumer cannot take yet.  The lwIP tests' TCP
 * server (lwip_test_server.c) keeps what TCP's send buffer has no room for in
 * one.  A reply of any size then costs heap, not room in a fixed buffer such
 * as lwIP's 256 KiB heap, and leaves the queue piece by piece as the consumer
 * takes it.
 *
 * Memory comes from malloc/free.  A queue is used by one thread at a time.
 */
#ifndef LWIP_TEST_OUT_QUEUE_H
#define LWIP_TEST_OUT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct out_chunk;

struct out_queue {
    struct out_chunk *head;     /* the oldest bytes; NULL when empty */
    struct out_chunk *tail;
    size_t bytes;               /* bytes queued */
};

/* Append len bytes.  False when memory ran out: a prefix of them may be queued, and the
 * stream is broken, so the caller ends the connection (out_queue_clear). */
bool out_queue_push(struct out_queue *q, const void *data, size_t len);

/* The oldest queued bytes that are contiguous: their address, and their count in *len
 * (0 and NULL when the queue is empty). */
const void *out_queue_peek(const struct out_queue *q, size_t *len);

/* Drop the oldest n bytes; n is at most what out_queue_peek() last gave. */
void out_queue_drop(struct out_queue *q, size_t n);

/* Free every chunk. */
void out_queue_clear(struct out_queue *q);

#endif
