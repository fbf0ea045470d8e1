#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# netns-rsh.sh HOST CMD...: Open MPI's rsh agent (plm_rsh_agent) in the MPI
# test's two-namespace layout (tests/mpi/rxe-mpi.sh).  HOST is the name of a
# network namespace; CMD, the daemon's command line that ssh would hand to
# the remote shell, runs in it as it would there, in a UTS namespace whose
# host name is HOST, so that Open MPI tells the two "hosts" apart.
ns=$1
shift
# shellcheck disable=SC2016 # expanded by that sh
exec ip netns exec "$ns" unshare -u sh -c 'hostname "$0" && eval "$*"' "$ns" "$@"
