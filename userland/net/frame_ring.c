/*
 * The single-producer, single-consumer frame ring (frame_ring.h).  Each index
 * is written by one side only; the release store of an index publishes the
 * slot it covers and the acquire load on the other side sees it, on every
 * port (x86's ordering and the ARM's barriers both come from the atomics).
 */
#include <libc.h>
#include "frame_ring.h"

bool frame_ring_put(struct frame_ring *r, const void *frame, size_t len)
{
    word_t head = r->head;
    if (len == 0 || len > NIC_FRAME_MAX ||
        head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) == FRAME_RING_SLOTS)
        return false;
    struct frame_ring_slot *s = &r->slots[head % FRAME_RING_SLOTS];
    s->len = (uint16_t)len;
    memcpy(s->data, frame, len);
    __atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
    return true;
}

size_t frame_ring_get(struct frame_ring *r, void *buf, size_t size)
{
    for (;;) {
        word_t tail = r->tail;
        if (tail == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE))
            return 0;
        const struct frame_ring_slot *s = &r->slots[tail % FRAME_RING_SLOTS];
        size_t len = s->len;
        bool fits = len <= size;
        if (fits)
            memcpy(buf, s->data, len);
        __atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
        if (fits)
            return len;
    }
}
