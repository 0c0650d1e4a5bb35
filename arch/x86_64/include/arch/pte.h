/*
 * x86_64 page-table entry bits (4-level paging).
 */
#ifndef ARCH_PTE_H
#define ARCH_PTE_H

#define PTE_PRESENT     (1ul << 0)
#define PTE_WRITE       (1ul << 1)
#define PTE_USER        (1ul << 2)
#define PTE_PWT         (1ul << 3)
#define PTE_PCD         (1ul << 4)
#define PTE_LARGE       (1ul << 7)      /* in a PDPT or PD entry: a 1 GiB or 2 MiB page */
#define PTE_GLOBAL      (1ul << 8)
#define PTE_NX          (1ul << 63)
#define PTE_ADDR_MASK   0x000ffffffffff000ul

#define PT_ENTRIES      512

#endif
