# x86_64: the host gcc builds a freestanding kernel in the upper half.
KCC        := gcc
LOCK_ARCH  := x86_64
ARCH_LIBGCC :=

ARCH_KCFLAGS  := -m64 -mcmodel=kernel -mno-red-zone -mgeneral-regs-only -fno-pic -fno-pie \
                 -fno-asynchronous-unwind-tables -fno-omit-frame-pointer
ARCH_KASFLAGS := -m64 -D__ASSEMBLY__
# kernel/fastpath.c (Makefile): no frame and no callee-saved registers to save.
ARCH_FASTPATH_CFLAGS := -fomit-frame-pointer -ffixed-rbp -fcall-used-rbx -fcall-used-r12 \
                        -fcall-used-r13 -fcall-used-r14 -fcall-used-r15
ARCH_KLDFLAGS := -m64 -no-pie -Wl,-n -Wl,--build-id=none -Wl,-z,max-page-size=0x1000 -Wl,--no-warn-rwx-segments -Wl,-z,noexecstack
ARCH_KERNEL_SRC := $(wildcard arch/x86_64/*.c arch/x86_64/*.S)

ARCH_UCFLAGS  := -m64 -mgeneral-regs-only -fno-pic -fno-pie -fno-asynchronous-unwind-tables
ARCH_UASFLAGS := -m64 -D__ASSEMBLY__
ARCH_ULDFLAGS := -m64 -no-pie -Wl,--build-id=none -Wl,-z,max-page-size=0x1000
ARCH_USER_SRC := $(wildcard arch/x86_64/user/*.c arch/x86_64/user/*.S)

# A GRUB rescue image that boots the same kernel on a real PC (docs/booting.md).
ARCH_ISO := $(BUILD)/kernel.iso
$(ARCH_ISO): $(KERNEL_ELF) arch/x86_64/grub.cfg
	@rm -rf $(BUILD)/iso && mkdir -p $(BUILD)/iso/boot/grub
	cp $(KERNEL_ELF) $(BUILD)/iso/boot/kernel.elf
	cp arch/x86_64/grub.cfg $(BUILD)/iso/boot/grub/grub.cfg
	grub-mkrescue -o $@ $(BUILD)/iso 2>$(BUILD)/grub-mkrescue.log || (cat $(BUILD)/grub-mkrescue.log; exit 1)
	@echo "built $@"

# The in-guest test of floating point as the compiler uses it keeps doubles in SSE registers
# (userland/tests/test_fpu_double.c): the one user file built without -mgeneral-regs-only.
$(OBJ)/user/userland/tests/test_fpu_double.c.o: ARCH_UCFLAGS := $(filter-out -mgeneral-regs-only,$(ARCH_UCFLAGS))
