/*
 * trap_regs_call (posix_trap_regs.c): every register from trap_regs_before,
 * a call to __posix_syscall_trap with sp 8-byte aligned or not
 * (trap_regs_misalign), every register into trap_regs_after; lr is the
 * call's own return address, trap_regs_return.  Offsets are those of
 * struct trap_regs (trap_regs.h).  Nothing after the call sets flags
 * before they are stored.
 */
    .syntax unified
    .arm
    .text
    .global trap_regs_call
    .global trap_regs_return
trap_regs_call:
    push {r4-r11, lr}
    sub sp, sp, #4
    ldr r0, =trap_regs_misalign
    ldr r0, [r0]
    lsl r0, r0, #2
    sub sp, sp, r0
    ldr r0, =trap_regs_before
    str sp, [r0, #52]
    ldr r1, [r0, #64]
    msr APSR_nzcvq, r1
    ldm r0, {r0-r12}
    bl __posix_syscall_trap
trap_regs_return:
    push {r0, r1}
    ldr r0, =trap_regs_after
    add r1, r0, #8
    stm r1, {r2-r12}
    pop {r1}
    str r1, [r0]
    pop {r1}
    str r1, [r0, #4]
    str sp, [r0, #52]
    str lr, [r0, #56]
    mrs r1, APSR
    str r1, [r0, #64]
    ldr r0, =trap_regs_misalign
    ldr r0, [r0]
    lsl r0, r0, #2
    add sp, sp, r0
    add sp, sp, #4
    pop {r4-r11, pc}
    .ltorg

    .section .note.GNU-stack, "", %progbits
