/*
 * A queue of bytes in heap chunks (lwip_test_out_queue.h), for the lwIP
 * tests' TCP server.  A chunk is taken from the heap whole and filled in
 * order; bytes leave from its front.  Chunks are
 * sized for the guest's allocator (userland/lib/malloc.c), which hands out
 * power-of-two blocks with a 16-byte header: a chunk's block is the smallest
 * power of two from 1 KiB to 64 KiB whose room holds the bytes pushed, so a
 * small reply does not take 64 KiB and a large one wastes at most one
 * chunk's tail, where one block for a whole 4 MiB reply would take 8 MiB.
 */
#include <root.h>
#include "lwip_test_out_queue.h"

#define CHUNK_BLOCK_MIN  1024
#define CHUNK_BLOCK_MAX  (64 * 1024)
/* The guest allocator's block header, which a chunk leaves room for. */
#define HEAP_HEADER      16

struct out_chunk {
    struct out_chunk *next;
    size_t start;               /* the first byte not yet dropped */
    size_t end;                 /* the first byte not yet written */
    size_t room;                /* bytes data[] holds */
    unsigned char data[];
};

static struct out_chunk *chunk_new(size_t len)
{
    size_t block = CHUNK_BLOCK_MIN;
    while (block < CHUNK_BLOCK_MAX && block - HEAP_HEADER - sizeof(struct out_chunk) < len)
        block *= 2;
    struct out_chunk *k = malloc(block - HEAP_HEADER);
    if (!k)
        return NULL;
    k->next = NULL;
    k->start = 0;
    k->end = 0;
    k->room = block - HEAP_HEADER - sizeof(struct out_chunk);
    return k;
}

bool out_queue_push(struct out_queue *q, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len) {
        struct out_chunk *k = q->tail;
        if (!k || k->end == k->room) {
            if (!(k = chunk_new(len)))
                return false;
            if (q->tail)
                q->tail->next = k;
            else
                q->head = k;
            q->tail = k;
        }
        size_t n = k->room - k->end < len ? k->room - k->end : len;
        memcpy(k->data + k->end, p, n);
        k->end += n;
        q->bytes += n;
        p += n;
        len -= n;
    }
    return true;
}

const void *out_queue_peek(const struct out_queue *q, size_t *len)
{
    if (!q->head) {
        *len = 0;
        return NULL;
    }
    *len = q->head->end - q->head->start;
    return q->head->data + q->head->start;
}

void out_queue_drop(struct out_queue *q, size_t n)
{
    struct out_chunk *k = q->head;
    k->start += n;
    q->bytes -= n;
    if (k->start < k->end)
        return;
    q->head = k->next;
    if (!q->head)
        q->tail = NULL;
    free(k);
}

void out_queue_clear(struct out_queue *q)
{
    while (q->head) {
        struct out_chunk *k = q->head;
        q->head = k->next;
        free(k);
    }
    q->tail = NULL;
    q->bytes = 0;
}
