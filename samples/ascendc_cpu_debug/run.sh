#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build and run ascendc_cpu_debug the way CANN's kernel-launch samples'
# run.sh do: -r npu (the default) or -r cpu (CANN's CPU debug mode),
# the toolkit from ASCEND_INSTALL_PATH or ASCEND_HOME_PATH (or CANN's
# default place), its bin/setenv.bash sourced, then cmake.
set -e
mode=npu
while getopts r: opt; do
	case $opt in
	r) mode=$OPTARG ;;
	*) echo "usage: run.sh [-r npu|cpu]" >&2; exit 2 ;;
	esac
done
if [ -n "${ASCEND_INSTALL_PATH:-}" ]; then
	install_path=$ASCEND_INSTALL_PATH
elif [ -n "${ASCEND_HOME_PATH:-}" ]; then
	install_path=$ASCEND_HOME_PATH
else
	install_path=/usr/local/Ascend/ascend-toolkit/latest
fi
# shellcheck disable=SC1091 # the toolkit's
source "$install_path/bin/setenv.bash"

cd "$(dirname "$0")"
rm -rf build
cmake -S . -B build -DRUN_MODE="$mode" -DSOC_VERSION=Ascend910B1 \
	-DASCEND_CANN_PACKAGE_PATH="$install_path" -DCMAKE_BUILD_TYPE=Release
cmake --build build -j
./build/ascendc_cpu_debug
