/*
 * Capabilities and capability slots.
 *
 * A capability (struct cap) names one kernel object and what its holder
 * may do with it.  It lives in a slot (struct cte) of a CNode or of a TCB.
 *
 * The capability derivation tree (CDT, kernel/cdt.c) is kept, as in seL4's
 * mapping database, as one doubly-linked list of all slots in preorder: a
 * slot's descendants are the slots that follow it and have a greater depth,
 * up to the first slot whose depth is not greater.  A child is inserted
 * right after its parent with depth parent+1.  Unlinking a slot keeps the
 * order and moves its descendants up one level, so its children become
 * children of its own parent (left deeper, they would read as children of a
 * preceding sibling).  Every capability to an object is derived from
 * the object's first capability, so all capabilities to one object sit next
 * to each other in the list, and a capability is the object's last one
 * exactly when neither list neighbour names the same object
 * (cdt_is_final()).
 *
 * Under LOCK=fine, capability slots and the CDT are changed only by
 * ENTRY_GENERAL entries, which hold the write side of the big-reader lock;
 * IPC paths (read side) only read slots, and may move a reply cap into a
 * TCB slot of a thread whose object lock they hold (kernel/reply.c).
 */
#ifndef KERNEL_CAP_H
#define KERNEL_CAP_H

#include "types.h"
#include <abi/objects.h>

enum cap_type {
    CAP_NULL = 0,
    CAP_UNTYPED,        /* paddr, size_bits, free_index, clear_index, CAPF_DEVICE */
    CAP_TCB,            /* obj = struct tcb */
    CAP_ENDPOINT,       /* obj = struct endpoint, badge, rights */
    CAP_NOTIFICATION,   /* obj = struct notification, badge, rights */
    CAP_CNODE,          /* obj = slot array, size_bits = radix, guard_bits, guard */
    CAP_FRAME,          /* paddr, size_bits (PAGE_BITS or LARGE_PAGE_BITS), rights, mapping */
    CAP_PAGE_TABLE,     /* obj = the table, level and mapping once mapped */
    CAP_VSPACE,         /* obj = the root table, asid */
    CAP_REPLY,          /* obj = the caller's struct tcb; CAPF_MASTER on the TCB's own */
    CAP_IRQ_CONTROL,    /* no object: may create IRQ handler caps */
    CAP_IRQ_HANDLER,    /* irq */
    CAP_IO_PORT,        /* io_port_first..io_port_last; only ports with I/O ports make one */
    CAP_ZOMBIE,         /* a container being deleted (kernel/delete.c): obj, zombie_of, size_bits */
    CAP_TYPE_COUNT
};

/* cap.flags */
enum cap_flags {
    CAPF_DEVICE = 1 << 0,   /* untyped or frame: device memory, never zeroed, not RAM */
    CAPF_MAPPED = 1 << 1,   /* frame or page table: mapped at (asid, asid_gen, mapped_vaddr) */
    CAPF_MASTER = 1 << 2,   /* reply: the TCB's own master reply cap (parent of reply caps) */
};

struct cap {
    uint8_t type;           /* enum cap_type */
    uint8_t rights;         /* enum cap_rights */
    uint8_t size_bits;      /* untyped, frame: log2 bytes; cnode: radix (log2 slots) */
    uint8_t flags;          /* enum cap_flags */
    uint8_t guard_bits;     /* cnode: guard length */
    union {
        uint8_t level;      /* page table: the level its entry sits at once mapped */
        uint8_t zombie_of;  /* zombie: the type of the container, CAP_CNODE or CAP_TCB */
    };
    uint16_t asid;          /* vspace: its ASID; mapped frame or page table: ASID it is mapped in */
    union {
        void *obj;          /* kernel objects: kernel virtual address */
        word_t paddr;       /* untyped and frame: physical address */
        word_t io_port_first;   /* I/O port: the first port it covers */
    };
    union {
        word_t badge;       /* endpoint, notification */
        word_t guard;       /* cnode */
        word_t free_index;  /* untyped: bytes from its start in use (its watermark) */
        word_t mapped_vaddr;/* frame, page table (when CAPF_MAPPED) */
        word_t irq;         /* irq handler */
        word_t io_port_last;    /* I/O port: the last port it covers (inclusive) */
        struct cte *zombie_parent;  /* zombie: the zombie whose container holds it (delete.c) */
    };
    union {
        word_t asid_gen;    /* mapped frame or page table: generation of its ASID (vspace.c) */
        word_t clear_index; /* untyped: bytes from its start known to be zero once free (untyped.c) */
        word_t zombie_left; /* zombie: slots 0 .. zombie_left-1 may still hold caps */
    };
};

#define CTE_BITS 6          /* log2 size of a slot: CNode objects are arrays of 2^radix slots */

struct cte {
    _Alignas(1 << CTE_BITS) struct cap cap;
    struct cte *cdt_prev;   /* CDT list in preorder (kernel/cdt.c) */
    struct cte *cdt_next;
    word_t cdt_depth;       /* 0: a root of the tree */
};

_Static_assert(sizeof(struct cte) == (1 << CTE_BITS), "a slot is 2^CTE_BITS bytes");

static inline struct cap cap_null(void)
{
    struct cap c = { .type = CAP_NULL };
    return c;
}

static inline bool cap_is_null(const struct cap *c)
{
    return c->type == CAP_NULL;
}

/* The object a capability names, as one comparable word (physical for memory caps). */
static inline word_t cap_object_id(const struct cap *c)
{
    switch (c->type) {
    case CAP_UNTYPED:
    case CAP_FRAME:
        return c->paddr;
    case CAP_IRQ_HANDLER:
        return c->irq;
    case CAP_IO_PORT:
        return c->io_port_first;
    case CAP_IRQ_CONTROL:
        return 1;
    default:
        return (word_t)c->obj;
    }
}

/* Whether two caps name the same object (same type family and object). */
static inline bool cap_same_object(const struct cap *a, const struct cap *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == CAP_UNTYPED || a->type == CAP_FRAME)
        return a->paddr == b->paddr && a->size_bits == b->size_bits;
    if (a->type == CAP_REPLY)
        return a->obj == b->obj && ((a->flags ^ b->flags) & CAPF_MASTER) == 0;
    if (a->type == CAP_IO_PORT)
        return a->io_port_first == b->io_port_first && a->io_port_last == b->io_port_last;
    return cap_object_id(a) == cap_object_id(b);
}

#endif
