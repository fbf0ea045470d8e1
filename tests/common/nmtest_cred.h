/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_cred: helpers for tests that use /dev/npu-mem as users other than
 * root (tests/kernel/{memlock_user,exhaustion,visibility}.c): letting every
 * user open the node, becoming another user with a chosen RLIMIT_MEMLOCK,
 * passing descriptors between processes, and reading the kernel's memory
 * figures.  Same conventions as nmtest_util.h: functions return 0 or
 * -errno and never assert, unless their name ends in _ok.
 */
#ifndef NMTEST_CRED_H
#define NMTEST_CRED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "nmtest_util.h"

#define NM_UID_NOBODY	65534
/* A second unprivileged user: it need not exist in /etc/passwd. */
#define NM_UID_OTHER	65533
/* RLIMIT_MEMLOCK value meaning "no limit" for nm_become() */
#define NM_MEMLOCK_INF	((uint64_t)RLIM_INFINITY)

/*
 * The device node is root's (0600) in the test guests.  The accounting and
 * visibility rules follow the credentials that OPENED the file, so a test
 * of an unprivileged opener needs the node open to everyone for its
 * duration: nm_node_open_to_all() makes it 0666 (root only, guests only:
 * VM_RUN=1), nm_node_restore() puts the old mode back.  0, or -errno
 * (-EPERM when not root, -ENOTSUP outside a guest).
 */
int nm_node_open_to_all(void);
void nm_node_restore(void);
/* nm_run() with the node open to everyone for the run; exits 77 (skip)
 * when it cannot be opened up, saying why. */
int nm_run_open_to_all(Suite *s);

/*
 * Become uid (and gid = uid, no supplementary groups) for good, with a soft
 * RLIMIT_MEMLOCK of memlock (NM_MEMLOCK_INF: unlimited), set while still
 * root.  The hard limit is made unlimited, so that the process and its
 * children can still set their own soft limit (nm_set_memlock), which is
 * the one the kernel enforces.  Every capability is gone afterwards.
 * 0 or -errno.
 */
int nm_become(uid_t uid, uint64_t memlock);
/* Soft RLIMIT_MEMLOCK of this process (raising the hard limit to it when
 * below, which needs CAP_SYS_RESOURCE): 0 or -errno */
int nm_set_memlock(uint64_t memlock);
/* The same, asserting (for forked children that must not go on as root) */
#define nm_become_ok(uid, memlock) do {					\
	int _nm_b = nm_become((uid), (memlock));			\
	ck_assert_msg(_nm_b == 0, "become uid %u: %s", (unsigned)(uid),	\
		      nm_retname(_nm_b));				\
} while (0)

/* SCM_RIGHTS over a unix socket: 0 / the received fd, or -errno. */
int nm_send_fd(int sock, int fd);
int nm_recv_fd(int sock);

/* One byte through a pipe, to order processes: 0 or -errno (-EPIPE at EOF) */
int nm_signal(int wfd);
int nm_await(int rfd);

/* "Key: N kB" of /proc/meminfo in bytes; 0 or -errno */
int nm_meminfo(const char *key, uint64_t *bytes);
/* "key N" of /proc/vmstat; 0 or -errno */
int nm_vmstat(const char *key, uint64_t *val);

/* A wait status as text: "exit 3", "signal 9 (Killed)"; a buffer of this
 * thread's, reused every 4 calls */
const char *nm_status_str(int status);

#endif /* NMTEST_CRED_H */
