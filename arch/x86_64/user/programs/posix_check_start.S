/*
 * Entry and exit of the loader's test program (userland/programs/posix_check.c),
 * x86_64.  _start: the loader starts the main thread here with rsp at argc
 * (the Linux start layout); posix_check_main() gets that rsp.  The check of
 * its alignment is the program's, so _start aligns nothing itself: a
 * misaligned rsp is reported, not hidden (the C code needs no more than
 * the call's own alignment to run, as it makes no SSE accesses).
 * posix_check_exit(status): Linux's exit_group with `syscall`, which the
 * kernel does not know: the root task's fault server takes it as the exit.
 */
    .section .text.start, "ax"
    .global _start
_start:
    mov %rsp, %rdi
    xor %ebp, %ebp
    call posix_check_main
1:  ud2
    jmp 1b

    .text
    .global posix_check_exit
posix_check_exit:
    mov $231, %eax
    syscall
1:  ud2
    jmp 1b

    .section .note.GNU-stack, "", @progbits
