// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "nmtest_trace.h"

static char tracefs[64];

const char *nm_tracefs_dir(void)
{
	return tracefs;
}

int nm_tracefs_find(void)
{
	static const char *const cand[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	struct statfs sfs;

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		if (statfs(cand[i], &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC) {
			snprintf(tracefs, sizeof(tracefs), "%s", cand[i]);
			return 0;
		}
	}
	/* The guest mounts debugfs only; tracefs has its own mount point. */
	if (mount("tracefs", cand[0], "tracefs", 0, NULL) == 0) {
		snprintf(tracefs, sizeof(tracefs), "%s", cand[0]);
		return 0;
	}
	return -errno;
}

#define MAX_CPUS	256

static bool offline[MAX_CPUS];

static int cpu_online_write(int cpu, const char *v)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, v, 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

void nm_cpus_solo(void)
{
	const char *vm = getenv("VM_RUN");
	char path[64], state;
	int fd;

	if (!vm || strcmp(vm, "1"))
		return;
	for (int cpu = 1; cpu < MAX_CPUS; cpu++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", cpu);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (read(fd, &state, 1) == 1 && state == '1' &&
		    !cpu_online_write(cpu, "0"))
			offline[cpu] = true;
		close(fd);
	}
}

void nm_cpus_restore(void)
{
	for (int cpu = 1; cpu < MAX_CPUS; cpu++) {
		if (offline[cpu] && !cpu_online_write(cpu, "1"))
			offline[cpu] = false;
	}
}

int nm_tracefs_write(const char *rel, const char *text, int flags)
{
	char path[256];
	size_t len = strlen(text);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tracefs, rel);
	fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	n = len ? write(fd, text, len) : 0;
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}
