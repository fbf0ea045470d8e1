// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
