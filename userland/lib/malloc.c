/*
 * The root task's heap: bump allocation over regions, with one free list per
 * power-of-two size class, so that freed blocks are reused without ever being
 * split or merged.  Main thread only (root.h).
 *
 * Every program starts with a small static region in the image.  A program
 * that needs more (the Redis server: docs/network.md) adds a region of large
 * frames with malloc_extend() when it starts.  The heap never grows on its
 * own: a test that counts free memory or slots around a call to malloc sees
 * nothing change behind its back.  A space with a private copy of the
 * root task's globals (thread.h, private_data) has its own heap state: the
 * root task maps memory into that space and the space's thread hands it to
 * malloc_add_region(), allocating nothing itself.
 */
#include <root.h>
#include <invoke.h>
#include <arch_user.h>

#define STATIC_HEAP_SIZE (256 * 1024)
#define MIN_CLASS   4       /* 16 bytes */
#define MAX_CLASS   21      /* 2 MiB: a Redis argument of its largest size, 1 MiB, with its header */

/*
 * The header is 16 bytes on every port (two words, padded on 32-bit ones by
 * the alignment), so what follows it keeps the heap's 16-byte alignment.
 */
struct block {
    _Alignas(16) word_t class;  /* size class of the block */
    struct block *next;     /* free list link while free */
};

struct heap_region {
    char *base;
    word_t size;
    word_t used;
};

static _Alignas(16) char static_heap[STATIC_HEAP_SIZE];
/* Bump allocation uses the last region; earlier ones keep only their free lists. */
static struct heap_region regions[2] = { { static_heap, STATIC_HEAP_SIZE, 0 } };
static unsigned nregions = 1;
static struct block *free_lists[MAX_CLASS + 1];
/* Bytes of the blocks handed out and not freed, headers and rounding included. */
static word_t bytes_in_use;

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
        struct heap_region *r = &regions[nregions - 1];
        if (r->used + bytes > r->size)
            return NULL;
        b = (struct block *)(r->base + r->used);
        r->used += bytes;
        b->class = c;
    }
    bytes_in_use += (word_t)1 << c;
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
    bytes_in_use -= (word_t)1 << b->class;
    b->next = free_lists[b->class];
    free_lists[b->class] = b;
}

bool malloc_add_region(void *base, word_t size)
{
    if (nregions == ARRAY_SIZE(regions) || !size)
        return false;
    regions[nregions++] = (struct heap_region){ base, size, 0 };
    return true;
}

word_t malloc_extend(word_t bytes)
{
    if (nregions == ARRAY_SIZE(regions))
        return 0;
    word_t frames = (bytes + ARCH_LARGE_PAGE_SIZE - 1) / ARCH_LARGE_PAGE_SIZE;
    word_t base = vaddr_alloc(frames * ARCH_LARGE_PAGE_SIZE, ARCH_LARGE_PAGE_SIZE);
    word_t mapped = 0;
    while (mapped < frames) {
        cptr_t f;
        if (obj_alloc(OBJ_LARGE_FRAME, 0, &f) != E_OK)
            break;
        if (map_frame(f, ROOT_SLOT_VSPACE, base + mapped * ARCH_LARGE_PAGE_SIZE,
                      RIGHT_READ | RIGHT_WRITE, VM_DEFAULT) != E_OK) {
            slot_drop(&f);
            break;
        }
        mapped++;
    }
    return malloc_add_region((void *)base, mapped * ARCH_LARGE_PAGE_SIZE) ? mapped * ARCH_LARGE_PAGE_SIZE : 0;
}

void malloc_usage(struct heap_usage *u)
{
    *u = (struct heap_usage){ .in_use = bytes_in_use };
    for (unsigned i = 0; i < nregions; i++) {
        u->carved += regions[i].used;
        u->size += regions[i].size;
    }
}
