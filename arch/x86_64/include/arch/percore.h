/*
 * Per-core data of the x86_64 port.  GS base points at this core's entry
 * while the core runs in the kernel (SWAPGS on every entry from and exit to
 * user mode), so arch_core_id() and the entry code reach it with one %gs load.
 *
 * Each entry is written only by its own core once that core runs (the boot
 * core fills in self, core_id and kernel_stack_top before starting it).
 * Other cores read only `online` and `ipi_received` (smp.c, with
 * release/acquire pairs), `lapic_id` (after `online`) and `fpu_owner`
 * (arch_core_held_context(), fpu.c, which says why a relaxed load is enough).  No kernel lock
 * protects any of it, under any lock variant.
 */
#ifndef ARCH_PERCORE_H
#define ARCH_PERCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <arch/machine.h>

struct core;

/* The 64-bit task state segment: RSP0 for entries from user mode, the IST stacks. */
struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iopb_offset;   /* past the limit: no I/O permission bitmap, user port I/O faults */
} __attribute__((packed));
_Static_assert(sizeof(struct tss) == 104, "the hardware TSS is 104 bytes");

#define GDT_ENTRIES 7   /* null, kernel CS, kernel SS, user SS, user CS, TSS (2 slots) */

#define IST_INTERRUPT   1   /* device interrupts and IPIs: always the top of the kernel stack */
#define IST_EMERGENCY   2   /* NMI, #DF, #MC: a separate stack that survives a broken one */

#define EMERGENCY_STACK_SIZE 4096

struct x86_core {
    /* Fixed offsets used by the entry code and arch_core_id() (machine.h). */
    struct x86_core *self;              /* PERCORE_SELF */
    struct arch_context *current;       /* PERCORE_CONTEXT: where entries save user registers */
    word_t kernel_stack_top;            /* PERCORE_KSTACK */
    word_t user_rsp;                    /* PERCORE_USER_RSP: SYSCALL scratch */
    uint32_t core_id;                   /* PERCORE_CORE_ID */
    uint32_t lapic_id;
    /* Exception fixup (rtm_probe.c): a kernel-mode exception resumes at fixup_rip when set. */
    word_t fixup_rip;                   /* PERCORE_FIXUP_RIP */
    word_t fixup_vector;                /* PERCORE_FIXUP_VECTOR: the vector that was caught */
    struct core *kernel_core;           /* PERCORE_KERNEL_CORE: &cores[core_id] (<arch/this_core.h>) */
    void *lock_data;                    /* PERCORE_LOCK_DATA: arch_lock_data() (machine.h) */
    word_t cr3_asid_mask;               /* PERCORE_CR3_ASID_MASK: 0xfff with CR4.PCIDE, else 0 */
    /* The user state the exit loads (arch/x86_64/fpu.c, "the exit key"). */
    word_t exit_key;                    /* PERCORE_EXIT_KEY: fs_base, or EXIT_KEY_FPU_OWNED */
    word_t fs_base;                     /* the FS base this core last wrote */
    struct arch_context *fpu_owner;     /* whose registers the FPU holds; NULL: nobody's */
    bool ts_clear;                      /* CR0.TS is clear: the running thread is fpu_owner */
    volatile uint32_t ipi_received;     /* boot IPI round: IPIs this core took */
    uint32_t online;
    struct tss tss;
    uint64_t gdt[GDT_ENTRIES];
} __attribute__((aligned(CACHE_LINE_SIZE)));

#define PERCORE_FIXUP_RIP       40
#define PERCORE_FIXUP_VECTOR    48
#define PERCORE_KERNEL_CORE     56
#define PERCORE_CR3_ASID_MASK   72
#define PERCORE_EXIT_KEY        80

_Static_assert(offsetof(struct x86_core, self) == PERCORE_SELF, "entry code offset");
_Static_assert(offsetof(struct x86_core, current) == PERCORE_CONTEXT, "entry code offset");
_Static_assert(offsetof(struct x86_core, kernel_stack_top) == PERCORE_KSTACK, "entry code offset");
_Static_assert(offsetof(struct x86_core, user_rsp) == PERCORE_USER_RSP, "entry code offset");
_Static_assert(offsetof(struct x86_core, core_id) == PERCORE_CORE_ID, "arch_core_id() offset");
_Static_assert(offsetof(struct x86_core, fixup_rip) == PERCORE_FIXUP_RIP, "fixup offset");
_Static_assert(offsetof(struct x86_core, fixup_vector) == PERCORE_FIXUP_VECTOR, "fixup offset");
_Static_assert(offsetof(struct x86_core, kernel_core) == PERCORE_KERNEL_CORE, "<arch/this_core.h> offset");
_Static_assert(offsetof(struct x86_core, lock_data) == PERCORE_LOCK_DATA, "arch_lock_data() offset");
_Static_assert(offsetof(struct x86_core, cr3_asid_mask) == PERCORE_CR3_ASID_MASK, "arch_vspace_load() offset");
_Static_assert(offsetof(struct x86_core, exit_key) == PERCORE_EXIT_KEY, "the exit's offset");
_Static_assert(sizeof(struct x86_core) % CACHE_LINE_SIZE == 0,
               "per-core data fills whole cache lines, so cores never share one");

extern struct x86_core x86_cores[NCPUS];

static inline struct x86_core *this_core(void)
{
    struct x86_core *c;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(c));
    return c;
}

#endif
