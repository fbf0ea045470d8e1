#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the vm-run initramfs (busybox sh, PID 1).  Generic for a kernel
# version: everything about one run (command, module, parameters) comes from
# the job file that vm-run writes into the writable "vmout" share, so the
# cached initramfs never has to be rebuilt for a new command.
#
# Protocol with the host (all in the vmout share, see vm-run):
#   .vm-run/job      sourced here: VM_OUTDIR VM_MODULE VM_MODNAME VM_MODDEPS
#                    VM_MODPARAMS VM_KMEMLEAK_WAIT VM_INTERACTIVE VM_TIMEOUT
#                    VM_KMODS (1: mount the "kmods" share on /lib/modules)
#   .vm-run/cmd      run with /bin/sh inside the chroot (env, cd, exec CMD)
#   .vm-run/status   written here, key=value lines: boot insmod cmd
#                    cmd_timeout rmmod done, and uptimes t_boot t_cmd
#   dmesg.txt        the guest's full kernel log
# Anything missing from status tells the host how far the guest got.

PATH=/bin
export PATH

say() { echo "vm-init: $*"; }

# No status file yet, or a broken one: the host reports "did not boot" and
# the console (shown live) carries the reason.
die() {
	say "FATAL: $*"
	poweroff -f
	sleep 5
}

mount -t proc proc /proc || die "mount /proc"
mount -t sysfs sysfs /sys || die "mount /sys"
mount -t devtmpfs devtmpfs /dev || die "mount /dev"

# The 9p/virtio chain, resolved and ordered on the host at build time.
while read -r ko; do
	insmod "/mods/$ko" || die "insmod $ko"
done </mods/order

# virtio-pci probes asynchronously enough that the 9p channel can lag the
# insmod by a moment; retry briefly rather than fail the boot.
mount9p() {
	tries=0
	while ! mount -t 9p -o "trans=virtio,version=9p2000.L,msize=262144,$3" \
	    "$1" "$2" 2>/dev/null; do
		tries=$((tries + 1))
		[ "$tries" -ge 50 ] && die "mount 9p $1"
		usleep 100000
	done
}

R=/newroot
mkdir -p "$R" /share
mount9p vmout /share "cache=none"
[ -r /share/.vm-run/job ] || die "no job file in the vmout share"
# shellcheck disable=SC1091
. /share/.vm-run/job
ST=/share/.vm-run/status
status() { echo "$1=$2" >>"$ST"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# The host root is read-only and does not change under us (lib/modules
# does: it is mounted apart, below), so cache it aggressively: python
# imports and dynamic linking over 9p are the slow part.
mount9p hostroot "$R" "ro,cache=loose"

# Inside the chroot the host's /proc, /sys, /dev, /tmp, /run would be the
# host's own (9p follows host mounts): cover each with the guest's.  A tree
# the command runs from under /tmp or /run (a clone in /tmp, say) would
# vanish under the guest's tmpfs: its top directory is set aside first and
# put back on top.
keep=""
case ${VM_CWD:-} in
/tmp/?* | /run/?*)
	keep=$(echo "$VM_CWD" | cut -d/ -f1-3)
	if ! mkdir -p /keep || ! mount -o bind "$R$keep" /keep; then
		die "cannot set aside $keep"
	fi
	;;
esac
# The kernel's modules, for modprobe: uncached, as the host changes them
# (vm-run says why).
if [ "${VM_KMODS:-0}" = 1 ]; then
	mount9p kmods "$R/lib/modules" "ro,cache=none"
fi
mount -t proc proc "$R/proc" || die "mount chroot /proc"
mount -t sysfs sysfs "$R/sys" || die "mount chroot /sys"
mount -t devtmpfs devtmpfs "$R/dev" || die "mount chroot /dev"
mkdir -p "$R/dev/pts" "$R/dev/shm"
# udev would create these; bash's <(...) and many tools need /dev/fd.
ln -sf /proc/self/fd "$R/dev/fd"
ln -sf /proc/self/fd/0 "$R/dev/stdin"
ln -sf /proc/self/fd/1 "$R/dev/stdout"
ln -sf /proc/self/fd/2 "$R/dev/stderr"
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts "$R/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp" || die "mount chroot /tmp"
mount -t tmpfs -o mode=755 tmpfs "$R/run" || die "mount chroot /run"
if [ -n "$keep" ]; then
	if ! mkdir -p "$R$keep" || ! mount -o move /keep "$R$keep"; then
		die "cannot put $keep back"
	fi
fi
mount -t debugfs debugfs "$R/sys/kernel/debug" || die "mount debugfs"
# Results land at the same path as on the host.  The directory exists on the
# host, so it exists in the read-only view too, unless it lives under a
# tmpfs just mounted (/tmp, /run): then create it there.
if ! mkdir -p "$R$VM_OUTDIR" || ! mount -o bind /share "$R$VM_OUTDIR"; then
	die "cannot bind the results share on $VM_OUTDIR"
