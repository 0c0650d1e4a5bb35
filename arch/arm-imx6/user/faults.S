/*
 * Instructions that fault on purpose, for the in-guest test suite.  Each
 * function has a label on the faulting instruction (_at) and one after it
 * (_resume); a fault handler resumes the thread at _resume to skip it.
 */
#define SKIPPED 0x5a5a

    .syntax unified
    .arm
    .text

    .global arch_fault_illegal, arch_fault_illegal_at, arch_fault_illegal_resume
arch_fault_illegal:
    mov r0, #0
arch_fault_illegal_at:
    udf #0
arch_fault_illegal_resume:
    ldr r0, =SKIPPED
    bx lr

    /* LDM needs a word-aligned address whatever SCTLR.A says: an alignment fault. */
    .global arch_fault_general, arch_fault_general_at, arch_fault_general_resume
arch_fault_general:
    push {r4, r5}
    add r1, sp, #1
arch_fault_general_at:
    ldm r1, {r4, r5}
arch_fault_general_resume:
    pop {r4, r5}
    ldr r0, =SKIPPED
    bx lr

    /* UDIV r0, r0, r1: undefined on the Cortex-A9 (no divide instructions). */
    .global arch_fault_divide, arch_fault_divide_at, arch_fault_divide_resume
arch_fault_divide:
    mov r0, #1
    mov r1, #0
arch_fault_divide_at:
    .inst 0xe730f110
arch_fault_divide_resume:
    ldr r0, =SKIPPED
    bx lr

    .global arch_fault_read, arch_fault_read_at, arch_fault_read_resume
arch_fault_read:
arch_fault_read_at:
    ldr r0, [r0]
    bx lr
arch_fault_read_resume:
    ldr r0, =SKIPPED
    bx lr

    .global arch_fault_write, arch_fault_write_at, arch_fault_write_resume
arch_fault_write:
    mov r1, #1
arch_fault_write_at:
    str r1, [r0]
    mov r0, #0
    bx lr
arch_fault_write_resume:
    ldr r0, =SKIPPED
    bx lr

    /* An unknown system call number is a fault (abi/faults.h). */
    .global arch_fault_syscall, arch_fault_syscall_at, arch_fault_syscall_resume
arch_fault_syscall:
    push {r4, r5, r7, lr}
    mov r7, r0
    mov r0, #0
    mov r1, #0
arch_fault_syscall_at:
    svc #0
    mov r0, #0
    pop {r4, r5, r7, pc}
arch_fault_syscall_resume:
    ldr r0, =SKIPPED
    pop {r4, r5, r7, pc}
    .ltorg
