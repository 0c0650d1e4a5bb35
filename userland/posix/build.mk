# POSIX processes (docs/posix-build.md): musl built from Debian's source with its system calls
# turned into calls to the personality, the personality library, and the real Redis built
# against both.  `make posix ARCH=x86_64|arm-imx6` builds, in build/posix/<arch>/:
#   sysroot/      musl's headers, libc.a and start files (tools/posix-cc compiles against it)
#   libposix.a    the personality (userland/posix), the trap, lwIP and the frame channel code
#   redis-server  Debian's Redis 7.0.15, linked with libposix.a
# Included by the Makefile after the root task's file lists, which it uses (LWIP_SRC) and
# changes (the trap belongs to POSIX processes only, not to the root task).

# The port's posix_* files (the trap, the clock, the stack switch) belong to POSIX processes,
# not to the root task.
USER_OBJ := $(filter-out $(OBJ)/user/arch/$(ARCH)/user/posix_%,$(USER_OBJ))

POSIX_DIR       := build/posix/$(ARCH)
POSIX_SYSROOT   := $(POSIX_DIR)/sysroot
POSIX_LIBC      := $(POSIX_SYSROOT)/lib/libc.a
POSIX_LIBPOSIX  := $(POSIX_DIR)/libposix.a
POSIX_REDIS     := $(POSIX_DIR)/redis-server
POSIX_SELFTEST  := $(POSIX_DIR)/posix_selftest
POSIX_CC        := $(CURDIR)/tools/posix-cc --posix-arch=$(ARCH)
MUSL_DIR        := .deps/musl
REDIS_DIR       := .deps/redis
POSIX_MUSL_PATCHES  := $(sort $(wildcard userland/posix/patches/musl-*.patch))
POSIX_REDIS_PATCHES := $(sort $(wildcard userland/posix/patches/redis-*.patch))

# musl for the port: the same code model and ABI as tools/posix-cc compiles the rest with.
MUSL_CONFIGURE_x86_64   := CC=gcc CFLAGS="-fno-pie"
MUSL_CONFIGURE_arm-imx6 := --target=arm-linux-musleabi CC=arm-none-eabi-gcc CROSS_COMPILE=arm-none-eabi- \
                           CFLAGS="-mcpu=cortex-a9 -marm -mfloat-abi=soft -fno-short-enums"
REDIS_MAKE_x86_64       := uname_M=x86_64
REDIS_MAKE_arm-imx6     := uname_M=armv7l AR=arm-none-eabi-ar RANLIB=arm-none-eabi-ranlib
REDIS_MAKE := CC="$(POSIX_CC)" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no uname_S=Linux $(REDIS_MAKE_$(ARCH))

