#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build and run tdt_queue the way CANN's samples' run.sh do: the toolkit
# from ASCEND_INSTALL_PATH or ASCEND_HOME_PATH (or CANN's default place),
# its bin/setenv.bash sourced, then cmake.
set -e
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j
./build/tdt_queue
