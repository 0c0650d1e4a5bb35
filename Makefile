# The one Makefile.  Variables (docs/building.md):
#   ARCH    x86_64 | arm-imx6         the port                   (default x86_64)
#   LOCK    none | bkl | fine | rtm   the lock variant           (default bkl)
#   NCPUS   number                    most cores the kernel runs (default 8)
#   DEBUG   0 | 1                     assertions, invariant checker (default 1)
#   LOCKSTATS 0 | 1                   lock statistics            (default 0)
#   UNSAFE  0 | 1                     allow LOCK=none on several cores (default 0)
#   POSIX_PROGRAM path                a static Linux ELF the root task runs as a POSIX process
#                                     (docs/posix-loader.md; default: none)
# Run-time variables for `make qemu`: CPUS, ACCEL, APP, ARGS, TIMEOUT, ICOUNT, BOOT, NET, NET_PORTS.
# For `make fuzz`: CONFIGS, SEEDS, CALLS, SECONDS, CHECK.
# `make posix` builds musl, the POSIX personality and the real Redis (docs/posix-build.md).
# `make redis-matrix` checks the real Redis's benchmarks on every port, lock and layout (docs/benchmarks.md).

ARCH      ?= x86_64
LOCK      ?= bkl
NCPUS     ?= 8
DEBUG     ?= 1
LOCKSTATS ?= 0
UNSAFE    ?= 0

ARCHES := x86_64 arm-imx6
LOCKS  := none bkl fine rtm

ifeq ($(filter $(ARCH),$(ARCHES)),)
$(error unknown ARCH '$(ARCH)': valid values are $(ARCHES))
endif
ifeq ($(filter $(LOCK),$(LOCKS)),)
$(error unknown LOCK '$(LOCK)': valid values are $(LOCKS))
endif
ifeq ($(ARCH)-$(LOCK),arm-imx6-rtm)
$(error LOCK=rtm needs Intel TSX and has no meaning on ARCH=arm-imx6: valid values there are none bkl fine)
endif
ifeq ($(filter $(DEBUG),0 1),)
$(error unknown DEBUG '$(DEBUG)': valid values are 0 1)
endif
ifeq ($(filter $(LOCKSTATS),0 1),)
$(error unknown LOCKSTATS '$(LOCKSTATS)': valid values are 0 1)
endif
ifeq ($(filter $(UNSAFE),0 1),)
$(error unknown UNSAFE '$(UNSAFE)': valid values are 0 1)
endif
ifeq ($(shell echo '$(NCPUS)' | grep -Ex '[1-9][0-9]?'),)
$(error NCPUS '$(NCPUS)' must be a number from 1 to 99)
endif

CPUS ?= 4

# How `make qemu` starts the kernel: QEMU loads the ELF itself, or QEMU runs
# the real machine's boot path (GRUB from the ISO; U-Boot with the uImage).
BOOT ?= kernel
BOOTS_x86_64   := kernel iso
BOOTS_arm-imx6 := kernel uboot
ifeq ($(filter $(BOOT),$(BOOTS_$(ARCH))),)
$(error unknown BOOT '$(BOOT)' for ARCH=$(ARCH): valid values are $(BOOTS_$(ARCH)))
endif
ifneq ($(filter qemu debug,$(MAKECMDGOALS)),)
ifeq ($(LOCK)-$(UNSAFE),none-0)
ifneq ($(CPUS),1)
$(error LOCK=none has no kernel lock and is correct only on one core: use CPUS=1, or UNSAFE=1 for the unsafe multicore baseline)
endif
endif
endif

# Variants that differ only in build options get their own folder too, so
# that every build sits beside the others and none overwrites another.
VARIANT := $(ARCH)-$(LOCK)$(if $(filter 1,$(LOCKSTATS)),-stats)$(if $(filter 0,$(DEBUG)),-nodebug)$(if $(filter 1,$(UNSAFE)),-unsafe)$(if $(filter-out 8,$(NCPUS)),-n$(NCPUS))
# OBJ holds the variant's objects; BUILD its root task, kernel and boot images.  They are one
# folder, but for a build with an embedded POSIX program (docs/posix-loader.md), whose images
# go into a folder of their own inside the variant's, named by the program's file name and a
# checksum of its full path: builds with different programs, or none, share every object but
# the two that hold another file's bytes, and none overwrites another's images.
POSIX_PROGRAM ?=
# `make qemu APP=redis` runs the real Redis (docs/posix.md): unless POSIX_PROGRAM names another
# program, the image embeds Debian's Redis built for the port (make posix), and the app runs it.
ifeq ($(APP)$(POSIX_PROGRAM),redis)
POSIX_PROGRAM := build/posix/$(ARCH)/redis-server
endif
POSIX_TAG := $(if $(POSIX_PROGRAM),/posix-$(notdir $(POSIX_PROGRAM))-$(shell printf '%s' '$(abspath $(POSIX_PROGRAM))' | cksum | cut -d' ' -f1))
OBJ     := build/$(VARIANT)
BUILD   := $(OBJ)$(POSIX_TAG)
# Defined before arch/*/build.mk, whose boot-image rules name it as a prerequisite.
KERNEL_ELF := $(BUILD)/kernel.elf

