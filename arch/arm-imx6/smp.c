/*
 * Multicore bring-up: the Snoop Control Unit, the SRC that releases the
 * secondary cores, and the boot IPI round.
 *
 * The i.MX6's cores 1..3 stay in reset until the System Reset Controller
 * lets them go: SRC_GPR(2c+1) holds core c's entry address (physical: its
 * MMU is off) and SRC_GPR(2c+2) an argument, and setting SCR's
 * core<c>_enable bit starts it there (on the board via the boot ROM, in
 * QEMU directly, with the argument in r0).  boot.S takes the core to
 * arch_init_secondary() with its own stacks.
 *
 * Synchronisation with the new cores is by flags in normal, cacheable,
 * shareable memory only: a secondary sets ACTLR.SMP and turns its caches on
 * before it touches any shared data (boot.S), from then on the SCU keeps it
 * coherent.  A secondary parked in WFI was seen never to wake in QEMU, so
 * every wait here is a busy-wait (with a timeout on the global timer).
 */
#include <arch/imx6.h>
#include <arch/boot.h>
#include <cpu_relax.h>
#include <core.h>

#define SCU_CTRL        0x00
#define SCU_CONFIG      0x04
#define SCU_INV_ALL     0x0C
#define SCU_ENABLE      (1u << 0)

#define SRC_SCR         0x00
#define SRC_GPR1        0x20    /* core c: entry at GPR1 + 8c, argument at GPR1 + 8c + 4 */
#define SCR_CORE1_RST   14
#define SCR_CORE1_ENABLE 22

#define BOOT_TIMEOUT_TICKS  (5ull * 100000000)  /* 5 s at QEMU's timer rate, ~1.3 s on the board */

extern const char secondary_start[];    /* boot.S, linked at its physical address */

struct arm_core arm_cores[NCPUS];

static unsigned ncores;                 /* cores to run: the SCU's count, at most NCPUS */
static uint32_t cores_arrived;          /* [atomic] cores whose arch state is up (core 0 too) */
static uint32_t round_go;               /* [atomic] core 0: start the IPI round */
static uint32_t round_done;             /* [atomic] cores that finished it */
static uint32_t released;               /* [atomic] core 0: go on into the kernel */
static bool ipi_round_ok;               /* written by core 0 before `released` */

static volatile uint32_t *scu(unsigned off) { return mmio32(MPCORE_PBASE + SCU_OFFSET + off); }
static volatile uint32_t *src(unsigned off) { return mmio32(SRC_PBASE + off); }

/* SCU_CONFIG bits 0..1: number of cores - 1. */
/* boot.S: NCPUS kernel stacks of 1 << KSTACK_BITS bytes. */
extern char kernel_stacks[];

/* Core `core`'s struct arm_stack_top_words (machine.h), from any core. */
static struct arm_stack_top_words *stack_top_words_of(unsigned core)
{
    return (struct arm_stack_top_words *)(kernel_stacks + ((core + 1) << KSTACK_BITS)) - 1;
}

void arch_set_lock_data(unsigned core, void *data)
{
    stack_top_words_of(core)->lock_data = data;
}

unsigned scu_core_count(void)
{
    unsigned n = (*scu(SCU_CONFIG) & 3) + 1;
    return n < NCPUS ? n : NCPUS;
}

/*
 * Invalidate the SCU's duplicate tags of every core, then enable it; from
 * now on the L1 data caches of cores with ACTLR.SMP set are coherent.
 */
void scu_enable(void)
{
    ncores = scu_core_count();
    if (*scu(SCU_CTRL) & SCU_ENABLE)
        return;
    *scu(SCU_INV_ALL) = 0xFFFF;
    *scu(SCU_CTRL) |= SCU_ENABLE;
    __asm__ volatile("dsb" ::: "memory");
}

unsigned arch_cores_online(void)
{
    return __atomic_load_n(&cores_arrived, __ATOMIC_ACQUIRE);
}

