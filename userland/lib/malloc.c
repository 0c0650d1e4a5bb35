/*
 * The root task's heap: bump allocation over a static region in the image,
 * with one free list per power-of-two size class, so that freed blocks are
 * reused without ever being split or merged.  Main thread only (root.h).
 *
 * The heap never grows: a test that counts free memory or slots around a
 * call to malloc sees nothing change behind its back.  A space with a
 * private copy of the root task's globals (thread.h, private_data) has its
 * own copy of this heap's state and region.
 */
#include <root.h>

#define STATIC_HEAP_SIZE (256 * 1024)
#define MIN_CLASS   4       /* 16 bytes */
#define MAX_CLASS   18      /* 256 KiB: the whole region */

/*
 * The header is 16 bytes on every port (two words, padded on 32-bit ones by
 * the alignment), so what follows it keeps the heap's 16-byte alignment.
 */
struct block {
    _Alignas(16) word_t class;  /* size class of the block */
    struct block *next;     /* free list link while free */
};

static _Alignas(16) char static_heap[STATIC_HEAP_SIZE];
static word_t heap_used;    /* bytes of static_heap that bump allocation has handed out */
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
        if (heap_used + bytes > STATIC_HEAP_SIZE)
            return NULL;
        b = (struct block *)(static_heap + heap_used);
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
