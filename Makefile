# SPDX-License-Identifier: GPL-2.0-only
#
# npu-mem top-level build.
#   make                 module (newest kernel, or KDIR=), libaclmem, tests
#   make modules-all     the module for every installed kernel, in build/kmod/<ver>/
#   make run             boot a guest with the driver loaded and run the demo
#   make check           install what is missing, build, run every test suite
#   make sparse          sparse (C=2) over the module for every kernel
#   make install/uninstall (DESTDIR, PREFIX)
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

deps:
	bash scripts/deps.sh

run: deps
	$(MAKE) modules-all lib tests
	bash tests/vm/demo.sh

check: deps
	$(MAKE) modules-all lib tests
	bash tests/run-all.sh

clean:
	rm -rf build
	-$(MAKE) -C kernel clean
	-$(MAKE) -C lib clean
	-$(MAKE) -C tests clean

.PHONY: all module modules-all sparse lib tests deps run check clean

include mk/dkms.mk mk/install.mk
