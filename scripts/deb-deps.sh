#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What make deb and make check-deb need on the host, from Debian's packages:
# mmdebstrap makes the clean build and test roots, lintian checks the
# packages.  The build dependencies themselves are installed only inside the
# build root (debian/control), never here.  Idempotent, like scripts/deps.sh:
# apt is not touched when nothing is missing.
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "deb-deps: must run as root (apt-get, mmdebstrap)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

PKGS="mmdebstrap lintian dpkg-dev"
todo=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || todo="$todo $p"
done
if [ -n "$todo" ]; then
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $todo
fi
echo "deb-deps: ok (mmdebstrap $(dpkg-query -W -f='${Version}' mmdebstrap)," \
	"lintian $(dpkg-query -W -f='${Version}' lintian))"
