# SPDX-License-Identifier: GPL-2.0-only
#
# npu-mem top-level build.
#   make                 module (newest kernel, or KDIR=), libaclmem, tests
#   make modules-all     the module for every installed kernel, in build/kmod/<ver>/
#   make run             boot a guest with the driver loaded and run the demo
#   make check           install what is missing, build, run every test suite
#   make sparse          sparse (C=2) over the module for every kernel
#   make check-debug     the suites, fault injection and the fuzzer on the
#                        debug kernel (KASAN, kmemleak, lockdep; built once)
#   make bench           benchmark against the alternatives in a guest
#                        (KVER=, BENCH_ARGS=-q): build/bench/results/
#   make install/uninstall (DESTDIR, PREFIX; mk/install.mk)
#   make dkms-add, dkms-build, dkms-install, dkms-remove (mk/dkms.mk)
TOP := $(CURDIR)
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
KVERS ?= $(notdir $(patsubst %/build,%,$(wildcard /lib/modules/*/build)))
KDIR ?= $(or $(KERNEL_DIR),$(lastword $(sort $(wildcard /lib/modules/*/build))))
KSRC := $(wildcard kernel/*.c kernel/*.h) kernel/Kbuild include/uapi/linux/npu_mem.h

export VERSION TOP

all: module lib tests

# Each kernel gets its own copy of the sources so builds do not share objects.
build/kmod/%/npu_mem.ko: $(KSRC) dkms.conf
	@mkdir -p $(@D)
	cp kernel/*.c kernel/*.h kernel/Kbuild $(@D)/
	$(MAKE) -C /lib/modules/$*/build M=$(TOP)/$(@D) NPU_MEM_TOP=$(TOP) \
		W=1 modules

module:
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules

modules-all: $(foreach v,$(KVERS),build/kmod/$(v)/npu_mem.ko)

sparse:
	@for v in $(KVERS); do \
		d=build/sparse/$$v; mkdir -p $$d; \
		cp kernel/*.c kernel/*.h kernel/Kbuild $$d/; \
		$(MAKE) -C /lib/modules/$$v/build M=$(TOP)/$$d NPU_MEM_TOP=$(TOP) \
			C=2 modules 2>&1 | tee $$d/sparse.log; \
		! grep -E 'warning|error' $$d/sparse.log || exit 1; \
	done

lib:
	$(MAKE) -C lib

tests: lib
	$(MAKE) -C tests
	$(MAKE) -C bench

# The benchmark (issue 9): newest bootable kernel unless KVER= is given.
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

# The debug kernel (issue 8): KASAN, kmemleak, lockdep, DMA-API debugging
# and fault injection, built once per machine outside the clone by
# scripts/debug-kernel.sh.  The module for it lands in
# build/kmod/<its release>/ like any other kernel's, with -g for addr2line.
debug-kernel:
	bash scripts/debug-kernel.sh

debug-module: debug-kernel
	@kdir=$$(bash scripts/debug-kernel.sh --print-dir) && \
	d=build/kmod/$$(cat $$kdir/include/config/kernel.release) && \
	mkdir -p $$d && cp -p kernel/*.c kernel/*.h kernel/Kbuild $$d/ && \
	$(MAKE) -C $$kdir M=$(TOP)/$$d NPU_MEM_TOP=$(TOP) KCFLAGS=-g W=1 modules && \
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
	-$(MAKE) -C bench clean

.PHONY: all module modules-all sparse lib tests deps run check clean \
	debug-kernel debug-module check-debug check-debug-if-cached \
	bench bench-build bench-deps

include mk/dkms.mk mk/install.mk
