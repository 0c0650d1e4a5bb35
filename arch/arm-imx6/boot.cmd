# U-Boot boot script for the Sabre Lite (docs/arm-imx6.md).  Compiled into
# boot.scr by `make uimage ARCH=arm-imx6`.
#
# It loads cmdline.txt and uImage from wherever it was itself found:
# - from a disk, when U-Boot's distro boot found it (devtype, devnum and
#   distro_bootpart are set) or Boundary Devices' bootcmd did (dtype and disk);
# - otherwise from the TFTP server, as after `dhcp ${scriptaddr} boot.scr`.
#
# The command line is a text file, loaded at the fixed physical address the
# kernel reads it from.  The page is cleared first, because neither load nor
# tftpboot adds the NUL that ends the text.
setenv cmdline_addr 0x1ff00000
setenv uimage_addr 0x12000000
mw.b ${cmdline_addr} 0 0x1000

setenv bootdisk
if test -n "${devtype}"; then
    setenv bootdisk "${devtype} ${devnum}:${distro_bootpart}"
elif test -n "${dtype}"; then
    setenv bootdisk "${dtype} ${disk}:1"
fi

if test -n "${bootdisk}"; then
    load ${bootdisk} ${cmdline_addr} cmdline.txt
    load ${bootdisk} ${uimage_addr} uImage
else
    tftpboot ${cmdline_addr} cmdline.txt
    tftpboot ${uimage_addr} uImage
fi

# bootm copies the kernel from uimage_addr to its load address (0x10000000),
# turns off and cleans the caches and the MMU, and jumps to the entry point in
# SVC mode.  U-Boot copied this script out of uimage_addr before running it.
# A U-Boot built without ATAGS boots a Linux-type image only with a device
# tree, so hand it U-Boot's own (fdtcontroladdr); the kernel ignores it.
if test -n "${fdtcontroladdr}"; then
    bootm ${uimage_addr} - ${fdtcontroladdr}
else
    bootm ${uimage_addr}
fi
