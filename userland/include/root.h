/*
 * The root task's environment and allocators.  The allocators are for the
 * root task's main thread: they take no locks, so other threads must not
 * call them.
 *
 *   malloc/free     a bump allocator with per-size free lists over a static heap
 *   slot_*          free slots of the root CNode (bootinfo->empty), a bitmap
 *   obj_alloc       objects retyped from untyped memory: the current arena if
 *                   one is set, else the boot untypeds in turn
 *   vaddr_alloc     fresh virtual addresses in the root task's space
 *   map_frame       map a frame, installing missing page tables first
 */
#ifndef ROOT_H
#define ROOT_H

#include <abi/bootinfo.h>
#include <abi/objects.h>
#include <invoke.h>
#include <libc.h>

#define PAGE_SIZE 4096UL

extern const struct bootinfo *const bootinfo;

/* The root task's own slot for slot s of its root CNode. */
#define ROOT_DEPTH WORD_BITS

/* Heap */
void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void free(void *p);

/* Slots of the root CNode */
cptr_t slot_alloc(void);            /* 0 when none is left */
void slot_free(cptr_t slot);        /* the slot must be empty */
/* Delete the cap in *slot (if any), free the slot and zero *slot. */
void slot_drop(cptr_t *slot);
word_t slots_free_count(void);

/* A checkpoint of the slot allocator: slot_restore() deletes whatever was put in
 * slots allocated since, and frees them. */
struct slot_mark {
    uint8_t used[1 << ROOT_CNODE_BITS >> 3];
};
void slot_checkpoint(struct slot_mark *m);
void slot_restore(const struct slot_mark *m);

/* Objects.  *slot receives the new cap; returns the retype status. */
word_t obj_alloc(word_t type, word_t size_bits, cptr_t *slot);
cptr_t obj_new(word_t type, word_t size_bits);     /* 0 on failure */

/* An arena: a child untyped that obj_alloc uses until arena_end revokes it. */
struct arena {
    cptr_t untyped;
    cptr_t previous;
    struct slot_mark mark;
};
word_t arena_begin(struct arena *a, word_t size_bits);
void arena_end(struct arena *a);

/* Virtual addresses in the root task's space, at least `align` aligned. */
word_t vaddr_alloc(word_t size, word_t align);

/* Map a frame into `vspace`, retyping and mapping page tables as needed. */
word_t map_frame(cptr_t frame, cptr_t vspace, word_t vaddr, word_t rights, word_t attrs);

/* A fresh frame mapped read-write at a fresh address of the root task's space. */
void *frame_new_mapped(cptr_t *frame_slot);

/* Command-line arguments: the value of key= in bootinfo->cmdline, or dflt. */
word_t arg_word(const char *key, word_t dflt);
bool arg_str(const char *key, char *buf, size_t size);

#endif
