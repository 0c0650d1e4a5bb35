/*
 * The POSIX program embedded in the root task's image (docs/posix-loader.md):
 * the bytes of the file `make POSIX_PROGRAM=...` names, copied by the
 * Makefile to POSIX_PROGRAM_IMAGE (empty when no program is given), between
 * posix_program_start and posix_program_end.  The loader
 * (posix_process.c) checks them as an ELF before it uses anything.
 */
    .section .rodata.posix_program, "a"
    .balign 16
    .global posix_program_start
posix_program_start:
    .incbin POSIX_PROGRAM_IMAGE
    .global posix_program_end
posix_program_end:

    .section .note.GNU-stack, "", %progbits
