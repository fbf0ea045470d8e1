# SPDX-License-Identifier: GPL-2.0-only
#
# npu-mem top-level build.
#   make                 module (newest kernel, or KDIR=), libaclmem, tools:
#                        what a user needs (no Check, no libdrm)
#   make tests           the test programs (tests/, bench/)
#   make modules-all     the module for every installed kernel, in build/kmod/<ver>/
#   make run             boot a guest with the driver loaded and run the demo
#   make check           install what is missing, build, run every test suite
#   make sparse          sparse (C=2) and W=1 over the module, every kernel;
#                        fails on any warning
#   make check-debug     the suites, fault injection and the fuzzer on the
#                        debug kernel (KASAN, kmemleak, lockdep; built once)
#   make arm64           cross-build for arm64: the module for each
#                        Debian arm64 kernel (build/kmod-arm64/<ver>/),
#                        libaclmem.a (build/lib-arm64/), and, linked static,
#                        the kernel and lib test programs (build/tests-arm64/)
#                        and the C example (build/examples-arm64/)
#   make check-arm64     make arm64, then the kernel and lib suites and the
#                        example in arm64 guests (tests/run-arm64.sh)
#   make bench           benchmark against the alternatives in a guest
#                        (KVER=, BENCH_ARGS=-q): build/bench/results/
#   make install/uninstall (DESTDIR, PREFIX; mk/install.mk)
#   make dkms-add, dkms-build, dkms-install, dkms-remove (mk/dkms.mk)
TOP := $(CURDIR)
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
# The host's kernels (/lib/modules/*/build) and those whose headers only
# build in a root of their own Debian release (scripts/kernels.sh).
KVERS ?= $(shell bash scripts/kernels.sh --kvers)
# KRUN KVER CMD...: CMD where KVER's headers work (chrooted into its root).
KRUN := bash $(CURDIR)/scripts/kernels.sh --run
KDIR ?= $(or $(KERNEL_DIR),$(lastword $(sort $(wildcard /lib/modules/*/build))))
KSRC := $(wildcard kernel/*.c kernel/*.h) kernel/Kbuild include/uapi/linux/npu_mem.h

export VERSION TOP

all: module lib tools

# Each kernel gets its own copy of the sources so builds do not share objects.
build/kmod/%/npu_mem.ko: $(KSRC) dkms.conf
	@mkdir -p $(@D)
	cp kernel/*.c kernel/*.h kernel/Kbuild $(@D)/
	$(KRUN) $* make -C /lib/modules/$*/build M=$(TOP)/$(@D) NPU_MEM_TOP=$(TOP) \
		NPU_MEM_TEST_ENGINE=y W=1 modules

module:
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules

modules-all: $(foreach v,$(KVERS),build/kmod/$(v)/npu_mem.ko)

sparse:
	@for v in $(KVERS); do \
		d=build/sparse/$$v; mkdir -p $$d; \
		cp kernel/*.c kernel/*.h kernel/Kbuild $$d/; \
		$(KRUN) $$v make -C /lib/modules/$$v/build M=$(TOP)/$$d NPU_MEM_TOP=$(TOP) \
			NPU_MEM_TEST_ENGINE=y C=2 W=1 modules 2>&1 | tee $$d/sparse.log; \
		! grep -E 'warning|error' $$d/sparse.log || exit 1; \
	done

lib:
	$(MAKE) -C lib

tools:
	$(MAKE) -C tools

tests: lib
	$(MAKE) -C tests
	$(MAKE) -C bench

# The benchmark: newest bootable kernel unless KVER= is given.
BENCH_KVER ?= $(or $(KVER),$(shell for d in /lib/modules/*/; do \
	v=$$(basename $$d); [ -e /boot/vmlinuz-$$v ] && echo $$v; done | sort -V | tail -n1))

bench-build: lib
	$(MAKE) -C bench

bench-deps: deps
	bash bench/deps.sh

bench: bench-deps
	$(MAKE) build/kmod/$(BENCH_KVER)/npu_mem.ko bench-build
	KVER=$(BENCH_KVER) bash bench/run.sh

deps:
	bash scripts/deps.sh

run: deps
	$(MAKE) modules-all lib tests
	bash tests/vm/demo.sh

check: deps
	$(MAKE) modules-all lib tests
	bash tests/run-all.sh

# Mutation testing: each mutant of tests/mutation/mutants.txt (a realistic
# bug in kernel/ or lib/) built in a copy of the tree and run against the
# test programs that should catch it; build/mutation/results.txt.
# MUTATION_ARGS: e.g. "--baseline", "-t 900", or mutant ids.
mutation: tests
	/usr/bin/python3 tests/mutation/run.py $(MUTATION_ARGS)

# The debug kernel: KASAN, kmemleak, lockdep, DMA-API debugging
# and fault injection, built once per machine outside the clone by
# scripts/debug-kernel.sh.  The module for it lands in
# build/kmod/<its release>/ like any other kernel's, with -g for addr2line.
debug-kernel:
	bash scripts/debug-kernel.sh

debug-module: debug-kernel
	@kdir=$$(bash scripts/debug-kernel.sh --print-dir) && \
	d=build/kmod/$$(cat $$kdir/include/config/kernel.release) && \
	mkdir -p $$d && cp -p kernel/*.c kernel/*.h kernel/Kbuild $$d/ && \
	$(MAKE) -C $$kdir M=$(TOP)/$$d NPU_MEM_TOP=$(TOP) NPU_MEM_TEST_ENGINE=y KCFLAGS=-g W=1 modules && \
	echo "debug module: $$d/npu_mem.ko"

check-debug: deps
	$(MAKE) lib tests
	bash tests/debug/check.sh

# For CI: the debug checks only where the debug kernel is already built.
check-debug-if-cached:
	@if bash scripts/debug-kernel.sh --cached; then $(MAKE) check-debug; else \
		echo "check-debug: skipped: no debug kernel cached on this machine" \
			"(make debug-kernel builds it once)"; fi

clean:
	rm -rf build
	-$(MAKE) -C kernel clean
	-$(MAKE) -C lib clean
	-$(MAKE) -C tests clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C bench clean

# ---- arm64 ----------------------------------------------------------------
# Cross-built with Debian's arm64 cross gcc 12 against its arm64 kernels and
# libraries, extracted (not installed) by scripts/arm64-deps.sh into
# $(ARM64_CACHE): kernel/<ver>/ (image, modules, headers) and sysroot/
# (static libcheck, libsubunit, libdrm; busybox and bash for the guests).
ARM64_CACHE := $(or $(NPU_MEM_ARM64_CACHE),/var/cache/npu-mem/arm64)
ARM64_KVERS ?= $(notdir $(patsubst %/.done,%,$(wildcard $(ARM64_CACHE)/kernel/*/.done)))
# The extracted cross compiler (scripts/arm64-deps.sh says why), first in
# PATH: 6.12's headers force CROSS_COMPILE=aarch64-linux-gnu-.  Its binutils
# are installed.
ARM64_BIN := $(ARM64_CACHE)/toolchain/usr/bin
ARM64_CROSS := aarch64-linux-gnu-
ARM64_SYSROOT := $(ARM64_CACHE)/sysroot
ARM64_KTESTS := $(basename $(notdir $(wildcard tests/kernel/*.c)))
# compat32's 32-bit helper: an armhf (AArch32) program, which the arm64
# kernel runs through its compat layer as the x86_64 one runs -m32 ones.
ARMHF_CC := $(ARM64_CACHE)/toolchain-armhf/usr/bin/arm-linux-gnueabihf-gcc

arm64-deps:
	bash scripts/arm64-deps.sh

build/kmod-arm64/%/npu_mem.ko: $(KSRC) dkms.conf
	@mkdir -p $(@D)
	cp kernel/*.c kernel/*.h kernel/Kbuild $(@D)/
	PATH=$(ARM64_BIN):$$PATH \
	$(MAKE) -C $(ARM64_CACHE)/kernel/$*/usr/src/linux-headers-$* \
		M=$(TOP)/$(@D) NPU_MEM_TOP=$(TOP) NPU_MEM_TEST_ENGINE=y ARCH=arm64 \
		CROSS_COMPILE=$(ARM64_CROSS) W=1 modules

arm64-modules: $(foreach v,$(ARM64_KVERS),build/kmod-arm64/$(v)/npu_mem.ko)

ARM64_LIB := $(TOP)/build/lib-arm64
# lib/Makefile's own rules, static only: the guest's root has no libc and no
# dynamic loader, so there is no use for the shared library (and -static
# cannot link one).  The example is linked with the archive instead.
arm64-lib:
	$(MAKE) -C lib B=$(ARM64_LIB) EXB=$(TOP)/build/examples-arm64 \
		CC="$(ARM64_BIN)/$(ARM64_CROSS)gcc -static" \
		AR=$(ARM64_CROSS)ar EXAMPLE_LIB=$(ARM64_LIB)/libaclmem.a \
		JSONC_CFLAGS=-I$(ARM64_SYSROOT)/usr/include/json-c \
		EXAMPLE_LIBS="-L$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu -ljson-c" \
		$(ARM64_LIB)/libaclmem.a $(TOP)/build/examples-arm64/acl_demo

# tests/Makefile unchanged but for the library and the 32-bit compiler of
# compat32's helper: the arm64 pkg-config files give the sysroot's flags,
# -static links everything in.  The lib suite's install-access is a script
# for the x86_64 guests (setpriv, udev, python).
arm64-tests: arm64-lib
	PKG_CONFIG_LIBDIR=$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(ARM64_SYSROOT) \
	$(MAKE) -C tests B=$(TOP)/build/tests-arm64 \
		CC="$(ARM64_BIN)/$(ARM64_CROSS)gcc -static" \
		LIB_LIBS=$(ARM64_LIB)/libaclmem.a M32_CC=$(ARMHF_CC) \
		$(patsubst %,$(TOP)/build/tests-arm64/kernel/%,$(ARM64_KTESTS)) \
		$(patsubst tests/%.c,$(TOP)/build/tests-arm64/%,$(wildcard tests/lib/*.c))

# A second make, so that ARM64_KVERS sees what arm64-deps extracted.
arm64: arm64-deps
	$(MAKE) arm64-modules arm64-tests

check-arm64: arm64
	bash tests/run-arm64.sh

.PHONY: all module modules-all sparse lib tools tests deps run check clean mutation \
	debug-kernel debug-module check-debug check-debug-if-cached \
	bench bench-build bench-deps \
	arm64 arm64-deps arm64-modules arm64-lib arm64-tests check-arm64

include mk/dkms.mk mk/install.mk mk/deb.mk
