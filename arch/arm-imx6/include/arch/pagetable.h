/*
 * ARMv7 short-descriptor translation table formats (ARM ARM B3.5), as the
 * port uses them.  Shared by C and assembly: constants only.
 *
 * TEX remap and the access flag are off (SCTLR.TRE = AFE = 0), so memory
 * types come straight from TEX:C:B, and AP[2:0] gives the permissions.
 * Every descriptor uses domain 0, which DACR makes a client domain.
 */
#ifndef ARCH_PAGETABLE_H
#define ARCH_PAGETABLE_H

/* L1 entries: 4096 of them, one per MiB. */
#define L1_TYPE_MASK     0x3
#define L1_FAULT         0x0
#define L1_TABLE         0x1            /* points to an L2 table (1 KiB aligned) */
#define L1_SECTION       0x2
#define L1_SECT_B        (1 << 2)
#define L1_SECT_C        (1 << 3)
#define L1_SECT_XN       (1 << 4)
#define L1_SECT_AP0      (1 << 10)      /* AP[0] */
#define L1_SECT_AP1      (1 << 11)      /* AP[1]: user access */
#define L1_SECT_TEX1     (1 << 12)      /* TEX = 001 */
#define L1_SECT_AP2      (1 << 15)      /* AP[2]: read-only */
#define L1_SECT_S        (1 << 16)      /* shareable */
#define L1_SECT_NG       (1 << 17)      /* not global: tagged with the ASID */
#define L1_SECT_SUPER    (1 << 18)
#define L1_TABLE_ADDR    0xFFFFFC00
#define L1_SECT_ADDR     0xFFF00000

/*
 * Normal memory, inner and outer write-back write-allocate (TEX=001 C=1
 * B=1), shareable: the SCU keeps it coherent between the cores only when
 * it is shareable and the core has ACTLR.SMP set.
 */
#define L1_SECT_NORMAL   (L1_SECTION | L1_SECT_B | L1_SECT_C | L1_SECT_TEX1 | L1_SECT_S)
/* Normal memory, non-cacheable (TEX=001 C=0 B=0), shareable. */
#define L1_SECT_UNCACHED (L1_SECTION | L1_SECT_TEX1 | L1_SECT_S)
/* Shareable device memory (TEX=000 C=0 B=1); never executable. */
#define L1_SECT_DEVICE   (L1_SECTION | L1_SECT_B | L1_SECT_XN)
/* Kernel read/write, no user access: AP = 001. */
#define L1_SECT_KRW      L1_SECT_AP0

/* L2 entries: 256 per table, one per 4 KiB small page. */
#define L2_ENTRIES       256
#define L2_TABLE_BITS    10             /* an L2 table is 1 KiB */
#define L2_FAULT         0x0
#define L2_SMALL         0x2            /* bit 1; bit 0 is XN */
#define L2_XN            (1 << 0)
#define L2_B             (1 << 2)
#define L2_C             (1 << 3)
#define L2_AP0           (1 << 4)
#define L2_AP1           (1 << 5)
#define L2_TEX1          (1 << 6)
#define L2_AP2           (1 << 9)
#define L2_S             (1 << 10)
#define L2_NG            (1 << 11)
#define L2_ADDR          0xFFFFF000

/*
 * TTBR walk attributes: inner write-back write-allocate (IRGN = 01: bit 6
 * set, bit 0 clear), outer write-back write-allocate (RGN = 01), shareable,
 * inner shareable (NOS).  With ACTLR.SMP set the A9's table walks are then
 * coherent with the L1 data caches (ID_MMFR3.CohWalk = 1), so table edits
 * need only a DSB before the walker may see them, no cache cleaning.
 */
#define TTBR_ATTRS       0x6A

#define SCTLR_M          (1 << 0)
#define SCTLR_A          (1 << 1)
#define SCTLR_C          (1 << 2)
#define SCTLR_Z          (1 << 11)
#define SCTLR_I          (1 << 12)
#define SCTLR_V          (1 << 13)
#define SCTLR_TRE        (1 << 28)
#define SCTLR_AFE        (1 << 29)
#define SCTLR_TE         (1 << 30)

/* Cortex-A9 ACTLR: SMP takes part in coherency; FW broadcasts cache and TLB maintenance. */
#define ACTLR_FW         (1 << 0)
#define ACTLR_SMP        (1 << 6)

#endif
