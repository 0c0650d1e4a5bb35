/*
 * The first instructions of every core (arm-imx6).
 *
 * Core 0 enters at _start, physical 0x10000000, from QEMU -kernel or from
 * U-Boot's bootm/bootelf: MMU and data cache off (U-Boot cleans and turns
 * them off before it jumps), any mode.  Cores 1..3 start held in reset;
 * smp.c makes the SRC release each one at secondary_start (physical, the
 * SRC's GPR register for that core), with nothing set up at all.
 *
 * This code runs with the MMU off, so it is linked at its physical address
 * (.boot, kernel.ld) and reaches kernel data at symbol - PHYS_OFFSET.  It
 * builds the kernel's L1 table (core 0 only), turns the MMU and caches on,
 * and jumps to the kernel's high virtual addresses.  Each core then takes
 * its own stacks and calls arch_init_boot_core() or arch_init_secondary().
 */
#include <arch/memlayout.h>
#include <arch/pagetable.h>

    .syntax unified
    .arm

/* Store one 1 MiB kernel section entry: L1[va >> 20] = pa | attrs (r4 = table). */
.macro kernel_section va, pa, attrs
    ldr r1, =((\pa) | (\attrs))
    ldr r2, =(((\va) >> 20) * 4)
    str r1, [r4, r2]
.endm

    .section .boot.entry, "ax"
    .global _start
_start:
    /* SVC mode, IRQ, FIQ and asynchronous aborts masked. */
    cpsid aif, #MODE_SVC
    bl cpu_reset_state

    /* Only core 0 comes in here; any other core waits for good. */
    mrc p15, 0, r0, c0, c0, 5           @ MPIDR
    ands r0, r0, #3
    bne park

    /* Clear .bss, through its physical address. */
    ldr r1, =(__bss_start - PHYS_OFFSET)
    ldr r2, =(__bss_end - PHYS_OFFSET)
    mov r3, #0
1:  cmp r1, r2
    strlo r3, [r1], #4
    blo 1b

    /*
     * The kernel's L1 table.  The loader zeroed nothing but .bss is clear
     * now, so every other entry is a fault.
     */
    ldr r4, =(kernel_l1 - PHYS_OFFSET)
    /*
     * Identity-map the MiB holding this code, so the instruction after the
     * one that enables the MMU is still fetched.  It sits below 2 GiB, in
     * TTBR0's half, and disappears when the core loads the empty TTBR0 table.
     */
    kernel_section KERNEL_PBASE, KERNEL_PBASE, L1_SECT_NORMAL | L1_SECT_KRW
    /* The direct map of all RAM. */
    ldr r1, =(RAM_PBASE | L1_SECT_NORMAL | L1_SECT_KRW)
    add r2, r4, #((KERNEL_VBASE >> 20) * 4)
    mov r3, #(RAM_SIZE >> 20)
2:  str r1, [r2], #4
    add r1, r1, #0x100000
    subs r3, r3, #1
    bne 2b
    /* Devices: the MPCore private region with the L2C-310, WDOG1 and SRC, UART2. */
    kernel_section DEVICE_VA(MPCORE_PBASE), MPCORE_PBASE, L1_SECT_DEVICE | L1_SECT_KRW
    kernel_section DEVICE_VA(SRC_PBASE & 0xFFF00000), SRC_PBASE & 0xFFF00000, L1_SECT_DEVICE | L1_SECT_KRW
    kernel_section DEVICE_VA(UART2_PBASE & 0xFFF00000), UART2_PBASE & 0xFFF00000, L1_SECT_DEVICE | L1_SECT_KRW
    dsb

    mov r0, #0
    b mmu_on

/*
 * Secondary cores, released by the SRC (smp.c).  The L1 table is core 0's,
 * already complete and cleaned to memory.
 */
    .global secondary_start
secondary_start:
    cpsid aif, #MODE_SVC
    bl cpu_reset_state
    mrc p15, 0, r0, c0, c0, 5
    and r0, r0, #3
    b mmu_on

park:
    wfe
    b park

/*
 * Turn on the MMU with kernel_l1 in both TTBRs and jump high.  r0 = core.
 * TTBCR.N = 1: addresses below 2 GiB walk TTBR0's table, the others
 * TTBR1's.  ACTLR.SMP must be set before the caches are enabled, or this
 * core's cached lines would not be kept coherent by the SCU.
 */
