/*
 * The physical and virtual memory map of the arm-imx6 port (docs/arm-imx6.md).
 * Shared by C and assembly: constants only.
 *
 * Physical (i.MX6 Quad reference manual, memory map chapter):
 *   0x00A00000  Cortex-A9 MPCore private region: SCU +0, GIC CPU interface
 *               +0x100, global timer +0x200, private timers +0x600, GIC
 *               distributor +0x1000; the L2C-310 (PL310) at 0x00A02000
 *   0x020BC000  WDOG1 (board reset)
 *   0x020D8000  SRC, the System Reset Controller (secondary cores)
 *   0x021E8000  UART2, the Sabre Lite's console
 *   0x10000000  DDR (1 GiB on the Sabre Lite); the kernel is loaded here
 *   0x1FF00000  the boot command line blob (tools/qemu_run.py, boot.cmd)
 *
 * Virtual, with TTBCR.N = 1 (TTBR0 walks below 2 GiB, TTBR1 above):
 *   0x00000000 .. 0x7FFFFFFF  user (each VSpace's L1 table, via TTBR0)
 *   0x80000000 .. 0xBFFFFFFF  direct map of DDR: virtual = physical + PHYS_OFFSET
 *   0xF0000000 .. 0xFFFFFFFF  device window: virtual = DEVICE_VBASE + physical
 * All kernel mappings are global (nG = 0) 1 MiB sections in kernel_l1.
 */
#ifndef ARCH_MEMLAYOUT_H
#define ARCH_MEMLAYOUT_H

#define RAM_PBASE        0x10000000
#define RAM_SIZE         0x40000000     /* the Sabre Lite's 1 GiB; QEMU: -m 1G */
#define KERNEL_PBASE     RAM_PBASE
#define KERNEL_VBASE     0x80000000
#define PHYS_OFFSET      (KERNEL_VBASE - RAM_PBASE)
#define DEVICE_VBASE     0xF0000000

#define MPCORE_PBASE     0x00A00000
#define SCU_OFFSET       0x0000
#define GICC_OFFSET      0x0100
#define GTIMER_OFFSET    0x0200
#define PTIMER_OFFSET    0x0600
#define GICD_OFFSET      0x1000
#define L2C_PBASE        0x00A02000
#define ENET_PBASE       0x02188000      /* user level drives it: only handed out as device untyped */
#define ENET_SIZE        0x4000
#define WDOG1_PBASE      0x020BC000
#define SRC_PBASE        0x020D8000
#define UART2_PBASE      0x021E8000

#define CMDLINE_PADDR    0x1FF00000
#define CMDLINE_MAX      4096

#define DEVICE_VA(pa)    (DEVICE_VBASE + (pa))

/* Kernel and exception-mode stacks, per core. */
#define KSTACK_BITS      14             /* 16 KiB SVC-mode kernel stack */
/* Bytes at the top of each kernel stack kept out of the stack: per-core
 * words (struct arm_stack_top_words, machine.h); a multiple of 8, the
 * stack alignment of the AAPCS. */
#define KSTACK_RESERVED  16
#define XSTACK_SIZE      2048           /* abort / undefined mode stacks (kernel faults only) */

/* Processor modes (CPSR.M) and mask bits. */
#define MODE_USR         0x10
#define MODE_FIQ         0x11
#define MODE_IRQ         0x12
#define MODE_SVC         0x13
#define MODE_ABT         0x17
#define MODE_UND         0x1B
#define MODE_SYS         0x1F
#define MODE_MASK        0x1F
#define PSR_F            (1 << 6)
#define PSR_I            (1 << 7)
#define PSR_A            (1 << 8)

#endif
