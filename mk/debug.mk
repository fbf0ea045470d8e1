# SPDX-License-Identifier: GPL-2.0-only
#
# The debug kernel: KASAN, kmemleak, lockdep, DMA-API debugging
# and fault injection, built once per machine outside the clone by
# scripts/debug-kernel.sh.  The module for it lands in
# build/kmod/<its release>/ like any other kernel's, with -g for addr2line.
debug-kernel:
	bash scripts/debug-kernel.sh

debug-module: debug-kernel
	@kdir=$$(bash scripts/debug-kernel.sh --print-dir) && \
	d=build/kmod/$$(cat $$kdir/include/config/kernel.release) && \
	$(call KCOPY,$$d) && \
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

.PHONY: debug-kernel debug-module check-debug check-debug-if-cached
