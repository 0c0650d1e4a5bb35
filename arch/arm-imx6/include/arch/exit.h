/*
 * The way out of the kernel that every IPC pays (kernel/arch.h), inline:
 * loading an address space and returning to a user thread.
 */
#ifndef ARCH_EXIT_H
#define ARCH_EXIT_H

#include <arch/exception.h>
#include <arch/machine.h>
#include <arch/pagetable.h>

/*
 * Address-space switch (kernel/arch.h), inline: the IPC fastpath switches
 * on every call between two spaces, and the call layer, the frame and the
 * per-core lookups of an out-of-line version cost as much as the switch.
 * mmu.c explains hardware ASIDs.
 *
 * Kernel ASID a runs under hardware ASID a mod 256, or a / 256 when that
 * is 0: never 0 for a valid a, which leaves hardware ASID 0 to the
 * kernel-only space.  asid_owner[0] holds ARM_ASID_OWNER_NONE, which no
 * ASID equals, so ASID 0 (the kernel-only space, kernel/vspace.h) and a
 * hardware ASID last used by another space take the out-of-line path,
 * mmu.c's arm_vspace_load_slow().
 *
 * The switch, ARM ARM (DDI 0406C) B3.10.4, "Synchronization of changes of
 * ASID and TTBR", the method of a table with global mappings only:
 *   TTBR0 := empty_l1, ISB.  No walk through the old table starts after
 *     the ISB, and walks of the empty table create no TLB entry (all its
 *     entries fault, and faults are not cached).
 *   DSB.  Cortex-A9 erratum 754322: a walk that started before a CONTEXTIDR write may complete after it
 *     and put a micro-TLB entry under the new ASID (Cortex-A9 r2 and r3;
 *     the i.MX6Q's A9 is r2p10).  The DSB waits for walks of the old
 *     table still in flight.
 *   CONTEXTIDR := hw, ISB.  No branch in between (B3.10.4: a branch
 *     predicted before the ISB could be tagged with either ASID).
 *   TTBR0 := root.  No ISB: the kernel never accesses user addresses (the
 *     user's memory is reached through the direct map), and the return to
 *     user mode that follows, an exception return, is a context
 *     synchronization operation like an ISB (B3.15, "Synchronization of
 *     changes to system control registers": a CP15 write is guaranteed
 *     to affect later instructions after an ISB, an exception entry or an
 *     exception return).
 */
#define ARM_ASID_OWNER_NONE 0xFFFFFFFFu

extern uint32_t empty_l1[2048];
void arm_vspace_load_slow(word_t vspace_root_paddr, unsigned asid);

/* The kernel-only space's TTBR0 table: the empty one (the kernel's mappings are TTBR1's). */
static inline word_t arch_kernel_vspace_paddr(void)
{
    return arch_virt_to_phys(empty_l1);
}

static inline unsigned arm_hw_asid(unsigned asid)
{
    unsigned hw = asid & 0xFF;
    return hw ? hw : asid >> 8;
}

static inline __attribute__((always_inline)) void arch_vspace_load(word_t vspace_root_paddr, unsigned asid)
{
    unsigned hw = arm_hw_asid(asid);

    if (__builtin_expect(arm_stack_top_words()->asid_owner[hw] != asid, 0)) {
        arm_vspace_load_slow(vspace_root_paddr, asid);
        return;
    }
    /* empty_l1 is 8 KiB aligned: + TTBR_ATTRS is | TTBR_ATTRS, and folds
     * into the one constant the compiler loads. */
    __asm__ volatile("mcr p15, 0, %[empty], c2, c0, 0\n"   /* TTBR0 */
                     "isb\n"
                     "dsb\n"
                     "mcr p15, 0, %[hw], c13, c0, 1\n"     /* CONTEXTIDR */
                     "isb\n"
                     "mcr p15, 0, %[root], c2, c0, 0"      /* TTBR0 */
                     :
                     : [empty] "r"(arch_virt_to_phys(empty_l1) + TTBR_ATTRS), [hw] "r"(hw),
                       [root] "r"(vspace_root_paddr | TTBR_ATTRS)
                     : "memory");
}


/* arch_return_to_user() for a thread that is not the idle thread (the IPC fastpath's partner). */
static inline __attribute__((always_inline)) _Noreturn void arch_return_to_user_thread(struct arch_context *ctx)
{
    arch_restore_context(ctx);
}

#endif