static bool wait_until(uint32_t *word, uint32_t value)
{
    uint64_t start = global_timer_read64();
    /* Acquire: what the writer did before its release store is visible after. */
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
        if (global_timer_read64() - start > BOOT_TIMEOUT_TICKS)
            return false;
        cpu_relax();
    }
    return true;
}

/*
 * The boot IPI round: every core sends one SGI_BOOT_PING to every other,
 * then takes pings by polling its CPU interface (IRQs stay masked; reading
 * IAR acknowledges a pending interrupt whatever CPSR.I says) until one came
 * from each other core.  IAR bits 10..12 name the sender of an SGI.
 */
static void ipi_round(unsigned me)
{
    struct arm_core *c = &arm_cores[me];
    uint32_t want = ((1u << ncores) - 1) & ~(1u << me);

    wait_until(&round_go, 1);
    for (unsigned other = 0; other < ncores; other++)
        if (other != me)
            gic_send_sgi(other, SGI_BOOT_PING);
    uint64_t start = global_timer_read64();
    while ((c->pings_from & want) != want && global_timer_read64() - start < BOOT_TIMEOUT_TICKS) {
        uint32_t iar = gic_acknowledge();
        unsigned id = iar & 0x3FF;
        if (id == GIC_SPURIOUS) {
            /* Under -icount QEMU runs the cores in turns and ends a turn only at a yield (or a
             * halt): without one this loop keeps the turn, and the pinging core never runs. */
            cpu_relax();
            continue;
        }
        if (id == SGI_BOOT_PING)
            c->pings_from |= 1u << ((iar >> 10) & 7);
        gic_end_of_interrupt(iar);
    }
    /* Release: core 0 reads pings_from after it sees our count. */
    __atomic_fetch_add(&round_done, 1, __ATOMIC_RELEASE);
}

void arch_start_secondary_cores(void)
{
    for (unsigned core = 1; core < ncores; core++) {
        *src(SRC_GPR1 + 8 * core) = (word_t)secondary_start;
        *src(SRC_GPR1 + 8 * core + 4) = core;
        __asm__ volatile("dsb" ::: "memory");
        *src(SRC_SCR) |= (1u << (SCR_CORE1_ENABLE + core - 1)) | (1u << (SCR_CORE1_RST + core - 1));
        if (!wait_until(&cores_arrived, core + 1))
            break;
    }
    unsigned up = arch_cores_online();
    if (up < ncores)
        ncores = up;    /* a core that never came is left out; the boot record shows it */

    __atomic_store_n(&round_go, 1, __ATOMIC_RELEASE);
    ipi_round(0);
    bool ok = wait_until(&round_done, ncores);
    for (unsigned core = 0; core < ncores; core++) {
        uint32_t want = ((1u << ncores) - 1) & ~(1u << core);
        if ((arm_cores[core].pings_from & want) != want)
            ok = false;
    }
    ipi_round_ok = ok;
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
}

bool arch_ipi_round(void)
{
    return ipi_round_ok;
}

bool arch_ipi_round_ok(void)
{
    return ipi_round_ok;
}

/* Called by core 0 itself, first: it counts as arrived. */
void smp_boot_core_arrived(void);
void arm_set_this_core(unsigned core)
{
    struct arm_stack_top_words *w = stack_top_words_of(core);

    w->core = &cores[core];
    w->asid_owner = arm_cores[core].asid_owner;
    /* Hardware ASID 0 is the kernel-only space's: no ASID owns it (machine.h). */
    arm_cores[core].asid_owner[0] = ARM_ASID_OWNER_NONE;
}

void smp_boot_core_arrived(void)
{
    arm_cores[0].arrived = 1;
    __atomic_store_n(&cores_arrived, 1, __ATOMIC_RELEASE);
}

_Noreturn void arch_init_secondary(unsigned core)
{
    arm_set_this_core(core);
    gic_init_core();
    arm_cores[core].arrived = 1;
    /* Release: our set-up is done before core 0 counts us. */
    __atomic_fetch_add(&cores_arrived, 1, __ATOMIC_RELEASE);
    ipi_round(core);
    while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
        cpu_relax();
    arch_timer_rearm();
    kernel_boot_secondary(core);
}
