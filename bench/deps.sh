#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What `make bench` needs beyond scripts/deps.sh: matplotlib for the plot,
# which is drawn on the host.  Idempotent: apt is not touched when it is
# already installed.
set -euo pipefail

# Debian's python3, whatever else is first in PATH (as lib/Makefile).
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "bench-deps: need root for apt-get (python3-matplotlib)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends python3-matplotlib; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends python3-matplotlib
fi
