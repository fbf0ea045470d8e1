# SPDX-License-Identifier: GPL-2.0-only
#
# DKMS: the module built and installed by dkms for every kernel with headers.
#   make dkms-src       copy the module sources to $(DESTDIR)/usr/src/npu-mem-VERSION
#   make dkms-add       dkms-src, then register them with dkms (once)
#   make dkms-build     dkms build for each of DKMS_KVERS (default: all kernels)
#   make dkms-install   dkms install for each of DKMS_KVERS (depmod, no modprobe)
#   make dkms-remove    dkms remove --all, and the sources in /usr/src
# Every target can be run again: steps already done are skipped, except that
# dkms-build rebuilds from the current sources (--force), and dkms-install
# does where the last build was of other sources, so an edited tree is what
# gets installed.
DKMS ?= dkms
DKMS_NAME := npu-mem
DKMS_KVERS ?= $(KVERS)
DKMS_SRCDIR := /usr/src/$(DKMS_NAME)-$(VERSION)
DKMS_MV := -m $(DKMS_NAME) -v $(VERSION)
# "dkms status" prints a line for a module/version once it is added.
dkms_added = $(DKMS) status $(DKMS_MV) 2>/dev/null | grep -q .

# Only what the module build needs: the Kbuild looks one level up from
# kernel/ for dkms.conf (the version) and include/uapi (the ABI header).
dkms-src:
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)
	install -d $(DESTDIR)$(DKMS_SRCDIR)/kernel $(DESTDIR)$(DKMS_SRCDIR)/include/uapi/linux
	install -m 644 dkms.conf $(DESTDIR)$(DKMS_SRCDIR)/
	install -m 644 $(wildcard kernel/*.c kernel/*.h) kernel/Kbuild kernel/Makefile \
		$(DESTDIR)$(DKMS_SRCDIR)/kernel/
	install -m 644 include/uapi/linux/npu_mem.h $(DESTDIR)$(DKMS_SRCDIR)/include/uapi/linux/

dkms-add: dkms-src
	if ! $(dkms_added); then $(DKMS) add $(DKMS_MV); fi

# Each build records its sources' checksum in DKMS's own tree (dkms remove
# takes it away with the rest), so that dkms-install builds again only what
# was built from other sources: an edited tree is rebuilt, an unchanged one
# is not built twice.
DKMS_TREE := /var/lib/dkms/$(DKMS_NAME)/$(VERSION)
dkms_srcsum = cd $(DKMS_SRCDIR) && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum
dkms_build_k = $(DKMS) build $(DKMS_MV) -k $$k --force && echo "$$sum" >$(DKMS_TREE)/srcsum-$$k

dkms-build: dkms-add
	sum=$$($(dkms_srcsum)) && for k in $(DKMS_KVERS); do \
		$(dkms_build_k) || exit; \
	done

dkms-install: dkms-add
	sum=$$($(dkms_srcsum)) && for k in $(DKMS_KVERS); do \
		if [ "$$(cat $(DKMS_TREE)/srcsum-$$k 2>/dev/null)" != "$$sum" ]; then \
			$(dkms_build_k) || exit; \
		fi; \
		$(DKMS) install $(DKMS_MV) -k $$k --force || exit; \
	done

dkms-remove:
	if $(dkms_added); then $(DKMS) remove $(DKMS_MV) --all; fi
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)

.PHONY: dkms-src dkms-add dkms-build dkms-install dkms-remove
