#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The MPI rows of the benchmark (make bench-mpi; doc/mpi.md), inside a
# vm-run guest: two ranks of build/bench/mpi_bw over UCX and soft-RoCE, set
# up as the MPI test sets it up (tests/mpi/rxe-mpi.sh), sending out of
# malloc'd and npu-mem buffers in the same run.  Writes mpi.csv and
# mpi-summary.txt (the table) to $VM_OUTDIR.  Arguments go to mpi_bw
# ([ITERS [SIZE...]]).
set -uo pipefail

TOP=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
out=${VM_OUTDIR:?bench/mpi/guest.sh runs in a vm-run guest}
[ -x "$TOP/build/bench/mpi_bw" ] ||
	{ echo "bench-mpi: no build/bench/mpi_bw (mpicc missing?)" >&2; exit 1; }

# shellcheck source=tests/mpi/rxe-mpi.sh
. "$TOP/tests/mpi/rxe-mpi.sh"
mpi_rxe_setup || { echo "bench-mpi: $MPI_RXE_WHY" >&2; exit 1; }
trap mpi_rxe_teardown EXIT

mpi_rxe_mpirun "$TOP/build/bench/mpi_bw" "$@" >"$out/mpi.csv" 2>"$out/mpi.log"
rc=$?
{
	case $MPI_RXE_LAYOUT in
	netns) how="an rxe device per rank, in two network namespaces" ;;
	*) how="rxe loopback" ;;
	esac
	echo "MPI point-to-point over UCX rc_verbs on soft-RoCE ($how), $(uname -r)"
	column -t -s, "$out/mpi.csv"
} | tee "$out/mpi-summary.txt"
[ "$rc" = 0 ] || { echo "bench-mpi: mpirun exit status $rc (see mpi.log)" >&2; cat "$out/mpi.log" >&2; }
exit "$rc"
