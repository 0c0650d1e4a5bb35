/*
 * Memory: mmap, munmap and mremap over the heap the root task mapped for the
 * process (posix_start.h), page by page.  A bitmap at the heap's start says
 * which pages are taken; a request takes the smallest run of free pages that
 * fits.  The heap is one range of addresses, so a large request can fail
 * while enough pages are free in pieces: Redis's maxmemory is set well below
 * the heap (half, userland/redis/redis_layouts.c) so that its own -OOM comes
 * first.  Pages come back zeroed, as Linux's anonymous memory does: the heap
 * starts zeroed, so only pages below the highest ever handed out need
 * clearing.
 *
 * brk never moves: musl's malloc then takes all its memory from mmap, and
 * one allocator owns the heap.  There is no protection to change (mprotect
 * succeeds and does nothing): the whole heap is read-write.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "personality.h"

#define PAGE 4096UL

static struct {
    bool ready;
    unsigned long base;         /* the first page handed out */
    unsigned long pages;        /* pages that can be handed out */
    unsigned long *taken;       /* one bit per page */
    unsigned long high;         /* pages [0, high) may hold old data */
    unsigned long brk;
} heap;

#define BITS (8 * sizeof(unsigned long))

static bool page_taken(unsigned long p)  { return heap.taken[p / BITS] >> (p % BITS) & 1; }
static void page_set(unsigned long p)    { heap.taken[p / BITS] |= 1UL << (p % BITS); }
static void page_clear(unsigned long p)  { heap.taken[p / BITS] &= ~(1UL << (p % BITS)); }

static void heap_init(void)
{
    const struct posix_start *s = posix_start_page;
    unsigned long total = s->heap_size / PAGE;
    unsigned long map_pages = (total / BITS + 1) * sizeof(unsigned long) / PAGE + 1;
    heap.taken = (unsigned long *)s->heap_vaddr;
    heap.base = s->heap_vaddr + map_pages * PAGE;
    heap.pages = total > map_pages ? total - map_pages : 0;
    heap.brk = s->heap_vaddr;
    heap.ready = true;
}

static void take(unsigned long first, unsigned long n)
{
    for (unsigned long p = first; p < first + n; p++)
        page_set(p);
    unsigned long dirty_end = first + n < heap.high ? first + n : heap.high;
    if (first < dirty_end)
        memset((void *)(heap.base + first * PAGE), 0, (dirty_end - first) * PAGE);
    if (first + n > heap.high)
        heap.high = first + n;
}

/*
 * The smallest run of free pages that holds n (the first of equals), or
 * heap.pages when none is long enough: best fit keeps the long runs whole
 * for the large requests that need them (Redis's growing buffers).
 */
static unsigned long find_run(unsigned long n)
{
    unsigned long best = heap.pages, best_len = ~0UL, run = 0;
    for (unsigned long p = 0; p <= heap.pages; p++) {
        bool free_page = p < heap.pages && !page_taken(p);
        if (free_page) {
            run++;
            continue;
        }
        if (run >= n && run < best_len) {
            best = p - run;
            best_len = run;
            if (run == n)
                break;
        }
        run = 0;
        if (p < heap.pages && !(p % BITS) && heap.taken[p / BITS] == ~0UL)
            p += BITS - 1;
    }
    return best;
}

static bool in_heap(unsigned long addr, unsigned long len)
{
    return addr >= heap.base && addr - heap.base <= heap.pages * PAGE &&
           len <= heap.pages * PAGE - (addr - heap.base);
}

long px_brk(unsigned long addr)
{
    (void)addr;
    px_lock();
    if (!heap.ready)
        heap_init();
    long b = (long)heap.brk;
    px_unlock();
    return b;
}

long px_mmap(unsigned long addr, size_t len, int prot, int flags, int fd, off_t off)
{
    (void)prot;
    if (!(flags & MAP_ANONYMOUS) || fd != -1)
        return -ENODEV;     /* no files to map */
    if (!len || off)
        return -EINVAL;
    unsigned long n = (len + PAGE - 1) / PAGE;
    long result;
    px_reap_exited();
    px_lock();
    if (!heap.ready)
        heap_init();
    if (flags & MAP_FIXED) {
        if (addr % PAGE || !in_heap(addr, n * PAGE)) {
            result = -ENOMEM;
        } else {
            unsigned long first = (addr - heap.base) / PAGE;
            for (unsigned long p = first; p < first + n; p++)
                page_clear(p);
            take(first, n);
            result = (long)addr;
        }
    } else {
        unsigned long first = find_run(n);
        if (first == heap.pages) {
            result = -ENOMEM;
        } else {
            take(first, n);
            result = (long)(heap.base + first * PAGE);
        }
    }
    px_unlock();
    return result;
}

long px_munmap(unsigned long addr, size_t len)
{
    if (addr % PAGE || !len)
        return -EINVAL;
    unsigned long n = (len + PAGE - 1) / PAGE;
    if (px_defer_own_stack(addr, n * PAGE))
        return 0;
    px_lock();
    if (heap.ready && in_heap(addr, n * PAGE)) {
        unsigned long first = (addr - heap.base) / PAGE;
        for (unsigned long p = first; p < first + n; p++)
            page_clear(p);
    }
    px_unlock();
    return 0;
}

long px_mremap(unsigned long old, size_t old_len, size_t new_len, int flags, unsigned long new_addr)
{
    (void)new_addr;
    if (old % PAGE || !new_len || (flags & MREMAP_FIXED))
        return -EINVAL;
    unsigned long old_n = (old_len + PAGE - 1) / PAGE, new_n = (new_len + PAGE - 1) / PAGE;
    px_lock();
    if (!heap.ready || !in_heap(old, old_n * PAGE)) {
        px_unlock();
        return -EFAULT;
    }
    unsigned long first = (old - heap.base) / PAGE;
    if (new_n <= old_n) {
        for (unsigned long p = first + new_n; p < first + old_n; p++)
            page_clear(p);
        px_unlock();
        return (long)old;
    }
    unsigned long p = first + old_n;
    while (p < first + new_n && p < heap.pages && !page_taken(p))
        p++;
    if (p == first + new_n) {
        take(first + old_n, new_n - old_n);
        px_unlock();
        return (long)old;
    }
    if (!(flags & MREMAP_MAYMOVE)) {
        px_unlock();
        return -ENOMEM;
    }
    unsigned long to = find_run(new_n);
    if (to == heap.pages) {
        px_unlock();
        return -ENOMEM;
    }
    take(to, new_n);
    memcpy((void *)(heap.base + to * PAGE), (void *)old, old_n * PAGE);
    for (unsigned long q = first; q < first + old_n; q++)
        page_clear(q);
    px_unlock();
    return (long)(heap.base + to * PAGE);
}
