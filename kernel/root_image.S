/*
 * The root task's ELF image, linked into the kernel so that one file boots
 * from QEMU -kernel, GRUB and U-Boot alike.  The Makefile passes ROOT_ELF.
 */
    .section .rodata.root_image, "a"
    .balign 16
    .global root_image_start, root_image_end
root_image_start:
    .incbin ROOT_ELF
root_image_end:
