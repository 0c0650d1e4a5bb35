/*
 * The root task's heap: a bump allocator over a static array with one free
 * list per power-of-two size class, so that freed blocks are reused without
 * ever being split or merged.  Main thread only (root.h).
 */
#include <root.h>

/*
 * Sized for the Redis server (docs/network.md): each of redis-benchmark's 50
 * connections takes a 32 KiB block (its 16 KiB reply buffer rounds up), and
 * the keys and values come on top.  Its 1024 frames are root CNode slots.
 */
#define HEAP_SIZE   (4 * 1024 * 1024)
#define MIN_CLASS   4       /* 16 bytes */
#define MAX_CLASS   17      /* 128 KiB */

/*
 * The header is 16 bytes on every port (two words, padded on 32-bit ones by
 * the alignment), so what follows it keeps the heap's 16-byte alignment.
 */
struct block {
    _Alignas(16) word_t class;  /* size class of the block */
    struct block *next;     /* free list link while free */
};

static _Alignas(16) char heap[HEAP_SIZE];
static word_t heap_used;
static struct block *free_lists[MAX_CLASS + 1];

static word_t class_of(size_t size)
{
    word_t c = MIN_CLASS;
    while (((word_t)1 << c) < size + sizeof(struct block))
        c++;
    return c;
}

void *malloc(size_t size)
{
    word_t c = class_of(size);
    if (c > MAX_CLASS)
        return NULL;
    struct block *b = free_lists[c];
    if (b) {
        free_lists[c] = b->next;
    } else {
        word_t bytes = (word_t)1 << c;
        if (heap_used + bytes > HEAP_SIZE)
            return NULL;
        b = (struct block *)(heap + heap_used);
        heap_used += bytes;
        b->class = c;
    }
    _Static_assert(sizeof(struct block) == 16, "block header is 16 bytes");
    return b + 1;
}

void *calloc(size_t n, size_t size)
{
    void *p = malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void free(void *p)
{
    if (!p)
        return;
    struct block *b = (struct block *)p - 1;
    b->next = free_lists[b->class];
    free_lists[b->class] = b;
}
