/*
 * Device memory for user-level drivers: a device's registers, found in the
 * device untypeds of the boot information, mapped uncached into the root
 * task's space.  Main thread only, like the other allocators (root.h).
 */
#ifndef DEVICE_H
#define DEVICE_H

#include <root.h>

/* What device_map() took; device_unmap() gives it back. */
struct device_mapping {
    void *vaddr;            /* the registers, mapped uncached */
    word_t paddr;
    word_t size;
    cptr_t chain[WORD_BITS];    /* the untypeds split off on the way; the last covers the region */
    unsigned nchain;
    cptr_t frames[256];         /* the region's frames, in address order */
    unsigned nframes;
};

/*
 * Map the device registers [paddr, paddr + size) uncached.  size is a power
 * of two from 4 KiB to 1 MiB and paddr is aligned to it, as PCI BARs are.
 * The device untyped that covers it must not be in use otherwise.  Errors:
 * E_INVALID_ARGUMENT (size or alignment), E_FAILED_LOOKUP (no device untyped
 * covers it), E_REVOKE_FIRST (that untyped was in use, so the frames did not
 * land at paddr), else the status of the Retype or Map that failed.
 */
word_t device_map(word_t paddr, word_t size, struct device_mapping *m);

/* Unmap it and delete its caps (the device untyped is whole again). */
void device_unmap(struct device_mapping *m);

#endif
