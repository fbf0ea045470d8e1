#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Lay out (or remove) a CANN-style toolkit directory for libaclmem, so that a
# CANN program's build files find it the way they find CANN's own toolkit:
# "source TOOLKIT/set_env.sh", then TOOLKIT/include and -lascendcl from
# TOOLKIT/lib64 (doc/toolkit.md).  Everything in it but set_env.sh is a
# relative symbolic link to the real files, so the build tree's toolkit
# follows every rebuild and an installed one follows every upgrade.
#
#   mktoolkit.sh [-d DESTDIR] [-a ASCENDC] TOOLKIT INCDIR NPU_MEM_H LIBSO [PYMOD]
#   mktoolkit.sh -r [-d DESTDIR] TOOLKIT
#
#   TOOLKIT    the toolkit's final path (written into set_env.sh)
#   INCDIR     the directory holding acl/ and aclmem/
#   NPU_MEM_H  the driver's UAPI header, linked as include/linux/npu_mem.h
#   LIBSO      libaclmem.so.1 (the SONAME: a program linked with -lascendcl
#              records it, so lib64 holds it too for LD_LIBRARY_PATH)
#   PYMOD      the CPython module acl*.so, linked into python/site-packages
#   -a ASCENDC the AscendC kernel files (lib/ascendc: include/ and cmake/),
#              linked where CANN keeps its own (compiler/tikcpp/tikcfw and
#              .../ascendc_kernel_cmake, also under tools/), with
#              ASCENDC_CMAKE_DIR in set_env.sh, and the CPU debug package
#              where CANN's is (tools/tikicpulib/lib/cmake/tikicpulib)
#              (doc/ascendc.md)
#   -d DESTDIR write under DESTDIR (a package's staging root); every path
#              above is the final one, without DESTDIR
#   -r         remove what this script lays out, and the directories once
#              empty (never anything else)
set -eu

dest="" remove=0 asc=""
while getopts a:d:r opt; do
	case $opt in
	a) asc=$OPTARG ;;
	d) dest=$OPTARG ;;
	r) remove=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "mktoolkit.sh: no toolkit directory" >&2; exit 2; }
tk=$1
case $tk in /*) ;; *) echo "mktoolkit.sh: $tk: not absolute" >&2; exit 2 ;; esac
T=$dest$tk

# The names CANN's build files link (libascendcl, libacl_rt, libacl_rt_impl,
# which holds what libacl_rt forwards to, libacl_dvpp for
# acldvppMalloc/acldvppFree, libacl_tdt_channel and libacl_tdt_queue for the
# TDT calls) and ours.  Libraries whose functions libaclmem
# does not implement get no name (doc/toolkit.md).
LIBNAMES="libascendcl.so libacl_rt.so libacl_rt_impl.so libacl_dvpp.so libmsprofiler.so
	  libprofapi.so libacl_tdt_channel.so libacl_tdt_queue.so libaclmem.so"

if [ "$remove" = 1 ]; then
	rm -f "$T/set_env.sh" "$T/bin/setenv.bash" "$T/include/acl" "$T/include/aclmem" \
	      "$T/compiler/tikcpp/tikcfw" "$T/compiler/tikcpp/ascendc_kernel_cmake" \
	      "$T/tools/tikcpp" "$T/tools/tikicpulib/lib/cmake/tikicpulib" \
	      "$T/include/linux/npu_mem.h" "$T/runtime/include" "$T/runtime/lib64" \
	      "$T/lib64/libaclmem.so.1"
	for n in $LIBNAMES; do rm -f "$T/lib64/$n" "$T/lib64/stub/$n"; done
	rm -f "$T"/python/site-packages/acl*.so
	for d in include/linux include lib64/stub lib64 runtime \
		 python/site-packages python compiler/tikcpp compiler \
		 tools/tikicpulib/lib/cmake tools/tikicpulib/lib tools/tikicpulib \
		 tools bin ""; do
		rmdir "$T/$d" 2>/dev/null || true
	done
	exit 0
fi

[ $# -ge 4 ] || { echo "mktoolkit.sh: TOOLKIT INCDIR NPU_MEM_H LIBSO [PYMOD]" >&2; exit 2; }
inc=$2 uapi=$3 so=$4 py=${5:-}

# link TARGET LINK: LINK (under DESTDIR) -> TARGET, relative to LINK's
# final directory.
link() {
	ln -sfn "$(realpath -m -s --relative-to="$(dirname "$tk/$2")" "$1")" "$T/$2"
}

mkdir -p "$T/include/linux" "$T/lib64/stub" "$T/runtime"
link "$inc/acl" include/acl
link "$inc/aclmem" include/aclmem
link "$uapi" include/linux/npu_mem.h
link "$so" lib64/libaclmem.so.1
for n in $LIBNAMES; do
	link "$so" "lib64/$n"
	# Ascend's samples link against runtime/lib64/stub (NPU_HOST_LIB).
	link "$so" "lib64/stub/$n"
done
# Older samples use DDK_PATH/runtime/include and DDK_PATH/runtime/lib64.
link "$tk/include" runtime/include
link "$tk/lib64" runtime/lib64
if [ -n "$asc" ]; then
	mkdir -p "$T/compiler/tikcpp" "$T/tools"
	link "$asc/include" compiler/tikcpp/tikcfw
	link "$asc/cmake" compiler/tikcpp/ascendc_kernel_cmake
	# Build files look in tools/tikcpp or compiler/tikcpp, by CANN version.
	link "$tk/compiler/tikcpp" tools/tikcpp
	mkdir -p "$T/tools/tikicpulib/lib/cmake"
	link "$asc/cmake" tools/tikicpulib/lib/cmake/tikicpulib
fi
if [ -n "$py" ]; then
	mkdir -p "$T/python/site-packages"
	rm -f "$T"/python/site-packages/acl*.so
	link "$py" "python/site-packages/${py##*/}"
