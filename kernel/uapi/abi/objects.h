/*
 * Object types for Untyped Retype, and capability rights.
 *
 * Sizes are given as log2 bytes by OBJECT_SIZE_BITS in docs/abi.md; CNodes
 * and untypeds take a size argument (log2 slots, log2 bytes).  Architecture
 * object types (page tables, the address-space root) have the same numbers
 * on every port; each port documents what they hold.
 */
#ifndef ABI_OBJECTS_H
#define ABI_OBJECTS_H

enum object_type {
    OBJ_UNTYPED = 0,
    OBJ_TCB,
    OBJ_ENDPOINT,
    OBJ_NOTIFICATION,
    OBJ_CNODE,          /* size argument: log2 number of slots */
    OBJ_FRAME,          /* a 4 KiB frame */
    OBJ_LARGE_FRAME,    /* 2 MiB on x86_64, 1 MiB section on arm-imx6 */
    OBJ_PAGE_TABLE,     /* any non-root paging level: mapped where the walk stops */
    OBJ_VSPACE,         /* the root of an address space (PML4, or ARM L1 table) */
    OBJ_TYPE_COUNT
};

/* Rights on a capability; Mint and Mutate can only remove rights. */
enum cap_rights {
    RIGHT_READ        = 1 << 0,   /* receive on endpoints, read frames */
    RIGHT_WRITE       = 1 << 1,   /* send on endpoints, write frames */
    RIGHT_GRANT       = 1 << 2,   /* transfer capabilities through an endpoint */
    RIGHT_GRANT_REPLY = 1 << 3,   /* Call through an endpoint (creates a reply cap) */
    RIGHTS_ALL        = 0xf,
};

/* Frame mapping attributes (Frame Map, MR argument). */
enum vm_attributes {
    VM_DEFAULT      = 0,
    VM_UNCACHED     = 1 << 0,
    VM_EXECUTE_NEVER = 1 << 1,
};

#endif
