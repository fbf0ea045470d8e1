# SPDX-License-Identifier: GPL-2.0-only
#
# npu-mem top-level build.
#   make                 module (newest kernel, or KDIR=), libaclmem, tools:
#                        what a user needs (no Check, no libdrm)
#   make tests           the test programs (tests/, bench/)
#   make modules-all     the module for every installed kernel, in build/kmod/<ver>/
#   make run             boot a guest with the driver loaded and run the demo
#                        (installs and builds only what the demo needs)
#   make check           install what is missing, build, run every test suite
#                        (each where it proves something; doc/testing.md)
#   make check-full      the same over the whole matrix: every suite on every
#                        kernel and configuration, longer soaks
#   make sparse          sparse (C=2) and W=1 over the module, every kernel,
#                        in a build of its own; fails on any warning
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
#   make bench-mpi       MPI bandwidth over soft-RoCE, npu-mem buffers against
#                        malloc'd ones, in a guest: build/bench/mpi/
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

# KCOPY DIR: a kernel's own copy of the module sources, so that builds for
# different kernels (and sparse) never share objects.
KCOPY = mkdir -p $(1) && cp kernel/*.c kernel/*.h kernel/Kbuild $(1)/

all: module lib tools

# The tests' module, W=1, and with sparse where it is installed (C=1 checks
# every file, as KCOPY refreshes them all); the log stays beside it, so that
# make check reads the warnings of this very build instead of building
# everything a second time (tests/run-all.sh; make sparse does that).
SPARSE_C = $(if $(shell command -v sparse),C=1)
build/kmod/%/npu_mem.ko: $(KSRC) dkms.conf
	$(call KCOPY,$(@D))
	+$(KRUN) $* make -C /lib/modules/$*/build M=$(TOP)/$(@D) NPU_MEM_TOP=$(TOP) \
		NPU_MEM_TEST_ENGINE=y W=1 $(SPARSE_C) modules >$(@D)/build.log 2>&1; \
	rc=$$?; cat $(@D)/build.log; exit $$rc

module:
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules

modules-all: $(foreach v,$(KVERS),build/kmod/$(v)/npu_mem.ko)

sparse:
	@for v in $(KVERS); do \
		d=build/sparse/$$v; $(call KCOPY,$$d); \
		$(KRUN) $$v make -C /lib/modules/$$v/build M=$(TOP)/$$d NPU_MEM_TOP=$(TOP) \
			NPU_MEM_TEST_ENGINE=y C=2 W=1 modules 2>&1 | tee $$d/sparse.log; \
		! grep -E 'warning|error' $$d/sparse.log || exit 1; \
		! grep -q 'is not available or not up to date' $$d/sparse.log || \
			echo "sparse: not run on $$v: its kbuild refused sparse (W=1 only; Debian's sparse 0.6.4 cannot parse 7.x's headers)"; \
	done

lib:
	$(MAKE) -C lib

tools:
	$(MAKE) -C tools

tests: lib
	$(MAKE) -C tests
	$(MAKE) -C bench

# The host's newest bootable kernel; recursive, so that it sees a kernel
# that deps has just installed.
NEWEST_KVER = $(shell for d in /lib/modules/*/; do \
	v=$$(basename $$d); [ -e /boot/vmlinuz-$$v ] && echo $$v; done | sort -V | tail -n1)
# The benchmark: newest bootable kernel unless KVER= is given.
BENCH_KVER ?= $(or $(KVER),$(NEWEST_KVER))

bench-build: lib
	$(MAKE) -C bench

bench-deps: deps
	bash bench/deps.sh

bench: bench-deps
	$(MAKE) build/kmod/$(BENCH_KVER)/npu_mem.ko bench-build
	KVER=$(BENCH_KVER) bash bench/run.sh

# MPI over soft-RoCE in a guest, npu-mem buffers against malloc'd ones
# (doc/mpi.md): build/bench/mpi/mpi-summary.txt.  BENCH_MPI_ARGS: mpi_bw's.
bench-mpi: bench-deps
	$(MAKE) build/kmod/$(BENCH_KVER)/npu_mem.ko bench-build
	tests/vm/vm-run -k $(BENCH_KVER) -t 900 -o build/bench/mpi -- \
		bash bench/mpi/guest.sh $(BENCH_MPI_ARGS)

deps:
	bash scripts/deps.sh

deps-run:
	bash scripts/deps.sh --run

# Builds run side by side: the module for four kernels and the test
# programs are many small independent jobs.
NPROC := $(shell nproc 2>/dev/null || echo 1)

# The demo needs one kernel, the library and QEMU: nothing of the tests.
run: deps-run
	$(MAKE) -j$(NPROC) build/kmod/$(NEWEST_KVER)/npu_mem.ko lib
	bash tests/vm/demo.sh -k $(NEWEST_KVER)

check: deps
	$(MAKE) -j$(NPROC) modules-all lib tests
	bash tests/run-all.sh

check-full: deps
	$(MAKE) -j$(NPROC) modules-all lib tests
	RUN_ALL_PROFILE=full bash tests/run-all.sh

# Mutation testing: each mutant of tests/mutation/mutants.txt (a realistic
# bug in kernel/ or lib/) built in a copy of the tree and run against the
# test programs that should catch it; build/mutation/results.txt.
# MUTATION_ARGS: e.g. "--baseline", "-t 900", or mutant ids.
mutation: tests
	/usr/bin/python3 tests/mutation/run.py $(MUTATION_ARGS)

clean:
	rm -rf build
	-$(MAKE) -C kernel clean
	-$(MAKE) -C lib clean
	-$(MAKE) -C tests clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C bench clean

.PHONY: all module modules-all sparse lib tools tests deps deps-run run check check-full clean mutation \
	bench bench-build bench-deps bench-mpi

include mk/debug.mk mk/arm64.mk mk/dkms.mk mk/install.mk mk/deb.mk