fi

# set_env.sh: the variables CANN's own set_env.sh sets that mean something
# here.  The path is written in, as CANN's installer does: a sourced script
# cannot find itself in every shell (dash has no BASH_SOURCE).  Written to a
# temporary name first, so that a reader never sees half a file.
cat >"$T/set_env.sh.tmp" <<EOF
# libaclmem's CANN-style toolkit (doc/toolkit.md).  Source it, from bash,
# dash or any POSIX shell, as CANN's set_env.sh is:
#     . $tk/set_env.sh
# then build a CANN program unchanged: its build files find include/ and
# lib64/ (libascendcl.so, libacl_rt.so) through ASCEND_TOOLKIT_HOME or
# ASCEND_HOME_PATH, and python3 finds the acl module.
export ASCEND_TOOLKIT_HOME="$tk"
export ASCEND_HOME_PATH="\${ASCEND_TOOLKIT_HOME}"
export ASCEND_AICPU_PATH="\${ASCEND_TOOLKIT_HOME}"
# There are no operator packages: build files use it to find the toolkit
# (its parent).
export ASCEND_OPP_PATH="\${ASCEND_TOOLKIT_HOME}/opp"
export LD_LIBRARY_PATH="\${ASCEND_TOOLKIT_HOME}/lib64\${LD_LIBRARY_PATH:+:\${LD_LIBRARY_PATH}}"
export PYTHONPATH="\${ASCEND_TOOLKIT_HOME}/python/site-packages\${PYTHONPATH:+:\${PYTHONPATH}}"
EOF
if [ -n "$asc" ]; then
	cat >>"$T/set_env.sh.tmp" <<EOF
# AscendC kernels: include(\${ASCENDC_CMAKE_DIR}/ascendc.cmake) finds
# ascendc_library(), which builds them to run on the CPU.
export ASCENDC_CMAKE_DIR="\${ASCEND_TOOLKIT_HOME}/compiler/tikcpp/ascendc_kernel_cmake"
EOF
fi
mv -f "$T/set_env.sh.tmp" "$T/set_env.sh"
chmod 0644 "$T/set_env.sh"

# bin/setenv.bash: what CANN's toolkit-level script is to its samples'
# run.sh ("source \$ASCEND_HOME_PATH/bin/setenv.bash"): the same
# environment as set_env.sh.
mkdir -p "$T/bin"
cat >"$T/bin/setenv.bash.tmp" <<EOF
# libaclmem's toolkit environment, as CANN's bin/setenv.bash (doc/toolkit.md).
. "$tk/set_env.sh"
EOF
mv -f "$T/bin/setenv.bash.tmp" "$T/bin/setenv.bash"
chmod 0644 "$T/bin/setenv.bash"
