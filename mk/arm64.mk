# SPDX-License-Identifier: GPL-2.0-only
#
# arm64: the module, libaclmem and the test programs, cross-built with
# Debian's arm64 cross gcc 12 against its arm64 kernels and
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
	$(call KCOPY,$(@D))
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
		EXAMPLE_LIBS="-L$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu -ljson-c -lm" \
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
		AR=$(ARM64_CROSS)ar LIB_LIBS=$(ARM64_LIB)/libaclmem.a M32_CC=$(ARMHF_CC) \
		$(patsubst %,$(TOP)/build/tests-arm64/kernel/%,$(ARM64_KTESTS)) \
		$(patsubst tests/%.c,$(TOP)/build/tests-arm64/%,$(wildcard tests/lib/*.c))

# A second make, so that ARM64_KVERS sees what arm64-deps extracted.
arm64: arm64-deps
	$(MAKE) arm64-modules arm64-tests

check-arm64: arm64
	bash tests/run-arm64.sh

.PHONY: arm64 arm64-deps arm64-modules arm64-lib arm64-tests check-arm64
