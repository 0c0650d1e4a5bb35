# U-Boot boot script for the Sabre Lite (docs/arm-imx6.md).  Compiled into
# boot.scr by `make uimage ARCH=arm-imx6`; U-Boot's default bootcmd runs
# boot.scr from the first partition of the SD card.
#
# The boot command line: a text file on the card, loaded at the fixed
# physical address the kernel reads it from.  The page is cleared first,
# because fatload does not add the NUL that ends the text.
setenv cmdline_addr 0x1ff00000
mw.b ${cmdline_addr} 0 0x1000
fatload mmc 0:1 ${cmdline_addr} cmdline.txt

# The kernel: bootm copies it from 0x12000000 to its load address
# (0x10000000), turns off and cleans the caches and the MMU, and jumps to
# the entry point in SVC mode.
fatload mmc 0:1 0x12000000 uImage
bootm 0x12000000