# The personality's sources; a test may name others (tests/test_posix_build.py).
POSIX_PERSONALITY_SRC ?= $(wildcard userland/posix/*.c arch/$(ARCH)/user/posix_*.c)
POSIX_NET_SRC := userland/net/channel_netif.c userland/net/eth_netif.c userland/net/frame_ring.c \
                 userland/net/tcp_timewait_reuse.c
POSIX_LIB_SRC := $(POSIX_PERSONALITY_SRC) $(wildcard arch/$(ARCH)/user/posix_*.S) $(POSIX_NET_SRC) $(LWIP_SRC)
POSIX_LIB_OBJ := $(patsubst %,$(POSIX_DIR)/obj/%.o,$(POSIX_LIB_SRC))
POSIX_CFLAGS  := -std=c11 -D_GNU_SOURCE -O2 -g -MMD -MP -Iuserland/posix -Iuserland/net -Iuserland/include \
                 -Ikernel/uapi -Iarch/$(ARCH)/user -I$(LWIP_DIR)/src/include

.PHONY: posix posix-sysroot posix-selftest posix-sources FORCE
FORCE:
posix: $(POSIX_REDIS) $(POSIX_SELFTEST)
posix-selftest: $(POSIX_SELFTEST)
posix-sysroot: $(POSIX_LIBC)

posix-sources:
	@test -f $(MUSL_DIR)/src/internal/syscall.h || { echo "$(MUSL_DIR) is missing: make deps fetches Debian's musl source"; exit 1; }
	@test -f $(REDIS_DIR)/src/server.c || { echo "$(REDIS_DIR) is missing: make deps fetches Debian's redis source"; exit 1; }
	@test -f $(LWIP_DIR)/src/core/tcp.c || { echo "$(LWIP_DIR) is missing: make deps fetches Debian's lwip source"; exit 1; }
	@test -n "$(POSIX_PERSONALITY_SRC)" || { echo "userland/posix has no personality (*.c) to link with"; \
	    echo "(POSIX_PERSONALITY_SRC=tests/host/posix_enosys.c links a stub whose every call fails)"; exit 1; }

# A file holding a value of the build (flags, a file list), rewritten only when the value
# changes, so that what depends on it is rebuilt exactly then.
$(POSIX_DIR)/%.value: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(POSIX_VALUE_$*)' | cmp -s - $@ || printf '%s\n' '$(POSIX_VALUE_$*)' >$@
POSIX_VALUE_musl        = $(MUSL_CONFIGURE_$(ARCH))
POSIX_VALUE_personality = $(POSIX_LIB_SRC)
POSIX_VALUE_redis       = $(REDIS_MAKE)

# The sub-makes (musl's, Redis's) get only the variables they are given: this Makefile's own
# command-line variables (ARCH, DEBUG, ...) mean other things there.
$(POSIX_LIBC) $(POSIX_REDIS): MAKEOVERRIDES :=

# ---- musl: a patched copy of Debian's source, configured and installed into the sysroot
$(POSIX_DIR)/musl/.patched: $(MUSL_DIR)/VERSION $(POSIX_MUSL_PATCHES) $(POSIX_DIR)/musl.value | posix-sources
	rm -rf $(POSIX_DIR)/musl && mkdir -p $(POSIX_DIR) && cp -r $(MUSL_DIR) $(POSIX_DIR)/musl
	for p in $(POSIX_MUSL_PATCHES); do patch -p1 -s -d $(POSIX_DIR)/musl <$$p || exit 1; done
	touch $@

# The sysroot: musl installed, then checked for a system-call instruction left in libc.a.
# Redis links ARM32 Linux with -latomic.  ARMv7-A has ldrexd/strexd, so gcc inlines even the
# 64-bit atomics and nothing needs libatomic: the sysroot has an empty one, as musl has empty
# libm.a and libpthread.a.  A call it would have to provide fails the link instead.
$(POSIX_LIBC): $(POSIX_DIR)/musl/.patched
	rm -rf $(POSIX_SYSROOT)
	cd $(POSIX_DIR)/musl && ./configure --prefix=$(CURDIR)/$(POSIX_SYSROOT) --disable-shared \
	    --disable-wrapper $(MUSL_CONFIGURE_$(ARCH)) >configure.log
	$(MAKE) -C $(POSIX_DIR)/musl install >$(POSIX_DIR)/musl/build.log 2>&1 || \
	    { tail -n 40 $(POSIX_DIR)/musl/build.log; exit 1; }
	@if $(POSIX_OBJDUMP) -d $@ | grep -E "$(POSIX_TRAP_INSN)"; then \
	    echo "$@ still executes a system call instruction (above): a call site is missing from the patch"; exit 1; fi
	$(POSIX_AR) rcs $(POSIX_SYSROOT)/lib/libatomic.a
	touch $@
	@echo "built $(POSIX_SYSROOT)"

# What must not be left in libc.a: the system call instruction of the port.
POSIX_OBJDUMP_x86_64     := objdump
POSIX_OBJDUMP_arm-imx6   := arm-none-eabi-objdump
POSIX_OBJDUMP            := $(POSIX_OBJDUMP_$(ARCH))
POSIX_TRAP_INSN_x86_64   := \s(syscall|sysenter|int\s+\$$0x80)\b
POSIX_TRAP_INSN_arm-imx6 := \s(svc|swi)\s
POSIX_TRAP_INSN          := $(POSIX_TRAP_INSN_$(ARCH))

# ---- the personality library
$(POSIX_DIR)/obj/%.c.o: %.c $(POSIX_LIBC)
	@mkdir -p $(@D)
	$(POSIX_CC) $(POSIX_CFLAGS) $(WARN) -c $< -o $@

$(POSIX_DIR)/obj/$(LWIP_DIR)/%.c.o: $(LWIP_DIR)/%.c $(POSIX_LIBC)
	@mkdir -p $(@D)
	$(POSIX_CC) $(POSIX_CFLAGS) $(LWIP_WARN) -c $< -o $@

$(POSIX_DIR)/obj/%.S.o: %.S $(POSIX_LIBC)
	@mkdir -p $(@D)
	$(POSIX_CC) -D__ASSEMBLY__ -MMD -MP -c $< -o $@

$(POSIX_LIBPOSIX): $(POSIX_LIB_OBJ) $(POSIX_DIR)/personality.value
	rm -f $@
	$(POSIX_AR) rcs $@ $(POSIX_LIB_OBJ)

POSIX_AR_x86_64   := ar
POSIX_AR_arm-imx6 := arm-none-eabi-ar
POSIX_AR          := $(POSIX_AR_$(ARCH))

# ---- Redis: a copy of Debian's source, built by its own Makefile through tools/posix-cc.
# Its objects depend on musl's headers, so a new sysroot starts from a fresh copy.  A new
# personality only relinks: removing the binary makes Redis's Makefile link it again.
$(POSIX_DIR)/redis/.patched: $(REDIS_DIR)/src/version.h $(POSIX_REDIS_PATCHES) $(POSIX_LIBC) \
                             $(POSIX_DIR)/redis.value tools/posix-cc | posix-sources
	rm -rf $(POSIX_DIR)/redis && mkdir -p $(POSIX_DIR) && cp -r $(REDIS_DIR) $(POSIX_DIR)/redis
	for p in $(POSIX_REDIS_PATCHES); do patch -p1 -s -d $(POSIX_DIR)/redis <$$p || exit 1; done
	touch $@

# Redis names the git commit it was built from (INFO's redis_git_sha1); its copy sits inside this
# project's tree, whose commit is not Redis's, so git is given no repository to find (00000000,
# as in Debian's build from the release tarball).
REDIS_NO_GIT := GIT_DIR=/nonexistent

$(POSIX_REDIS): $(POSIX_DIR)/redis/.patched $(POSIX_LIBPOSIX)
	rm -f $(POSIX_DIR)/redis/src/redis-server
	$(REDIS_NO_GIT) $(MAKE) -C $(POSIX_DIR)/redis/src $(REDIS_MAKE) redis-server >$(POSIX_DIR)/redis-build.log 2>&1 || \
	    { tail -n 40 $(POSIX_DIR)/redis-build.log; exit 1; }
	cp $(POSIX_DIR)/redis/src/redis-server $@
	@echo "built $@"

# The personality's own test program (docs/posix.md, tests/test_posix.py).
# It reads an ended thread's registers from its TCB, so it also sees the kernel's ABI.
$(POSIX_SELFTEST): userland/programs/posix_selftest.c $(POSIX_LIBPOSIX) tools/posix-cc
	$(POSIX_CC) -O2 $(WARN) -Iuserland/include -Ikernel/uapi -Iarch/$(ARCH)/user $< -o $@

-include $(POSIX_LIB_OBJ:.o=.d)

# ---- the hook's test under Linux (tests/test_posix_build.py): on the x86_64 host, and for
# arm-imx6 under qemu-arm.  A personality that passes every call on to Linux and counts it, a
# program that uses threads, signals and the clock, and the same Redis objects relinked with
# that personality.
POSIX_HOSTTEST  := $(POSIX_DIR)/hosttest
POSIX_HOSTCALLS := $(POSIX_HOSTTEST)/libhostcalls.a
.PHONY: posix-hosttest
posix-hosttest: $(POSIX_HOSTTEST)/hook-program $(POSIX_HOSTTEST)/redis-server $(POSIX_HOSTTEST)/trap-regs

$(POSIX_DIR)/obj/tests/host/%.c.o: POSIX_CFLAGS += -Itests/host/posix_linux/$(ARCH)

$(POSIX_HOSTCALLS): $(POSIX_DIR)/obj/tests/host/posix_hostcalls.c.o \
                    $(POSIX_DIR)/obj/arch/$(ARCH)/user/posix_trap.S.o
	@mkdir -p $(@D)
	rm -f $@
	$(POSIX_AR) rcs $@ $^

$(POSIX_HOSTTEST)/hook-program: tests/host/posix_hook_program.c $(POSIX_HOSTCALLS)
	POSIX_PERSONALITY=$(CURDIR)/$(POSIX_HOSTCALLS) $(POSIX_CC) -std=c11 -O2 -g $(WARN) -o $@ $<

# The trap's register check is its own personality (tests/host/posix_trap_regs.c).
POSIX_TRAP_REGS_OBJ := $(addprefix $(POSIX_DIR)/obj/,tests/host/posix_trap_regs.c.o \
                         tests/host/posix_linux/$(ARCH)/trap_regs.S.o arch/$(ARCH)/user/posix_trap.S.o)
$(POSIX_HOSTTEST)/trap-regs: $(POSIX_TRAP_REGS_OBJ)
	@mkdir -p $(@D)
	POSIX_PERSONALITY= $(POSIX_CC) -o $@ $^

$(POSIX_HOSTTEST)/redis-server: $(POSIX_HOSTCALLS) $(POSIX_REDIS)
	rm -f $(POSIX_DIR)/redis/src/redis-server
	POSIX_PERSONALITY=$(CURDIR)/$(POSIX_HOSTCALLS) $(REDIS_NO_GIT) $(MAKE) -C $(POSIX_DIR)/redis/src $(REDIS_MAKE) redis-server \
	    >$(POSIX_HOSTTEST)/redis-link.log 2>&1 || { cat $(POSIX_HOSTTEST)/redis-link.log; exit 1; }
	mv $(POSIX_DIR)/redis/src/redis-server $@
$(POSIX_HOSTTEST)/redis-server: MAKEOVERRIDES :=
-include $(POSIX_DIR)/obj/tests/host/posix_hostcalls.c.d $(POSIX_DIR)/obj/tests/host/posix_trap_regs.c.d
