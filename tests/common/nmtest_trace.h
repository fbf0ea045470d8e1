/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_trace: tracefs for tests that watch what the kernel does from the
 * outside (kprobes on the module's or the kernel's functions, trace
 * events).  Root only; tracefs is mounted at /sys/kernel/tracing when the
 * guest has not mounted it.
 */
#ifndef NMTEST_TRACE_H
#define NMTEST_TRACE_H

/* Find or mount tracefs: 0 or -errno */
int nm_tracefs_find(void);
/* Its mount point, "" before nm_tracefs_find() succeeded */
const char *nm_tracefs_dir(void);
/* Write @text to tracefs's @rel (open flags: 0, O_APPEND): 0 or -errno */
int nm_tracefs_write(const char *rel, const char *text, int flags);

/*
 * Arming or removing a kprobe patches kernel text through int3
 * breakpoints.  QEMU's TCG does not make one vCPU see another's code
 * change at once, so a vCPU may still run the breakpoint after the patch
 * is complete, and the guest oopses ("Oops: int3" in __schedule, seen in
 * the test guests).  In a test guest (VM_RUN=1) nm_cpus_solo() takes every
 * CPU but the boot CPU offline around such work, and nm_cpus_restore()
 * brings them back; elsewhere both do nothing.
 */
void nm_cpus_solo(void);
void nm_cpus_restore(void);

#endif /* NMTEST_TRACE_H */
