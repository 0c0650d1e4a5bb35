/*
 * The boot core's entry: multiboot v1 (QEMU -kernel, GRUB) hands over in
 * 32-bit protected mode with paging off, EAX = 0x2BADB002 and EBX = the
 * physical address of the multiboot information.  This code builds the early
 * page tables, enters long mode and calls x86_boot_main(magic, mbi) in the
 * upper half on core 0's kernel stack.
 *
 * Early page tables (all in .bss, physical = virtual - KERNEL_VMA):
 *   PML4[0]   -> pdpt_direct   identity map of 0..4 GiB, only while switching
 *   PML4[256] -> pdpt_direct   direct map of 0..4 GiB at DIRECT_MAP_BASE
 *   PML4[511] -> pdpt_kernel   [510] maps 0..1 GiB at KERNEL_VMA
 * all through four page directories of 2 MiB pages (no 1 GiB pages: KVM
 * guests on the build machines lack them).  x86_boot_main() drops the identity map
 * as soon as its GDT and IDT are at kernel addresses (the APs' trampoline has
 * a PML4 of its own), and memory.c extends the direct map beyond 4 GiB.
 */
#include <arch/machine.h>

#define PHYS(x)         ((x) - KERNEL_VMA)
#define MB_MAGIC        0x1BADB002
/* page-align modules, give a memory map, use the address fields below */
#define MB_FLAGS        ((1 << 0) | (1 << 1) | (1 << 16))

#define PTE_P   0x001
#define PTE_W   0x002
#define PTE_PS  0x080

    .section .multiboot, "a"
    .balign 4
    /*
     * The "a.out kludge" address fields: QEMU's multiboot loader refuses an
     * ELF64 image unless they are present, and GRUB honours them as well.
     * The image is one flat block (kernel.ld), so load_addr is the header.
     */
multiboot_header:
    .long MB_MAGIC
    .long MB_FLAGS
    .long -(MB_MAGIC + MB_FLAGS)
    .long PHYS(multiboot_header)    /* header_addr */
    .long PHYS(multiboot_header)    /* load_addr: the block starts with this header */
    .long PHYS(_load_end)           /* load_end_addr: end of .data */
    .long PHYS(_kernel_end)         /* bss_end_addr: the loader zeroes .bss */
    .long PHYS(_start)              /* entry_addr */

    .section .text.boot, "ax"
    .code32
    .global _start
_start:
    cli
    cld
    movl %eax, PHYS(boot_magic)
    movl %ebx, PHYS(boot_mbi)
    movl $PHYS(x86_kernel_stacks + KERNEL_STACK_SIZE), %esp

    /* Long mode (CPUID 0x80000001 EDX bit 29) is required. */
    movl $0x80000000, %eax
    cpuid
    cmpl $0x80000001, %eax
    jb no_long_mode
    movl $0x80000001, %eax
    cpuid
    testl $(1 << 29), %edx
    jz no_long_mode
    movl %edx, %ebp                 /* bit 20: NX exists */

    /* The loader zeroed .bss (multiboot bss_end_addr): unset entries below are empty. */

    /* Four page directories of 2 MiB pages covering 0..4 GiB (entries' high halves stay 0). */
    movl $PHYS(x86_boot_pd), %edi
    movl $(PTE_P | PTE_W | PTE_PS), %eax
    movl $2048, %ecx
1:  movl %eax, (%edi)
    addl $0x200000, %eax
    addl $8, %edi
    loop 1b

    /* pdpt_direct[0..3] -> the four directories. */
    movl $PHYS(x86_boot_pdpt_direct), %edi
    movl $(PHYS(x86_boot_pd) + PTE_P + PTE_W), %eax
    movl $4, %ecx
3:  movl %eax, (%edi)
    addl $4096, %eax
    addl $8, %edi
    loop 3b

    /* pdpt_kernel[510] -> the first directory: 0..1 GiB at KERNEL_VMA. */
    movl $(PHYS(x86_boot_pd) + PTE_P + PTE_W), PHYS(x86_boot_pdpt_kernel) + 510 * 8

    movl $(PHYS(x86_boot_pdpt_direct) + PTE_P + PTE_W), PHYS(x86_boot_pml4)
    movl $(PHYS(x86_boot_pdpt_direct) + PTE_P + PTE_W), PHYS(x86_boot_pml4) + 256 * 8
    movl $(PHYS(x86_boot_pdpt_kernel) + PTE_P + PTE_W), PHYS(x86_boot_pml4) + 511 * 8

    /* PAE, then the tables, then EFER.LME (and NXE when NX exists), then paging. */
    movl %cr4, %eax
    orl $(1 << 5), %eax
    movl %eax, %cr4
    movl $PHYS(x86_boot_pml4), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx
    rdmsr
    orl $(1 << 8), %eax
    testl $(1 << 20), %ebp
    jz 4f
    orl $(1 << 11), %eax
4:  wrmsr
    movl %cr0, %eax
    orl $((1 << 31) | (1 << 16) | 1), %eax     /* PG, WP, PE */
    movl %eax, %cr0

    lgdt PHYS(boot_gdt_ptr)
    ljmp $0x08, $PHYS(long_mode_low)

no_long_mode:
    /* Say why on COM1 (already set up by GRUB or QEMU's default), then stop. */
    movl $PHYS(no_long_mode_msg), %esi
5:  movb (%esi), %al
    testb %al, %al
    jz 7f
    movw $0x3f8, %dx
    outb %al, %dx
    incl %esi
    jmp 5b
7:  hlt
    jmp 7b

    .code64
long_mode_low:
    /* Still at the physical address: jump to the kernel's link address. */
    movabsq $long_mode_high, %rax
    jmpq *%rax
long_mode_high:
    movl $0x10, %eax
    movl %eax, %ds
    movl %eax, %es
    movl %eax, %ss
    xorl %eax, %eax
    movl %eax, %fs
    movl %eax, %gs
    movq $(x86_kernel_stacks + KERNEL_STACK_SIZE), %rsp
    xorl %ebp, %ebp
    movl boot_magic(%rip), %edi
    movl boot_mbi(%rip), %esi
    call x86_boot_main
    ud2

    .section .rodata
    .balign 16
    /* A minimal GDT for the switch; gdt.c loads the real one per core. */
boot_gdt:
    .quad 0
    .quad 0x00209a0000000000        /* 0x08: 64-bit kernel code */
    .quad 0x0000920000000000        /* 0x10: kernel data */
boot_gdt_end:
boot_gdt_ptr:
    .word boot_gdt_end - boot_gdt - 1
    .long PHYS(boot_gdt)
no_long_mode_msg:
    .asciz "x86_64: this CPU has no long mode; halting\r\n"

    .section .data
    .balign 4
boot_magic: .long 0
boot_mbi:   .long 0

    .section .bss
    .balign 4096
    .global x86_boot_pml4, x86_boot_pdpt_direct, x86_boot_pdpt_kernel, x86_boot_pd
x86_boot_pml4:          .skip 4096
x86_boot_pdpt_direct:   .skip 4096
x86_boot_pdpt_kernel:   .skip 4096
x86_boot_pd:            .skip 4 * 4096

    .section .note.GNU-stack, "", @progbits
