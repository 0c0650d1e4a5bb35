/*
 * The boot information page, mapped read-only into the root task at
 * BOOTINFO_VADDR.  The root task's initial capabilities are at fixed slots
 * of its root CNode; the rest are described by slot ranges here.
 */
#ifndef ABI_BOOTINFO_H
#define ABI_BOOTINFO_H

#include "types.h"

/* Fixed slots in the root task's CNode (radix ROOT_CNODE_BITS, guard 0 up to word size). */
enum root_slot {
    ROOT_SLOT_NULL = 0,
    ROOT_SLOT_TCB,              /* the root task's own TCB */
    ROOT_SLOT_CNODE,            /* its root CNode */
    ROOT_SLOT_VSPACE,           /* its address space root */
    ROOT_SLOT_IRQ_CONTROL,      /* IRQ control */
    ROOT_SLOT_IPC_BUFFER,       /* the frame holding its IPC buffer */
    ROOT_SLOT_BOOTINFO_FRAME,   /* the frame holding this page */
    ROOT_SLOT_IO_PORT,          /* I/O ports for PCI configuration (x86_64; empty on other ports) */
    ROOT_SLOT_FIRST_FREE_FIXED, /* first slot after the fixed ones */
};

#define ROOT_CNODE_BITS     12          /* 4096 slots */
#define BOOTINFO_VADDR      0x10000000UL
#define IPC_BUFFER_VADDR    0x10001000UL
#define BOOTINFO_MAX_UNTYPED 128
#define BOOTINFO_MAX_CORES   32
#define BOOTINFO_CMDLINE_MAX 512

/* A range of slots [start, end). */
struct slot_region {
    word_t start;
    word_t end;
};

struct untyped_desc {
    word_t paddr;
    uint8_t size_bits;
    uint8_t is_device;
    uint8_t padding[sizeof(word_t) - 2];
};

struct bootinfo {
    word_t ncores;                      /* cores online */
    word_t node_id;                     /* the core the root task starts on: 0 */
    struct slot_region empty;           /* free slots in the root CNode */
    struct slot_region user_image_frames;   /* frames of the root task's ELF image, in address order */
    word_t user_image_vaddr;            /* virtual address of the first of them */
    struct slot_region user_image_page_tables;
    struct slot_region untyped;         /* untyped capabilities */
    struct untyped_desc untyped_list[BOOTINFO_MAX_UNTYPED];
    word_t cycle_hz;                    /* cycle counter frequency (0: unknown); under -icount: instructions */
    word_t timer_irq;                   /* the IRQ number of a user-level device timer, if any (else ~0) */
    word_t lock_variant;                /* 0 none, 1 bkl, 2 fine, 3 rtm */
    word_t rtm_active;                  /* 1 when rtm elides the lock */
    char arch[16];                      /* "x86_64" or "arm-imx6" */
    char lock[8];                       /* "none", "bkl", "fine", "rtm" */
    char cmdline[BOOTINFO_CMDLINE_MAX]; /* the boot command line (docs/console.md) */
};

_Static_assert(sizeof(struct bootinfo) <= 4096, "the boot information fits one page");

#endif
