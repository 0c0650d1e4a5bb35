/*
 * The application processors' first code.  A STARTUP IPI starts an AP in
 * real mode at CS:IP = (page * 256):0, so smp.c copies this block to
 * TRAMPOLINE_PADDR (below 1 MiB, page aligned) and fills in the data words at
 * its end.  The AP goes straight from real mode to long mode (PAE, CR3,
 * EFER.LME, then CR0.PG|PE and a far jump to a 64-bit segment), on the
 * trampoline PML4 that still identity-maps this page, and jumps to its C entry
 * in the upper half with its own kernel stack.
 */
#include <arch/machine.h>

#define TRAMPOLINE_PADDR 0x8000
#define T(x) ((x) - trampoline_start + TRAMPOLINE_PADDR)

    .section .rodata
    .balign 16
    .global trampoline_start, trampoline_end
    .global trampoline_cr3, trampoline_efer, trampoline_stack, trampoline_entry, trampoline_core
trampoline_start:
    .code16
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    lgdtl T(tr_gdt_ptr)
    movl %cr4, %eax
    orl $(1 << 5), %eax                 /* PAE */
    movl %eax, %cr4
    movl T(trampoline_cr3), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx              /* EFER: LME, and NXE when the boot core found NX */
    rdmsr
    orl T(trampoline_efer), %eax
    wrmsr
    movl $0x80010001, %eax              /* PG, WP, PE */
    movl %eax, %cr0
    ljmpl $0x08, $T(tr_long)

    .code64
tr_long:
    movl $0x10, %eax
    movl %eax, %ds
    movl %eax, %es
    movl %eax, %ss
    movq T(trampoline_stack), %rsp
    movl T(trampoline_core), %edi
    xorl %ebp, %ebp
    movq T(trampoline_entry), %rax
    jmpq *%rax

    .balign 8
tr_gdt:
    .quad 0
    .quad 0x00af9a000000ffff            /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff            /* 0x10: data */
tr_gdt_ptr:
    .word tr_gdt_ptr - tr_gdt - 1
    .long T(tr_gdt)

    .balign 8
trampoline_cr3:     .quad 0
trampoline_efer:    .quad 0
trampoline_stack:   .quad 0
trampoline_entry:   .quad 0
trampoline_core:    .quad 0
trampoline_end:

    .section .note.GNU-stack, "", @progbits
