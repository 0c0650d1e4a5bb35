/*
 * What the root task's POSIX loader (userland/roottask/posix_process.c)
 * needs to know of the port (x86_64): the ELF header fields of a program
 * for this machine, the layout of its program headers, the auxiliary
 * vector's hardware capabilities, the stack alignment at process entry and
 * the Linux number of exit_group (docs/posix-loader.md).
 */
#ifndef POSIX_ARCH_H
#define POSIX_ARCH_H

#include <abi/types.h>

#define ARCH_ELF_CLASS      2       /* ELFCLASS64 */
#define ARCH_ELF_MACHINE    62      /* EM_X86_64 */
#define ARCH_ELF_MACHINE_NAME "x86-64"

/* The System V x86-64 psABI: rsp is 16-byte aligned at the entry point, where argc is. */
#define ARCH_ENTRY_SP_ALIGN 16

/* Linux's exit_group on x86-64: a thread that makes it with `syscall` ends its process. */
#define ARCH_LINUX_EXIT_GROUP 231

/* The first address above user space (the kernel's USER_TOP): no segment may reach it. */
#define ARCH_POSIX_USER_TOP 0x00007ffffffff000UL

struct elf_phdr {
    uint32_t p_type;
    uint32_t p_flags;
    uint64_t p_offset;
    uint64_t p_vaddr;
    uint64_t p_paddr;
    uint64_t p_filesz;
    uint64_t p_memsz;
    uint64_t p_align;
};

_Static_assert(sizeof(struct elf_phdr) == 56, "Elf64_Phdr");

/* AT_HWCAP as Linux gives it on x86-64: CPUID leaf 1's EDX, which user mode may read itself. */
static inline word_t arch_posix_hwcap(void)
{
    uint32_t a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return d;
}

/* AT_HWCAP2: bit 1 would say that user mode may use FSGSBASE, which no thread here may. */
static inline word_t arch_posix_hwcap2(void)
{
    return 0;
}

/* The frame a process reads its clock from (docs/posix-loader.md): none, the TSC is readable. */
static inline cptr_t arch_posix_clock_frame(void)
{
    return 0;
}

#endif
