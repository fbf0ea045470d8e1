# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# A pool of background jobs for the test runners (sourced by tests/run-all.sh
# and tests/run-arm64.sh, after tests/summary.sh).  A QEMU TCG guest running
# one test program keeps about one host CPU busy, so on a machine with two or
# more CPUs two guests side by side finish the matrix in a little over half
# the time.  Every test must pass that way anyway: a test whose verdict
# depends on how fast the host is, is a bug of the test.
#
#   job ID[:DEP,...] FUNCTION ARGS...
#                            queue FUNCTION ARGS... as job ID (unique, a
#                            file name), to start once the jobs DEP... have
#                            ended; it runs in a subshell, its output goes
#                            to $JOBS_DIR/ID.log, and what it add()s to the
#                            summary comes back to this shell
#   jobs_run                 run the queue, at most $JOBS_MAX at a time,
#                            each as early in the order queued as its
#                            dependencies allow; each job's log is printed
#                            whole when it ends; then its summary lines are
#                            added in the order the jobs were queued, so the
#                            summary reads the same however they interleaved
#
# Environment: JOBS_MAX (default: the number of CPUs, at most 2).
# Needs JOBS_DIR set to a fresh directory.

jobs_queue=()
JOBS_MAX=${JOBS_MAX:-$(n=$(nproc 2>/dev/null || echo 1); echo $((n < 2 ? n : 2)))}

job() {
	jobs_queue+=("$(printf '%q ' "$@")")
}

# jobs_body ID FUNCTION ARGS...: in the job's subshell; saves what the
# function added to the summary.
jobs_body() {
	local id=$1
	shift
	tot_p=0 tot_f=0 tot_s=0 summary=() details=()
	"$@"
	# -g: jobs_merge reads this back inside a function.
	declare -p tot_p tot_f tot_s summary details |
		sed 's/^declare -/declare -g -/' >"$JOBS_DIR/$id.sum"
}

# jobs_merge ID: the job's summary lines and totals into this shell's.
jobs_merge() {
	local id=$1
	if [ ! -s "$JOBS_DIR/$id.sum" ]; then
		add "$id" 0 1 0 "the job ended without a summary, see $JOBS_DIR/$id.log"
		return
	fi
	local mp=$tot_p mf=$tot_f ms=$tot_s
	local -a ms_sum=("${summary[@]}") ms_det=("${details[@]}")
	# shellcheck disable=SC1090 # written by jobs_body above
	. "$JOBS_DIR/$id.sum"
	summary=("${ms_sum[@]}" "${summary[@]}")
	details=("${ms_det[@]}" "${details[@]}")
	tot_p=$((mp + tot_p)) tot_f=$((mf + tot_f)) tot_s=$((ms + tot_s))
}

jobs_run() {
	local -A running=() ended=() began=()
	local -a ids=() waiting=() args
	local entry id deps d i ok started
	mkdir -p "$JOBS_DIR"
	for entry in "${jobs_queue[@]}"; do
		eval "args=($entry)"
		ids+=("${args[0]%%:*}")
	done
	waiting=("${jobs_queue[@]}")
	while [ "${#waiting[@]}" -gt 0 ] || [ "${#running[@]}" -gt 0 ]; do
		started=0
		if [ "${#running[@]}" -lt "$JOBS_MAX" ]; then
			for i in "${!waiting[@]}"; do
				eval "args=(${waiting[$i]})"
				id=${args[0]%%:*} deps="" ok=1
				[[ ${args[0]} == *:* ]] && deps=${args[0]#*:}
				for d in ${deps//,/ }; do
					[ -n "${ended[$d]:-}" ] || ok=0
				done
				[ "$ok" = 1 ] || continue
				jobs_body "$id" "${args[@]:1}" >"$JOBS_DIR/$id.log" 2>&1 </dev/null &
				running[$!]=$id
				began[$id]=$SECONDS
				unset "waiting[$i]"
				waiting=("${waiting[@]}")
				started=1
				break
			done
		fi
		# A free slot with nothing startable, or no free slot: wait for
		# a job to end.
		[ "$started" = 1 ] && continue
		if [ "${#running[@]}" -eq 0 ]; then
			for entry in "${waiting[@]}"; do
				eval "args=($entry)"
				echo "jobs: ${args[0]} waits for a job that is not queued" >&2
				add "${args[0]%%:*}" 0 1 0 "not run: waits for a job that is not queued"
			done
			break
		fi
		jobs_reap
	done
	jobs_queue=()
	for id in "${ids[@]}"; do [ ! -e "$JOBS_DIR/$id.log" ] || jobs_merge "$id"; done
}

# jobs_reap: wait for one running job to end and print its log.
jobs_reap() {
	local done_pid=""
	wait -n -p done_pid "${!running[@]}"
	[ -n "$done_pid" ] || return 0
	printf '\n==== %s (ended after %d s) ====\n' "${running[$done_pid]}" \
		$((SECONDS - began[${running[$done_pid]}]))
	cat "$JOBS_DIR/${running[$done_pid]}.log"
	ended[${running[$done_pid]}]=1
	unset "running[$done_pid]"
}