include arch/$(ARCH)/build.mk

GIT_REV := $(shell git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown)

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
DEFS     := -DNCPUS=$(NCPUS) -DDEBUG=$(DEBUG) -DLOCKSTATS=$(LOCKSTATS) -DUNSAFE=$(UNSAFE) \
            -DLOCK_NAME='"$(LOCK)"' -DARCH_NAME='"$(ARCH)"'
COMMON   := -std=c11 -ffreestanding -fno-builtin -fno-common -fno-stack-protector \
            -O2 -g $(WARN) -MMD -MP

# ---- the kernel
KERNEL_INC := -Ikernel -Ikernel/uapi -Iarch/$(ARCH)/include -Ilock -Ilock/variant/$(LOCK) -Ilock/$(LOCK_ARCH)
LOCK_SRC   := lock/$(LOCK).c lock/clh.c lock/brlock.c lock/lockstats.c
KERNEL_SRC := $(wildcard kernel/*.c kernel/*.S) $(ARCH_KERNEL_SRC) $(LOCK_SRC)
KERNEL_OBJ := $(patsubst %,$(OBJ)/%.o,$(filter-out kernel/root_image.S,$(KERNEL_SRC))) $(BUILD)/root_image.S.o

# ---- the root task (userland and benchmarks, linked into one ELF); of the kernel it sees only the ABI
USER_INC := -Iuserland/include -Ikernel/uapi -Iarch/$(ARCH)/user
USER_SRC := $(wildcard userland/lib/*.c userland/roottask/*.c userland/tests/*.c userland/fuzz/*.c bench/*.c) \
            $(wildcard userland/drivers/*.c userland/net/*.c userland/redis/*.c) \
            $(ARCH_USER_SRC)

# lwIP (docs/network.md): the core of Debian's source package, which tools/ensure_deps.sh unpacks
# into .deps/lwip, with our port layer in userland/net.  Without it, the network programs
# (userland/net, and the app `redis` in userland/redis) are left out, the app `redis` says why
# (userland/roottask/network_absent.c) and the lwIP tests report skip (userland/tests/without_lwip/).
LWIP_DIR := .deps/lwip
ifneq ($(wildcard $(LWIP_DIR)/src/core/tcp.c),)
LWIP_SRC := $(addprefix $(LWIP_DIR)/src/,core/init.c core/def.c core/inet_chksum.c core/ip.c \
              core/mem.c core/memp.c core/netif.c core/pbuf.c core/stats.c core/timeouts.c \
              core/tcp.c core/tcp_in.c core/tcp_out.c core/ipv4/etharp.c core/ipv4/icmp.c \
              core/ipv4/ip4.c core/ipv4/ip4_addr.c netif/ethernet.c)
USER_INC += -Iuserland/net -I$(LWIP_DIR)/src/include
USER_SRC := $(filter-out userland/roottask/network_absent.c,$(USER_SRC)) $(LWIP_SRC)
else
USER_SRC := $(filter-out userland/net/% userland/redis/% userland/tests/test_lwip.c userland/tests/lwip_test_%,$(USER_SRC)) \
            userland/tests/without_lwip/test_lwip_skipped.c
endif
USER_OBJ := $(patsubst %,$(OBJ)/user/%.o,$(USER_SRC)) $(BUILD)/program_image.S.o

include userland/posix/build.mk

ROOT_ELF   := $(BUILD)/root.elf

.PHONY: all kernel iso uimage qemu run lockbench test soak fuzz debug profile clean deps help print-build-dir programs redis-suite redis-matrix
all: kernel
kernel: $(KERNEL_ELF)

# The two files that print the source revision are rebuilt whenever it changes.
GIT_REV_USERS := $(OBJ)/kernel/boot.c.o $(OBJ)/user/userland/lib/env.c.o
GIT_REV_STAMP := $(OBJ)/git-rev-$(GIT_REV)
$(GIT_REV_STAMP):
	@mkdir -p $(OBJ) && rm -f $(OBJ)/git-rev-* && touch $@
$(GIT_REV_USERS): $(GIT_REV_STAMP)
$(GIT_REV_USERS): DEFS += -DGIT_REV='"$(GIT_REV)"'

# The two objects that hold another file's bytes (.incbin) are BUILD's own: the root task's
# image in the kernel, and the POSIX program in the root task.
$(BUILD)/root_image.S.o: kernel/root_image.S $(ROOT_ELF)
	@mkdir -p $(dir $@)
	$(KCC) $(ARCH_KASFLAGS) $(DEFS) -DROOT_ELF='"$(ROOT_ELF)"' $(KERNEL_INC) -c $< -o $@

# The POSIX program (docs/posix-loader.md): POSIX_PROGRAM without its debug sections (the
# port's objcopy; a file it cannot read goes in as it is, for the loader to judge), or nothing,
# written to POSIX_IMAGE whenever that differs from what it holds, so that the root task is
# rebuilt exactly when the program changes.  Every 4 KiB of the image takes a slot of the root
# CNode, and debug sections are never loaded.  POSIX_PROGRAM may be a file another rule builds.
POSIX_IMAGE   := $(BUILD)/posix_program.elf
POSIX_OBJCOPY := $(patsubst %gcc,%objcopy,$(KCC))
$(POSIX_IMAGE): $(POSIX_PROGRAM) FORCE
	@mkdir -p $(dir $@)
	@src=$(if $(POSIX_PROGRAM),$(POSIX_PROGRAM),/dev/null); \
	 $(POSIX_OBJCOPY) --strip-debug $$src $@.new 2>/dev/null || cp $$src $@.new; \
	 if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi
$(BUILD)/program_image.S.o: userland/roottask/program_image.S $(POSIX_IMAGE)
	@mkdir -p $(dir $@)
	$(KCC) $(ARCH_UASFLAGS) $(DEFS) -DPOSIX_PROGRAM_IMAGE='"$(POSIX_IMAGE)"' $(USER_INC) -c $< -o $@
.PHONY: FORCE
FORCE:

$(OBJ)/%.c.o: %.c
	@mkdir -p $(dir $@)
	$(KCC) $(COMMON) $(ARCH_KCFLAGS) $(DEFS) $(KERNEL_INC) -c $< -o $@

# Every function of the IPC fastpath never returns, so its callers need no
# register kept: the port's ARCH_FASTPATH_CFLAGS may declare every register
# clobbered by calls, which spares the fastpath the prologue that saves them
# (arch/*/build.mk).  Nothing in kernel/fastpath.c may return to another file.
$(OBJ)/kernel/fastpath.c.o: ARCH_KCFLAGS += $(ARCH_FASTPATH_CFLAGS)
$(OBJ)/kernel/fastpath.c.o: arch/$(ARCH)/build.mk

