/*
 * What the root task's POSIX loader (userland/roottask/posix_process.c)
 * needs to know of the port (arm-imx6): the ELF header fields of a program
 * for this machine, the layout of its program headers, the auxiliary
 * vector's hardware capabilities, the stack alignment at process entry,
 * the Linux number of exit_group and the clock page (docs/posix-loader.md).
 */
#ifndef POSIX_ARCH_H
#define POSIX_ARCH_H

#include <abi/types.h>

#define ARCH_ELF_CLASS      1       /* ELFCLASS32 */
#define ARCH_ELF_MACHINE    40      /* EM_ARM */
#define ARCH_ELF_MACHINE_NAME "ARM"

/* The AAPCS: sp is 8-byte aligned at a public interface, the entry point included. */
#define ARCH_ENTRY_SP_ALIGN 8

/* Linux's exit_group on ARM EABI: a thread that makes it with `svc #0` ends its process. */
#define ARCH_LINUX_EXIT_GROUP 248

/* The first address above user space (the kernel's USER_TOP): no segment may reach it. */
#define ARCH_POSIX_USER_TOP 0x80000000UL

struct elf_phdr {
    uint32_t p_type;
    uint32_t p_offset;
    uint32_t p_vaddr;
    uint32_t p_paddr;
    uint32_t p_filesz;
    uint32_t p_memsz;
    uint32_t p_flags;
    uint32_t p_align;
};

_Static_assert(sizeof(struct elf_phdr) == 32, "Elf32_Phdr");

/*
 * AT_HWCAP as Linux's arch/arm/include/uapi/asm/hwcap.h numbers it, for
 * what a Cortex-A9 offers a soft-float program: SWP, HALF, THUMB,
 * FAST_MULT, EDSP and TLS.  TLS says that the thread pointer is in
 * TPIDRURO (musl's __set_thread_area relies on it).  No VFP or NEON: the
 * kernel does not switch their state.
 */
#define ARM_HWCAP_SWP       (1u << 0)
#define ARM_HWCAP_HALF      (1u << 1)
#define ARM_HWCAP_THUMB     (1u << 2)
#define ARM_HWCAP_FAST_MULT (1u << 4)
#define ARM_HWCAP_EDSP      (1u << 7)
#define ARM_HWCAP_TLS       (1u << 15)

static inline word_t arch_posix_hwcap(void)
{
    return ARM_HWCAP_SWP | ARM_HWCAP_HALF | ARM_HWCAP_THUMB | ARM_HWCAP_FAST_MULT |
           ARM_HWCAP_EDSP | ARM_HWCAP_TLS;
}

static inline word_t arch_posix_hwcap2(void)
{
    return 0;
}

/*
 * The frame a process reads its clock from: the page of the MPCore global
 * timer that cycles.c mapped for the root task (0 if it could not).
 */
extern cptr_t arm_global_timer_frame;

static inline cptr_t arch_posix_clock_frame(void)
{
    return arm_global_timer_frame;
}

#endif
