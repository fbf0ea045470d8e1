# SPDX-License-Identifier: GPL-2.0-only
#
# make install / make uninstall: everything but the module, which DKMS
# installs (mk/dkms.mk).  DESTDIR stages for a package; PREFIX (default
# /usr/local), BINDIR, LIBDIR, MANDIR, PYTHONDIR, UDEVRULESDIR and SYSUSERSDIR
# can be set one by one.  Without DESTDIR, install also creates group "npu",
# reloads udev and runs ldconfig; with it, that is the package's job.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
MANDIR ?= $(PREFIX)/share/man
# udev and systemd-sysusers read /usr/lib (or /lib) and /etc only, never
# /usr/local: a /usr/local install puts its rule and group entry in /etc.
ifeq ($(PREFIX),/usr)
UDEVRULESDIR ?= $(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/usr/lib/udev)/rules.d
SYSUSERSDIR ?= $(or $(shell pkg-config --variable=sysusersdir systemd 2>/dev/null),/usr/lib/sysusers.d)
else
UDEVRULESDIR ?= /etc/udev/rules.d
SYSUSERSDIR ?= /etc/sysusers.d
endif
# The python3 the module is built for (lib/Makefile), and the directory it
# searches for PREFIX: Debian's dist-packages layout when it is Debian's.
PYTHON ?= /usr/bin/python3
PYEXT = $(shell $(PYTHON)-config --extension-suffix 2>/dev/null)
PYTHONDIR ?= $(shell $(PYTHON) -c 'import sys; p = "$(PREFIX)"; \
	deb = "/usr/lib/python3/dist-packages" in sys.path; \
	v = "%d.%d" % sys.version_info[:2]; \
	print(p + "/lib/python3/dist-packages" if deb and p == "/usr" else \
	      p + "/lib/python" + v + ("/dist-packages" if deb else "/site-packages"))')
MANPAGES := $(wildcard doc/man/*.[1-9])
NPU_GROUP := npu

# PYTHONDIR: the toolkit's python/site-packages links to the module there.
INSTALL_LIBVARS := PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) PYTHON=$(PYTHON) \
		   PYTHONDIR=$(PYTHONDIR)

build/tools/npu-smi: tools/npu-smi.c include/uapi/linux/npu_mem.h
	$(MAKE) -C tools

install-files: build/tools/npu-smi
	$(MAKE) -C lib $(INSTALL_LIBVARS) lib python
	$(MAKE) -C lib $(INSTALL_LIBVARS) install
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PYTHONDIR) \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(addprefix $(DESTDIR)$(MANDIR)/man,$(sort $(subst .,,$(suffix $(MANPAGES)))))
	install -m 755 build/tools/npu-smi $(DESTDIR)$(BINDIR)/
	install -m 644 build/python/acl$(PYEXT) $(DESTDIR)$(PYTHONDIR)/
	install -m 644 udev/60-npu-mem.rules $(DESTDIR)$(UDEVRULESDIR)/
	install -m 644 udev/npu-mem.sysusers $(DESTDIR)$(SYSUSERSDIR)/npu-mem.conf
	for m in $(MANPAGES); do \
		s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit; \
	done

# What a package's postinst would do, done here for a direct install.
install: install-files
	@if [ -z "$(DESTDIR)" ]; then \
		if command -v systemd-sysusers >/dev/null; then \
			echo "systemd-sysusers $(SYSUSERSDIR)/npu-mem.conf"; \
			systemd-sysusers $(SYSUSERSDIR)/npu-mem.conf; \
		elif ! getent group $(NPU_GROUP) >/dev/null; then \
			echo "groupadd --system $(NPU_GROUP)"; \
			groupadd --system $(NPU_GROUP); \
		fi; \
		if udevadm control --reload 2>/dev/null; then \
			echo "udevadm: rules reloaded"; \
			udevadm trigger --action=change --sysname-match=npu-mem || true; \
		fi; \
		ldconfig; \
	fi

# The group stays: files elsewhere may belong to it (as with any package).
uninstall:
	$(MAKE) -C lib $(INSTALL_LIBVARS) uninstall
	rm -f $(DESTDIR)$(BINDIR)/npu-smi $(DESTDIR)$(PYTHONDIR)/acl$(PYEXT) \
	      $(DESTDIR)$(UDEVRULESDIR)/60-npu-mem.rules \
	      $(DESTDIR)$(SYSUSERSDIR)/npu-mem.conf \
	      $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	@if [ -z "$(DESTDIR)" ]; then ldconfig; fi

.PHONY: install install-files uninstall
