# SPDX-License-Identifier: GPL-2.0-only
#
# Debian packages (debian/):
#   make deb         dpkg-buildpackage -us -uc -b in a clean Debian 12 root
#                    with only the build dependencies (scripts/deb-build.sh),
#                    into build/deb/, then lintian (as nobody), which must
#                    report no error and no warning; an override would go in
#                    debian/<package>.lintian-overrides with a comment why
#                    (there is none)
#   make check-deb   make deb, then tests/install/deb-test.sh: apt install
#                    in a clean root, guests on 6.1 and 6.12 booted from it,
#                    apt purge; prints how long it all took
# Both need root; the roots are made once and cached in
# /var/cache/npu-mem/deb/ (scripts/deb-root.sh).
LINTIAN_ARGS ?= --display-info --pedantic --display-experimental --fail-on error,warning

deb-deps:
	bash scripts/deb-deps.sh

deb: deb-deps
	bash scripts/deb-build.sh
	@echo "lintian $(LINTIAN_ARGS) build/deb/*.changes (as nobody: it warns about root)"
	@setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/tmp \
		lintian $(LINTIAN_ARGS) build/deb/*.changes >build/deb/lintian.txt 2>&1; \
		rc=$$?; cat build/deb/lintian.txt; \
		echo "lintian: exit $$rc, $$(grep -c '^[EW]:' build/deb/lintian.txt) errors and warnings"; \
		exit $$rc

check-deb:
	@t0=$$(date +%s); \
	$(MAKE) deb && bash tests/install/deb-test.sh; rc=$$?; \
	echo "check-deb: $$(( $$(date +%s) - t0 )) s, exit $$rc"; exit $$rc

.PHONY: deb-deps deb check-deb
