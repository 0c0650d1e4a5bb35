/* Free slots of the root CNode: a bitmap over bootinfo->empty.  Main thread only. */
#include <root.h>
#include <invoke.h>

#define NSLOTS (1u << ROOT_CNODE_BITS)

static uint8_t used[NSLOTS / 8];
static bool initialised;
static word_t hint;

static bool is_used(word_t s)  { return used[s / 8] >> (s % 8) & 1; }
static void set_used(word_t s) { used[s / 8] |= 1u << (s % 8); }
static void clr_used(word_t s) { used[s / 8] &= ~(1u << (s % 8)); }

/* Every slot outside bootinfo->empty is taken from the start. */
static void init(void)
{
    memset(used, 0xff, sizeof(used));
    for (word_t s = bootinfo->empty.start; s < bootinfo->empty.end && s < NSLOTS; s++)
        clr_used(s);
    hint = bootinfo->empty.start;
    initialised = true;
}

cptr_t slot_alloc(void)
{
    if (!initialised)
        init();
    for (word_t n = 0; n < NSLOTS; n++) {
        word_t s = (hint + n) % NSLOTS;
        if (!is_used(s)) {
            set_used(s);
            hint = s + 1;
            return s;
        }
    }
    return 0;
}

void slot_free(cptr_t slot)
{
    if (slot && slot < NSLOTS)
        clr_used(slot);
}

void slot_drop(cptr_t *slot)
{
    if (!*slot)
        return;
    cnode_delete(ROOT_SLOT_CNODE, *slot, ROOT_DEPTH);
    slot_free(*slot);
    *slot = 0;
}

word_t slots_free_count(void)
{
    if (!initialised)
        init();
    word_t n = 0;
    for (word_t s = 0; s < NSLOTS; s++)
        n += !is_used(s);
    return n;
}

void slot_checkpoint(struct slot_mark *m)
{
    if (!initialised)
        init();
    memcpy(m->used, used, sizeof(used));
}

void slot_restore(const struct slot_mark *m)
{
    for (word_t s = 0; s < NSLOTS; s++) {
        if (is_used(s) && !(m->used[s / 8] >> (s % 8) & 1)) {
            cnode_delete(ROOT_SLOT_CNODE, s, ROOT_DEPTH);
            clr_used(s);
        }
    }
}