fi
status boot ok
status t_boot "$(uptime_s)"

in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

KMEMLEAK=$R/sys/kernel/debug/kmemleak
if [ -w "$KMEMLEAK" ]; then
	# Boot-time leak reports are not the module's: report and forget them.
	echo scan >"$KMEMLEAK"
	echo clear >"$KMEMLEAK"
fi

# Everything the host scans for kernel reports comes after this line.
echo "vm-run: ---- test start (module ${VM_MODNAME:-none}) ----" >/dev/kmsg

rc_insmod=0
if [ -n "$VM_MODULE" ]; then
	# Dependencies come from the kernel's own tree (/lib/modules in the
	# chroot); the module under test is loaded by path.
	if [ -n "$VM_MODDEPS" ]; then
		# shellcheck disable=SC2086
		in_root modprobe -a $VM_MODDEPS || rc_insmod=$?
	fi
	if [ "$rc_insmod" = 0 ]; then
		# shellcheck disable=SC2086
		in_root insmod "$VM_MODULE" $VM_MODPARAMS || rc_insmod=$?
	fi
	status insmod "$rc_insmod"
fi

if [ "$rc_insmod" = 0 ]; then
	# Our own deadline, ahead of the host's hard one, so that a hung
	# command still leaves a full dmesg (hung-task reports, stalls) and an
	# rmmod attempt behind.  The margin covers rmmod, kmemleak, dmesg.
	watchdog=""
	if [ "${VM_TIMEOUT:-0}" -gt 0 ]; then
		limit=$((VM_TIMEOUT - ${VM_TIMEOUT_MARGIN:-40} - $(cut -d. -f1 /proc/uptime)))
		[ "$limit" -lt 10 ] && limit=10
		(
			sleep "$limit" || exit
			say "command timed out after ${limit}s: killing every process"
			status cmd_timeout "$limit"
			kill -TERM -1
			sleep 2
			kill -KILL -1
		) &
		watchdog=$!
	fi
	if [ "$VM_INTERACTIVE" = 1 ]; then
		# A real tty (not /dev/console) so the shell gets job control.
		tty=/dev/$(sed -n 's/.*console=\([a-zA-Z0-9]*\).*/\1/p' /proc/cmdline)
		# shellcheck disable=SC2094 # a tty, not a file
		chroot "$R" /usr/bin/setsid -c /bin/sh "$VM_OUTDIR/.vm-run/cmd" \
			<"$tty" >"$tty" 2>&1 &
	else
		chroot "$R" /bin/sh "$VM_OUTDIR/.vm-run/cmd" </dev/null &
	fi
	wait $!
	status cmd $?
	# The watchdog's sleep lingers harmlessly; the subshell must not fire.
	[ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
	status t_cmd "$(uptime_s)"
fi

save_dmesg() { in_root dmesg >/share/dmesg.txt 2>&1 || dmesg >/share/dmesg.txt; }

# bounded SECS CMD...: CMD's status, or 124 if it is still running after
# SECS (it may be stuck in the kernel, unkillable: leave it behind).
bounded() {
	secs=$1 ticks=0
	shift
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		ticks=$((ticks + 1))
		[ "$ticks" -gt $((secs * 10)) ] && return 124
		usleep 100000
	done
	wait "$pid"
}

# If what follows hangs in the kernel, the host still gets the log so far.
save_dmesg

if [ -n "$VM_MODULE" ] && [ "$rc_insmod" = 0 ]; then
	# Children of the command that are still exiting can hold a reference
	# for a moment; a reference held after that is a real failure.
	rc_rmmod=1
	for try in 1 2 3 4; do
		bounded 30 in_root rmmod "$VM_MODNAME" >/share/.vm-run/rmmod.err 2>&1
		rc=$?
		if [ "$rc" = 0 ]; then
			rc_rmmod=0
			break
		fi
		[ "$rc" = 124 ] && { say "rmmod $VM_MODNAME hangs"; break; }
		[ "$try" = 4 ] || sleep 1
	done
	if [ "$rc_rmmod" != 0 ]; then
		say "rmmod failed: $(cat /share/.vm-run/rmmod.err)"
		say "/proc/modules: $(grep "^$VM_MODNAME " /proc/modules)"
		say "processes still running:"
		# shellcheck disable=SC2009 # busybox has no pgrep -a
		ps -o pid,ppid,stat,args | grep -v -e ' \[' -e 'ps -o'
	fi
	status rmmod "$rc_rmmod"
fi

if [ -w "$KMEMLEAK" ]; then
	# kmemleak ignores objects younger than ~5 s; wait, then scan twice
	# as its documentation recommends.  Reports go to dmesg.
	sleep "${VM_KMEMLEAK_WAIT:-5}"
	echo scan >"$KMEMLEAK"
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >/share/kmemleak.txt
fi

save_dmesg
status "done" 1
sync
poweroff -f
sleep 5
