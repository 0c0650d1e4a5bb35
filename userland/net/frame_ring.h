/*
 * A ring of Ethernet frames in memory shared by two spaces (docs/network.md):
 * one producer and one consumer, each on its own thread, possibly on
 * different cores.  The NIC driver and a stack instance have one ring each
 * way.  Neither side ever blocks on the other: a full ring refuses the frame
 * (the caller drops it, as a busy wire would, and TCP sends it again), and
 * who to wake is the caller's business (notifications).
 */
#ifndef NET_FRAME_RING_H
#define NET_FRAME_RING_H

#include <nic.h>

/*
 * Frames a ring holds: the driver drains the NIC's receive ring (512,
 * e1000.c) in one go while the instance may not run, and a full ring here
 * drops the rest.  With 64, the handshakes and first requests
 * of redis-benchmark's 50 connections opened at once (150 frames) lost
 * requests that slirp resent a second later.  Two rings of 256 take 776 KB
 * of the channel's large frame.
 */
#define FRAME_RING_SLOTS 256

struct frame_ring_slot {
    uint16_t len;
    uint8_t data[NIC_FRAME_MAX];
};

struct frame_ring {
    word_t head;    /* frames put so far; written by the producer only */
    word_t tail;    /* frames taken so far; written by the consumer only */
    struct frame_ring_slot slots[FRAME_RING_SLOTS];
};

/* Copy a frame in (len at most NIC_FRAME_MAX); false when the ring is full. */
bool frame_ring_put(struct frame_ring *r, const void *frame, size_t len);

/* Copy the oldest frame out and return its length; 0 when the ring is empty. */
size_t frame_ring_get(struct frame_ring *r, void *buf, size_t size);

#endif
