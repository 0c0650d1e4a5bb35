/*
 * Entry points of user code (x86_64).
 *
 * _start: the kernel starts the root task at the ELF entry.  Rather than
 * trust the stack the kernel set up, the root task switches to a static
 * stack in .bss, aligned to its size like every thread stack, because the
 * per-thread block (userland/include/thread.h) sits at the lowest address
 * of the stack and is found by masking the stack pointer.  .bss is cleared
 * first in case the loader did not.
 *
 * _thread_start: threads made by thread.c start here with their start
 * arguments in callee-saved registers (arch_user.h), and call thread_entry().
 */
#define STACK_SIZE 16384

    .section .text.start, "ax"
    .global _start
_start:
    mov $__bss_start, %rdi
    mov $__bss_end, %rcx
    sub %rdi, %rcx
    xor %eax, %eax
    cld
    rep stosb
    mov $(root_stack + STACK_SIZE), %rsp
    xor %ebp, %ebp
    call root_entry
1:  ud2
    jmp 1b

    .text
    .global _thread_start
_thread_start:
    mov %r12, %rdi
    mov %r13, %rsi
    mov %r14, %rdx
    mov %rbx, %rcx
    and $-16, %rsp
    xor %ebp, %ebp
    call thread_entry
1:  ud2
    jmp 1b

    .bss
    .balign STACK_SIZE
    .global root_stack
root_stack:
    .skip STACK_SIZE

    .section .note.GNU-stack, "", @progbits