$(OBJ)/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(KCC) $(ARCH_KASFLAGS) $(DEFS) $(KERNEL_INC) -MMD -MP -c $< -o $@

$(KERNEL_ELF): $(KERNEL_OBJ) arch/$(ARCH)/kernel.ld
	$(KCC) $(ARCH_KLDFLAGS) -nostdlib -T arch/$(ARCH)/kernel.ld -o $@ $(KERNEL_OBJ) $(ARCH_LIBGCC)
	@echo "built $@"

$(OBJ)/user/%.c.o: %.c
	@mkdir -p $(dir $@)
	$(KCC) $(COMMON) $(ARCH_UCFLAGS) $(DEFS) $(USER_INC) -c $< -o $@

# lwIP is third-party code: it keeps to its own warning level, and its <string.h> and <stdlib.h>
# are the shims in userland/net/std.
LWIP_WARN := -Wall -Wno-address
$(OBJ)/user/$(LWIP_DIR)/%.c.o: $(LWIP_DIR)/%.c
	@mkdir -p $(dir $@)
	$(KCC) $(filter-out $(WARN),$(COMMON)) $(LWIP_WARN) $(ARCH_UCFLAGS) $(DEFS) -Iuserland/net/std $(USER_INC) -c $< -o $@

$(OBJ)/user/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(KCC) $(ARCH_UASFLAGS) $(DEFS) $(USER_INC) -MMD -MP -c $< -o $@

