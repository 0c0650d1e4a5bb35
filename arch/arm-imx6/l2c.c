/*
 * The i.MX6's shared L2 cache: an ARM L2C-310 (PL310), 1 MiB, 16 ways, at
 * 0x00A02000.  On the board it is the last-level cache of section 4.1.2 of
 * the Peters et al. paper; QEMU's sabrelite does not model it, and there
 * the register window is unassigned, which QEMU may report as an external
 * abort.  So the first access is a probe with a fixup (fault.c): an abort
 * resumes after it with r0 = 0, and an ID that is not an L2C-310 leaves the
 * cache alone.
 *
 * Settings as the board's Linux device tree has them: tag and data RAM
 * latencies <4 2 3> (read, write, setup cycles), instruction and data
 * prefetch, early write response, shared-attribute override (so that
 * normal non-cacheable shareable accesses are not cached in L2).
 */
#include <arch/imx6.h>

#define L2C_CACHE_ID        0x000
#define L2C_CTRL            0x100
#define L2C_AUX_CTRL        0x104
#define L2C_TAG_LATENCY     0x108
#define L2C_DATA_LATENCY    0x10C
#define L2C_INT_CLEAR       0x220
#define L2C_SYNC            0x730
#define L2C_INV_WAY         0x77C
#define L2C_PREFETCH_CTRL   0xF60

#define CACHE_ID_PART_MASK  (0xF << 6)
#define CACHE_ID_PART_L310  (0x3 << 6)

#define AUX_EARLY_BRESP     (1u << 30)
#define AUX_INSN_PREFETCH   (1u << 29)
#define AUX_DATA_PREFETCH   (1u << 28)
#define AUX_SHARED_OVERRIDE (1u << 22)
#define LATENCY_4_2_3       ((2 - 1) << 8 | (4 - 1) << 4 | (3 - 1))
#define PREFETCH_DOUBLE_LINEFILL (1u << 30)
#define PREFETCH_INSN       (1u << 29)
#define PREFETCH_DATA       (1u << 28)

static volatile uint32_t *l2c(unsigned off) { return mmio32(L2C_PBASE + off); }

/* Read the cache ID; 0 when the load aborts (fault.c resumes after it with r0 = 0). */
static uint32_t l2c_probe_id(void)
{
    register uint32_t r0 __asm__("r0");
    register volatile uint32_t *r1 __asm__("r1") = l2c(L2C_CACHE_ID);
    __asm__ volatile(".global l2c_probe_insn\n"
                     "l2c_probe_insn:\n"
                     "    ldr r0, [r1]\n"
                     : "=r"(r0)
                     : "r"(r1)
                     : "memory");
    return r0;
}

bool l2c_init(void)
{
    uint32_t id = l2c_probe_id();
    if ((id & CACHE_ID_PART_MASK) != CACHE_ID_PART_L310)
        return false;
    if (*l2c(L2C_CTRL) & 1)
        return true;        /* left on by the loader: keep its set-up */
    *l2c(L2C_TAG_LATENCY) = LATENCY_4_2_3;
    *l2c(L2C_DATA_LATENCY) = LATENCY_4_2_3;
    *l2c(L2C_AUX_CTRL) |= AUX_EARLY_BRESP | AUX_INSN_PREFETCH | AUX_DATA_PREFETCH |
                          AUX_SHARED_OVERRIDE;
    *l2c(L2C_PREFETCH_CTRL) |= PREFETCH_DOUBLE_LINEFILL | PREFETCH_INSN | PREFETCH_DATA;
    /* Invalidate all 16 ways while disabled: after reset its contents are random. */
    *l2c(L2C_INV_WAY) = 0xFFFF;
    while (*l2c(L2C_INV_WAY) & 0xFFFF)
        ;
    *l2c(L2C_SYNC) = 0;
    *l2c(L2C_INT_CLEAR) = ~0u;
    *l2c(L2C_CTRL) = 1;
    __asm__ volatile("dsb" ::: "memory");
    return true;
}
