// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_cred: see nmtest_cred.h.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_cred.h"
#include "nmtest_dmabuf.h"

static mode_t nm_node_mode;
static bool nm_node_changed;

int nm_node_open_to_all(void)
{
	const char *vm = getenv("VM_RUN");
	struct stat st;

	if (!vm || strcmp(vm, "1"))
		return -ENOTSUP;
	if (geteuid() != 0)
		return -EPERM;
	if (stat(NM_DEV_PATH, &st))
		return -errno;
	if (!nm_node_changed)
		nm_node_mode = st.st_mode & 07777;
	if (chmod(NM_DEV_PATH, 0666))
		return -errno;
	nm_node_changed = true;
	return 0;
}

void nm_node_restore(void)
{
	if (nm_node_changed && chmod(NM_DEV_PATH, nm_node_mode) == 0)
		nm_node_changed = false;
}

int nm_run_open_to_all(Suite *s)
{
	int ret = nm_node_open_to_all();

	if (ret) {
		printf("SKIP: needs root in a test guest, to let uid %d open "
		       NM_DEV_PATH ": %s\n", NM_UID_NOBODY, nm_retname(ret));
		return 77;
	}
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_node_restore();
	return ret;
}

int nm_set_memlock(uint64_t memlock)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	rl.rlim_cur = (rlim_t)memlock;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_max = rl.rlim_cur;	/* root only */
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	return 0;
}

int nm_become(uid_t uid, uint64_t memlock)
{
	struct rlimit rl = { (rlim_t)memlock, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	if (geteuid() != uid || getuid() != uid)
		return -EPERM;
	return 0;
}

/* Over nmtest_dmabuf's SCM_RIGHTS messages: the message is only a carrier. */
int nm_send_fd(int sock, int fd)
{
	return nm_send_msg(sock, 0, fd);
}

int nm_recv_fd(int sock)
{
	uint32_t msg;
	int fd, ret = nm_recv_msg(sock, &msg, &fd, 120);

	if (ret)
		return ret;
	return fd >= 0 ? fd : -EBADMSG;
}

int nm_signal(int wfd)
{
	char b = 'S';
	ssize_t n;

	do
		n = write(wfd, &b, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -errno;
}

int nm_await(int rfd)
{
	char b;
	ssize_t n;

	do
		n = read(rfd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	return n == 0 ? -EPIPE : -errno;
}

int nm_meminfo(const char *key, uint64_t *bytes)
{
	uint64_t kb;
	int ret = nm_kv_file("/proc/meminfo", key, &kb);

	if (ret == 0)
		*bytes = kb * 1024;
	return ret;
}

int nm_vmstat(const char *key, uint64_t *val)
{
	return nm_key_file("/proc/vmstat", key, ' ', val);
}

const char *nm_status_str(int status)
{
	static __thread char buf[4][48];
	static __thread unsigned int idx;
	char *b = buf[idx++ % 4];

	if (status == -1)
		snprintf(b, sizeof(buf[0]), "timed out (killed)");
	else if (WIFEXITED(status))
		snprintf(b, sizeof(buf[0]), "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(b, sizeof(buf[0]), "signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(b, sizeof(buf[0]), "status %#x", status);
	return b;
}