$(ROOT_ELF): $(USER_OBJ) arch/$(ARCH)/user/user.ld
	$(KCC) $(ARCH_ULDFLAGS) -nostdlib -static -T arch/$(ARCH)/user/user.ld -o $@ $(USER_OBJ) $(ARCH_LIBGCC)

# ---- test programs for the POSIX loader (userland/programs, docs/posix-loader.md): static
# ELFs of their own, built for the port without a C library, one folder per port.
PROGRAMS_DIR     := build/programs/$(ARCH)
POSIX_CHECK_ELF  := $(PROGRAMS_DIR)/posix_check.elf
POSIX_CHECK_OBJ  := $(PROGRAMS_DIR)/posix_check.c.o $(PROGRAMS_DIR)/posix_check_start.S.o

$(PROGRAMS_DIR)/posix_check.c.o: userland/programs/posix_check.c
	@mkdir -p $(dir $@)
	$(KCC) $(COMMON) $(ARCH_UCFLAGS) -Iuserland/include -Ikernel/uapi -Iarch/$(ARCH)/user -c $< -o $@

$(PROGRAMS_DIR)/posix_check_start.S.o: arch/$(ARCH)/user/programs/posix_check_start.S
	@mkdir -p $(dir $@)
	$(KCC) $(ARCH_UASFLAGS) -MMD -MP -c $< -o $@

$(POSIX_CHECK_ELF): $(POSIX_CHECK_OBJ) userland/programs/program.ld
	$(KCC) $(ARCH_ULDFLAGS) -nostdlib -static -T userland/programs/program.ld -o $@ $(POSIX_CHECK_OBJ) $(ARCH_LIBGCC)

programs: $(POSIX_CHECK_ELF)

-include $(KERNEL_OBJ:.o=.d) $(USER_OBJ:.o=.d) $(POSIX_CHECK_OBJ:.o=.d)

# ---- images for real machines (targets defined by the port's build.mk)
iso: $(ARCH_ISO)
uimage: $(ARCH_UIMAGE)

# ---- running
ACCEL   ?= auto
APP     ?= hello
ARGS    ?=
TIMEOUT ?= 120
ICOUNT  ?= 0
PYTHON  := $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)

# U-Boot for the Sabre Lite, unpacked by tools/ensure_deps.sh (make deps).
UBOOT_IMX := .deps/u-boot-imx/usr/lib/u-boot/mx6qsabrelite/u-boot-dtb.imx
BOOT_IMAGE_kernel :=
BOOT_IMAGE_iso    := $(ARCH_ISO)
BOOT_IMAGE_uboot  := $(ARCH_UIMAGE)
BOOT_ARGS_kernel  :=
BOOT_ARGS_iso     := --iso $(ARCH_ISO)
BOOT_ARGS_uboot   := --uboot $(UBOOT_IMX)

QEMU_RUN = $(PYTHON) tools/qemu_run.py --arch $(ARCH) --lock $(LOCK) --image $(KERNEL_ELF) \
           --cpus $(CPUS) --accel $(ACCEL) --timeout $(TIMEOUT) $(if $(filter 1,$(ICOUNT)),--icount) \
           $(if $(filter 1,$(UNSAFE)),--unsafe) $(BOOT_ARGS_$(BOOT)) --cmdline "app=$(APP) $(ARGS)" \
           $(if $(filter 1 tap,$(NET)),--net $(if $(NET_PORTS),--net-ports $(NET_PORTS))) \
           $(if $(filter tap,$(NET)),--tap)

qemu: $(KERNEL_ELF) $(BOOT_IMAGE_$(BOOT))
	@$(QEMU_RUN)

debug: $(KERNEL_ELF) $(BOOT_IMAGE_$(BOOT))
	@$(QEMU_RUN) --gdb

# Per-function instruction profile of the windows a benchmark marks (tools/insn_profile.py),
# on one CPU unless CPUS is given; the JSON goes beside the kernel.
PROFILE_CPUS := $(if $(filter command line,$(origin CPUS)),$(CPUS),1)
profile: $(KERNEL_ELF)
	@$(PYTHON) tools/insn_profile.py --arch $(ARCH) --lock $(LOCK) --image $(KERNEL_ELF) --cpus $(PROFILE_CPUS) \
	    $(if $(filter 1,$(UNSAFE)),--unsafe) --cmdline "app=$(APP) $(ARGS)" --json $(BUILD)/profile-$(APP).json

