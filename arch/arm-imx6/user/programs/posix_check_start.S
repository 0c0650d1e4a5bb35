/*
 * Entry and exit of the loader's test program (userland/programs/posix_check.c),
 * arm-imx6.  _start: the loader starts the main thread here with sp at argc
 * (the Linux start layout); posix_check_main() gets that sp, and checks its
 * alignment itself.  posix_check_exit(status): Linux's exit_group (EABI:
 * number in r7, status in r0) with `svc #0`, which the kernel does not
 * know: the root task's fault server takes it as the exit.
 */
    .syntax unified
    .arm

    .section .text.start, "ax"
    .global _start
_start:
    mov r0, sp
    mov fp, #0
    bl posix_check_main
1:  udf #0
    b 1b

    .text
    .global posix_check_exit
posix_check_exit:
    mov r7, #248
    svc #0
1:  udf #0
    b 1b
