/*
 * Entry points of user code (arm-imx6).
 *
 * _start: the kernel starts the root task at the ELF entry.  It clears
 * .bss, switches to a static stack aligned to its size (the per-thread
 * block, userland/include/thread.h, sits at the lowest address of every
 * stack and is found by masking sp), maps the cycle counter (cycles.c) and
 * calls root_entry().
 *
 * _thread_start: threads made by thread.c start here with their start
 * arguments in r8..r11 (arch_user.h) and call thread_entry(fn, arg,
 * ipcbuf, self).  AAPCS wants sp 8-byte aligned at calls.
 */
#define STACK_SIZE 16384

    .syntax unified
    .arm

    .section .text.start, "ax"
    .global _start
_start:
    ldr r0, =__bss_start
    ldr r1, =__bss_end
    mov r2, #0
1:  cmp r0, r1
    strlo r2, [r0], #4
    blo 1b
    ldr sp, =(root_stack + STACK_SIZE)
    mov fp, #0
    bl arm_user_init
    bl root_entry
2:  udf #0
    b 2b
    .ltorg

    .text
    .global _thread_start
_thread_start:
    mov r0, r8
    mov r1, r9
    mov r2, r10
    mov r3, r11
    bic sp, sp, #7
    mov fp, #0
    bl thread_entry
1:  udf #0
    b 1b

    .bss
    .balign STACK_SIZE
    .global root_stack
root_stack:
    .skip STACK_SIZE
