/*
 * Kernel objects for the root task: retype from untyped memory, arenas
 * that a revoke frees in one go, and mapping frames with the page tables
 * they need.  Main thread only (root.h).
 */
#include <root.h>

const struct bootinfo *const bootinfo = (const struct bootinfo *)BOOTINFO_VADDR;

static cptr_t arena_untyped;    /* current arena, or 0: the boot untypeds */
static word_t boot_cursor;      /* index into bootinfo->untyped_list of the next one to try */

static word_t retype_into(cptr_t ut, word_t type, word_t size_bits, cptr_t slot)
{
    /* Depth 0: the destination CNode is the root CNode itself; the slot is the offset. */
    return untyped_retype(ut, type, size_bits, ROOT_SLOT_CNODE, 0, 0, slot, 1);
}

word_t obj_alloc(word_t type, word_t size_bits, cptr_t *slot)
{
    cptr_t s = slot_alloc();
    if (!s)
        return E_NOT_ENOUGH_MEMORY;
    word_t st;
    if (arena_untyped) {
        st = retype_into(arena_untyped, type, size_bits, s);
    } else {
        /* Try each RAM untyped from the cursor on; move the cursor past full ones. */
        word_t n = bootinfo->untyped.end - bootinfo->untyped.start;
        st = E_NOT_ENOUGH_MEMORY;
        for (; boot_cursor < n; boot_cursor++) {
            if (bootinfo->untyped_list[boot_cursor].is_device)
                continue;
            if (bootinfo->untyped_list[boot_cursor].size_bits < size_bits)
                continue;
            st = retype_into(bootinfo->untyped.start + boot_cursor, type, size_bits, s);
            if (st != E_NOT_ENOUGH_MEMORY)
                break;
        }
        if (st == E_NOT_ENOUGH_MEMORY) {
            /* Smaller requests may still fit the earlier ones: one more pass. */
            for (word_t i = 0; i < n && st == E_NOT_ENOUGH_MEMORY; i++)
                if (!bootinfo->untyped_list[i].is_device)
                    st = retype_into(bootinfo->untyped.start + i, type, size_bits, s);
        }
    }
    if (st != E_OK) {
        slot_free(s);
        return st;
    }
    *slot = s;
    return E_OK;
}

cptr_t obj_new(word_t type, word_t size_bits)
{
    cptr_t s;
    return obj_alloc(type, size_bits, &s) == E_OK ? s : 0;
}

word_t arena_begin(struct arena *a, word_t size_bits)
{
    slot_checkpoint(&a->mark);
    a->previous = arena_untyped;
    word_t st = obj_alloc(OBJ_UNTYPED, size_bits, &a->untyped);
    if (st == E_OK)
        arena_untyped = a->untyped;
    return st;
}

/* Revoke deletes every object made from the arena; then the slots the arena's user took are emptied. */
void arena_end(struct arena *a)
{
    arena_untyped = a->previous;
    cnode_revoke(ROOT_SLOT_CNODE, a->untyped, ROOT_DEPTH);
    slot_restore(&a->mark);
}

/* Fresh addresses start well above the image, the boot info page and the IPC buffer. */
static word_t vaddr_next = 0x20000000UL;

word_t vaddr_alloc(word_t size, word_t align)
{
    if (align < PAGE_SIZE)
        align = PAGE_SIZE;
    word_t v = (vaddr_next + align - 1) & ~(align - 1);
    /* A guard page after each allocation catches overruns. */
    vaddr_next = v + ((size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1)) + PAGE_SIZE;
    return v;
}

/*
 * Frame Map fails with E_FAILED_LOOKUP while a page table on the way is
 * missing; each retry installs one more level.  Four levels at most on any
 * port.
 */
word_t map_frame(cptr_t frame, cptr_t vspace, word_t vaddr, word_t rights, word_t attrs)
{
    word_t st = E_OK;
    for (int tries = 0; tries < 5; tries++) {
        st = frame_map(frame, vspace, vaddr, rights, attrs);
        if (st != E_FAILED_LOOKUP)
            return st;
        cptr_t pt;
        word_t pst = obj_alloc(OBJ_PAGE_TABLE, 0, &pt);
        if (pst != E_OK)
            return pst;
        pst = page_table_map(pt, vspace, vaddr, VM_DEFAULT);
        if (pst != E_OK)
            return pst;
    }
    return st;
}

void *frame_new_mapped(cptr_t *frame_slot)
{
    cptr_t f;
    if (obj_alloc(OBJ_FRAME, 0, &f) != E_OK)
        return NULL;
    word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    if (map_frame(f, ROOT_SLOT_VSPACE, v, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT) != E_OK)
        return NULL;
    if (frame_slot)
        *frame_slot = f;
    return (void *)v;
}

/* ---- the command line: words key=value separated by spaces */

static const char *find_arg(const char *key)
{
    const char *p = bootinfo->cmdline;
    size_t klen = strlen(key);
    while (*p) {
        while (*p == ' ')
            p++;
        if (!strncmp(p, key, klen) && p[klen] == '=')
            return p + klen + 1;
        while (*p && *p != ' ')
            p++;
    }
    return NULL;
}

word_t arg_word(const char *key, word_t dflt)
{
    const char *v = find_arg(key);
    if (!v || *v == ' ' || !*v)
        return dflt;
    return strtoul(v, NULL, 0);
}

bool arg_str(const char *key, char *buf, size_t size)
{
    const char *v = find_arg(key);
    if (!v || !size)
        return false;
    size_t i = 0;
    for (; v[i] && v[i] != ' ' && i + 1 < size; i++)
        buf[i] = v[i];
    buf[i] = 0;
    return true;
}
