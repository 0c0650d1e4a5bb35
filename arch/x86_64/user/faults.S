/*
 * Instructions that fault on purpose, for the in-guest test suite.  Each
 * function has a label on the faulting instruction (_at) and one after it
 * (_resume); a fault handler resumes the thread at _resume to skip it.
 */
#define SKIPPED 0x5a5a

    .text

    .global arch_fault_illegal, arch_fault_illegal_at, arch_fault_illegal_resume
arch_fault_illegal:
    xor %eax, %eax
arch_fault_illegal_at:
    ud2
arch_fault_illegal_resume:
    mov $SKIPPED, %eax
    ret

    /* A load through a non-canonical address raises #GP, not #PF. */
    .global arch_fault_general, arch_fault_general_at, arch_fault_general_resume
arch_fault_general:
    movabs $0x8000000000000000, %rdx
arch_fault_general_at:
    mov (%rdx), %rax
arch_fault_general_resume:
    mov $SKIPPED, %eax
    ret

    .global arch_fault_divide, arch_fault_divide_at, arch_fault_divide_resume
arch_fault_divide:
    xor %ecx, %ecx
    xor %edx, %edx
    mov $1, %eax
arch_fault_divide_at:
    div %ecx
arch_fault_divide_resume:
    mov $SKIPPED, %eax
    ret

    .global arch_fault_read, arch_fault_read_at, arch_fault_read_resume
arch_fault_read:
arch_fault_read_at:
    mov (%rdi), %rax
    ret
arch_fault_read_resume:
    mov $SKIPPED, %eax
    ret

    .global arch_fault_write, arch_fault_write_at, arch_fault_write_resume
arch_fault_write:
arch_fault_write_at:
    movq $1, (%rdi)
    xor %eax, %eax
    ret
arch_fault_write_resume:
    mov $SKIPPED, %eax
    ret

    /* An unknown system call number is a fault (abi/faults.h). */
    .global arch_fault_syscall, arch_fault_syscall_at, arch_fault_syscall_resume
arch_fault_syscall:
    push %r15
    mov %rdi, %rax
    xor %edi, %edi
    xor %esi, %esi
arch_fault_syscall_at:
    syscall
    xor %eax, %eax
    pop %r15
    ret
arch_fault_syscall_resume:
    mov $SKIPPED, %eax
    pop %r15
    ret

    .section .note.GNU-stack, "", @progbits
