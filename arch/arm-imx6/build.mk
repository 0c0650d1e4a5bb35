# arm-imx6: the i.MX6 Quad (Sabre Lite, four Cortex-A9 MPCore cores), built
# with Debian's gcc-arm-none-eabi (docs/arm-imx6.md).
#
# -marm: the kernel and user code are ARM (A32) code; the exception entry
#   code and the restart rule (pc -= 4 after SVC) assume it.
# -mfloat-abi=soft: no VFP/NEON state to save; the kernel never enables VFP.
# -mno-unaligned-access: device registers and page tables are accessed
#   with natural alignment only, and the kernel may run with the MMU off.
# The A9 has no divide instruction: libgcc provides __aeabi_uidiv and co.
KCC         := arm-none-eabi-gcc
LOCK_ARCH   := armv7
ARCH_LIBGCC := -lgcc

ARM_CPU       := -mcpu=cortex-a9 -marm -mfloat-abi=soft
ARCH_KCFLAGS  := $(ARM_CPU) -mno-unaligned-access -fno-pic -fno-omit-frame-pointer \
                 -fno-asynchronous-unwind-tables -fno-unwind-tables
# kernel/fastpath.c (Makefile): no frame pointer, which frees r11 for the
# values the lock keeps across the fastpath.  The x86_64 set, which also
# makes r4-r10 call-clobbered, gives longer code here (docs/locking.md,
# "Cost per entry").
ARCH_FASTPATH_CFLAGS := -fomit-frame-pointer
ARCH_KASFLAGS := $(ARM_CPU) -D__ASSEMBLY__
ARCH_KLDFLAGS := $(ARM_CPU) -Wl,--build-id=none -Wl,-z,max-page-size=0x1000 -Wl,--no-warn-rwx-segments
ARCH_KERNEL_SRC := $(wildcard arch/arm-imx6/*.c arch/arm-imx6/*.S)

ARCH_UCFLAGS  := $(ARM_CPU) -fno-pic -fno-asynchronous-unwind-tables -fno-unwind-tables
ARCH_UASFLAGS := $(ARM_CPU) -D__ASSEMBLY__
ARCH_ULDFLAGS := $(ARM_CPU) -Wl,--build-id=none -Wl,-z,max-page-size=0x1000 -Wl,--no-warn-rwx-segments
ARCH_USER_SRC := $(wildcard arch/arm-imx6/user/*.c arch/arm-imx6/user/*.S)

# U-Boot images for the real board (docs/arm-imx6.md): the kernel as a raw
# binary wrapped in a uImage whose load address is the ELF's first physical
# load address and whose entry is the ELF's entry (both physical: the
# kernel starts with the MMU off), plus the boot script boot.scr.
ARCH_UIMAGE := $(BUILD)/uImage $(BUILD)/boot.scr

ARM_READELF := arm-none-eabi-readelf
ARM_OBJCOPY := arm-none-eabi-objcopy

$(BUILD)/kernel.bin: $(BUILD)/kernel.elf
	$(ARM_OBJCOPY) -O binary $< $@

$(BUILD)/uImage: $(BUILD)/kernel.bin $(BUILD)/kernel.elf
	@command -v mkimage >/dev/null || { echo "mkimage not found: apt-get install u-boot-tools (or make deps)"; exit 1; }
	load=$$($(ARM_READELF) -lW $(BUILD)/kernel.elf | awk '$$1 == "LOAD" { print $$4; exit }'); \
	entry=$$($(ARM_READELF) -hW $(BUILD)/kernel.elf | awk '/Entry point address/ { print $$4 }'); \
	mkimage -A arm -O linux -T kernel -C none -a $$load -e $$entry \
	        -n "microkernel $(VARIANT) $(GIT_REV)" -d $(BUILD)/kernel.bin $@
	@echo "built $@"

$(BUILD)/boot.scr: arch/arm-imx6/boot.cmd
	@mkdir -p $(BUILD)
	@command -v mkimage >/dev/null || { echo "mkimage not found: apt-get install u-boot-tools (or make deps)"; exit 1; }
	mkimage -A arm -O linux -T script -C none -n "microkernel boot script" -d $< $@
	@echo "built $@"