mmu_on:
    ldr r4, =(kernel_l1 - PHYS_OFFSET)
    orr r1, r4, #TTBR_ATTRS
    mcr p15, 0, r1, c2, c0, 0           @ TTBR0
    mcr p15, 0, r1, c2, c0, 1           @ TTBR1
    mov r1, #1
    mcr p15, 0, r1, c2, c0, 2           @ TTBCR: N = 1
    mov r1, #1
    mcr p15, 0, r1, c3, c0, 0           @ DACR: domain 0 client, others no access
    mov r1, #0
    mcr p15, 0, r1, c13, c0, 1          @ CONTEXTIDR: ASID 0
    mrc p15, 0, r1, c1, c0, 1           @ ACTLR
    orr r1, r1, #(ACTLR_SMP | ACTLR_FW)
    mcr p15, 0, r1, c1, c0, 1
    mov r1, #0
    mcr p15, 0, r1, c8, c7, 0           @ TLBIALL
    dsb
    isb
    mrc p15, 0, r1, c1, c0, 0           @ SCTLR
    ldr r2, =(SCTLR_M | SCTLR_C | SCTLR_Z | SCTLR_I)
    orr r1, r1, r2
    mcr p15, 0, r1, c1, c0, 0
    isb
    ldr pc, =high_entry

/*
 * Put the core in a known state whatever the loader left: MMU, caches,
 * alignment checks, TEX remap, access flag and Thumb exceptions off, and
 * the L1 caches, branch predictor and TLB invalidated.  After a reset the
 * A9's L1 data cache holds random contents, which must be invalidated (not
 * cleaned) before the cache is enabled.  Uses r1-r7.
 */
cpu_reset_state:
    mrc p15, 0, r1, c1, c0, 0
    ldr r2, =(SCTLR_M | SCTLR_A | SCTLR_C | SCTLR_I | SCTLR_V | SCTLR_TRE | SCTLR_AFE | SCTLR_TE)
    bic r1, r1, r2
    mcr p15, 0, r1, c1, c0, 0
    isb
    mov r1, #0
    mcr p15, 0, r1, c7, c5, 0           @ ICIALLU
    mcr p15, 0, r1, c7, c5, 6           @ BPIALL
    mcr p15, 0, r1, c8, c7, 0           @ TLBIALL
    /* L1 data cache, by set and way (CCSIDR gives the geometry). */
    mcr p15, 2, r1, c0, c0, 0           @ CSSELR: level 1 data
    isb
    mrc p15, 1, r1, c0, c0, 0           @ CCSIDR
    and r2, r1, #7
    add r2, r2, #4                      @ r2 = log2(line bytes): the set shift
    ubfx r3, r1, #3, #10                @ r3 = ways - 1
    ubfx r4, r1, #13, #15               @ r4 = sets - 1
    clz r5, r3                          @ r5 = the way shift
3:  mov r6, r4
4:  lsl r7, r3, r5
    orr r7, r7, r6, lsl r2
    mcr p15, 0, r7, c7, c6, 2           @ DCISW
    subs r6, r6, #1
    bge 4b
    subs r3, r3, #1
    bge 3b
    dsb
    isb
    bx lr

    .ltorg

/*
 * Running at the kernel's virtual addresses now.  r0 = core.
 */
    .text
high_entry:
    /* SVC stack: this core's kernel stack; TPIDRPRW keeps its top for the entry code. */
    ldr r1, =kernel_stacks
    add r1, r1, r0, lsl #KSTACK_BITS
    add r1, r1, #(1 << KSTACK_BITS)
    sub sp, r1, #KSTACK_RESERVED
    mcr p15, 0, r1, c13, c0, 4          @ TPIDRPRW
    /* Abort and undefined-mode stacks: used only when the kernel itself faults. */
    ldr r1, =abort_stacks
    ldr r2, =(XSTACK_SIZE)
    mla r3, r0, r2, r1
    add r3, r3, r2
    cps #MODE_ABT
    mov sp, r3
    ldr r1, =undef_stacks
    mla r3, r0, r2, r1
    add r3, r3, r2
    cps #MODE_UND
    mov sp, r3
    cps #MODE_SVC
    /* Exception vectors (VBAR: the A9 has the Security Extensions). */
    ldr r1, =vectors
    mcr p15, 0, r1, c12, c0, 0
    /* Drop the identity map: TTBR0 walks the empty table from now on. */
    ldr r1, =(empty_l1 - PHYS_OFFSET)
    orr r1, r1, #TTBR_ATTRS
    mcr p15, 0, r1, c2, c0, 0
    isb
    mov r1, #0
    mcr p15, 0, r1, c8, c7, 0           @ TLBIALL: the identity entry was global
    dsb
    isb
    mov fp, #0
    cmp r0, #0
    bne arch_init_secondary
    b arch_init_boot_core

    .bss
    .balign 8
    .global kernel_stacks
kernel_stacks:
    .space NCPUS << KSTACK_BITS
abort_stacks:
    .space NCPUS * XSTACK_SIZE
undef_stacks:
    .space NCPUS * XSTACK_SIZE