# The main job (docs/results.md): every variant in QEMU (tools/sweep.py --quick),
# the single-core ping-pong on arm-imx6 too, the kernel's lock code on this
# host's cores (tools/lockbench.py, its hold time from the first sweep's bkl
# lockstats), then one report of all three (tools/summary.py), printed and
# written to results/<run>/report.md.  A failed step does not stop the
# others; the exit status says whether any failed.
RUN_NAME := $(shell date -u +%Y%m%d-%H%M%S)
run: deps
	@status=0; \
	.venv/bin/python tools/sweep.py --quick --run $(RUN_NAME) --no-report || status=1; \
	.venv/bin/python tools/sweep.py --quick --arch arm-imx6 --benchmarks pingpong \
	    --run $(RUN_NAME)/arm-imx6 --no-report || status=1; \
	.venv/bin/python tools/lockbench.py --out results/$(RUN_NAME) --hold-from results/$(RUN_NAME) \
	    --reps 3 --ms 100 --no-report || status=1; \
	.venv/bin/python tools/summary.py results/$(RUN_NAME) results/$(RUN_NAME)/arm-imx6 \
	    --write results/$(RUN_NAME)/report.md --plots results/$(RUN_NAME)/plots || status=1; \
	exit $$status

# The kernel's lock code on this host's cores alone (docs/benchmarks.md); e.g.
# make lockbench LOCKBENCH_ARGS="--cores 1,2,4,8,16".
lockbench: deps
	@.venv/bin/python tools/lockbench.py $(LOCKBENCH_ARGS)

# The whole test suite, in TEST_WORKERS pytest-xdist workers: one per host core of the two-core
# build machines.  The tests that share a boot run in one worker (tests/conftest.py), and a
# guest that keeps every host core busy runs alone (tools/host_cores.py).
TEST_WORKERS ?= 2
test: deps
	@.venv/bin/python -m pytest tests -q -rs --durations=20 -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

# Redis's own test suite (its twelve units of docs/posix.md) against the kernel-hosted real
# Redis, beside Debian's redis-server on this host; the table goes to results/redis-suite/.
REDIS_SUITE_CONFIGS ?= x86_64-bkl-4 x86_64-fine-4 arm-imx6-bkl-4
redis-suite: deps
	@mkdir -p results/redis-suite
	@$(PYTHON) tools/redis_suite.py $(addprefix --guest ,$(REDIS_SUITE_CONFIGS)) \
	    --markdown results/redis-suite/summary.md --json results/redis-suite/results.json

# The real Redis's benchmark matrix (tools/redis_matrix.py, docs/benchmarks.md): redis-benchmark
# and YCSB workload A on every port, lock variant and layout, 0 errors and the invariants holding
# in each; the table goes to results/redis-matrix/.  REDIS_MATRIX_ARGS="--only x86_64-bkl" runs a part.
redis-matrix: deps
	@$(PYTHON) tools/redis_matrix.py --out results/redis-matrix $(REDIS_MATRIX_ARGS)

# The long soak of the real Redis on the kernel (tests/test_redis_soak.py); `make test` runs
# the same test for 90 s.  SOAK_SECONDS sets another length.
SOAK_SECONDS ?= 600
soak: deps
	@REDIS_SOAK_SECONDS=$(SOAK_SECONDS) .venv/bin/python -m pytest tests/test_redis_soak.py -q -rs -s

# A fuzz campaign (tools/fuzz_campaign.py, docs/userland.md): configurations x seeds, each run
# bounded by CALLS and/or SECONDS (guest seconds), the invariants checked every CHECK calls;
# resumable, its table in results/fuzz/summary.md.
CALLS   ?= 100000
SEEDS   ?= 1 2 3
SECONDS ?= 0
CHECK   ?= 1000
fuzz: deps
	@.venv/bin/python tools/fuzz_campaign.py --calls $(CALLS) --seconds $(SECONDS) --check $(CHECK) \
	    --seeds $(SEEDS) $(if $(CONFIGS),--configs $(CONFIGS))

# Install what a fresh machine lacks (packages, the Python environment).
deps:
	@tools/ensure_deps.sh

print-build-dir:
	@echo $(BUILD)

clean:
	rm -rf build

help:
	@sed -n '1,10p' Makefile
