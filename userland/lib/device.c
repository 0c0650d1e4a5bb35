/*
 * Device memory: frames at a given physical address.  Retype places objects
 * at the next aligned offset of an untyped, so to reach an address inside a
 * large device untyped we split it in halves (two child untypeds, retyped
 * one after the other: the first lands at offset 0, the second at half the
 * size), keep the half that holds the address and delete the other, until
 * the child covers exactly the wanted region; that child is then retyped
 * into frames, which land in address order.
 */
#include <device.h>

#define PAGE_BITS 12
#define DEVICE_MAX_BITS 20      /* 256 frames */

/* The boot device untyped that holds [paddr, paddr + size), or 0. */
static cptr_t covering_untyped(word_t paddr, word_t size, word_t *base, unsigned *bits)
{
    word_t n = bootinfo->untyped.end - bootinfo->untyped.start;
    for (word_t i = 0; i < n; i++) {
        const struct untyped_desc *d = &bootinfo->untyped_list[i];
        word_t start = d->paddr, len = 1UL << d->size_bits;
        if (d->is_device && paddr >= start && size <= len && paddr - start <= len - size) {
            *base = start;
            *bits = d->size_bits;
            return bootinfo->untyped.start + i;
        }
    }
    return 0;
}

/* One object of `type` from `ut` into a fresh slot of the root CNode. */
static word_t retype_one(cptr_t ut, word_t type, word_t size_bits, cptr_t *slot)
{
    *slot = slot_alloc();
    if (!*slot)
        return E_NOT_ENOUGH_MEMORY;
    word_t st = untyped_retype(ut, type, size_bits, ROOT_SLOT_CNODE, 0, 0, *slot, 1);
    if (st != E_OK) {
        slot_free(*slot);
        *slot = 0;
    }
    return st;
}

word_t device_map(word_t paddr, word_t size, struct device_mapping *m)
{
    memset(m, 0, sizeof(*m));
    if (size < (1UL << PAGE_BITS) || size > (1UL << DEVICE_MAX_BITS) || (size & (size - 1)) ||
        (paddr & (size - 1)))
        return E_INVALID_ARGUMENT;
    word_t base;
    unsigned bits;
    cptr_t ut = covering_untyped(paddr, size, &base, &bits);
    if (!ut)
        return E_FAILED_LOOKUP;
    m->paddr = paddr;
    m->size = size;

    word_t st = E_OK;
    while (st == E_OK && (1UL << bits) > size) {
        cptr_t low, high = 0;
        bits--;
        st = retype_one(ut, OBJ_UNTYPED, bits, &low);
        if (st == E_OK)
            st = retype_one(ut, OBJ_UNTYPED, bits, &high);
        if (st != E_OK) {
            slot_drop(&low);
            break;
        }
        bool upper = paddr >= base + (1UL << bits);
        if (upper)
            base += 1UL << bits;
        slot_drop(upper ? &low : &high);
        ut = upper ? high : low;
        m->chain[m->nchain++] = ut;
    }
    for (word_t i = 0; st == E_OK && i < (size >> PAGE_BITS); i++) {
        st = retype_one(ut, OBJ_FRAME, 0, &m->frames[i]);
        if (st == E_OK)
            m->nframes++;
    }
    /* Another user of the device untyped would have moved where Retype puts things. */
    word_t first_paddr;
    if (st == E_OK && (frame_get_address(m->frames[0], &first_paddr) != E_OK || first_paddr != paddr))
        st = E_REVOKE_FIRST;
    word_t v = vaddr_alloc(size, PAGE_SIZE);
    for (unsigned i = 0; st == E_OK && i < m->nframes; i++)
        st = map_frame(m->frames[i], ROOT_SLOT_VSPACE, v + i * PAGE_SIZE, RIGHT_READ | RIGHT_WRITE,
                       VM_UNCACHED | VM_EXECUTE_NEVER);
    if (st != E_OK) {
        device_unmap(m);
        return st;
    }
    m->vaddr = (void *)v;
    return E_OK;
}

void device_unmap(struct device_mapping *m)
{
    for (unsigned i = m->nframes; i-- > 0;)
        slot_drop(&m->frames[i]);
    for (unsigned i = m->nchain; i-- > 0;)
        slot_drop(&m->chain[i]);
    m->nframes = m->nchain = 0;
    m->vaddr = NULL;
}
