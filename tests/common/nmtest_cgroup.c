// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "nmtest_cgroup.h"
#include "nmtest_util.h"

#define CG_MNT	"/sys/fs/cgroup"

static char cg_dir[PATH_MAX];

const char *nm_cgroup_dir(void)
{
	return cg_dir;
}

int nm_cgroup_write(const char *file, const char *fmt, ...)
{
	char path[PATH_MAX + 64], text[64];
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, file);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return nm_write_file(path, text);
}

const char *nm_cgroup_setup(const char *tag)
{
	struct statfs sfs;

	if (statfs(CG_MNT, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("cgroup2", CG_MNT, "cgroup2", 0, NULL))
			return "cannot mount cgroup2 on " CG_MNT;
	}
	nm_write_file(CG_MNT "/cgroup.subtree_control", "+memory");
	snprintf(cg_dir, sizeof(cg_dir), CG_MNT "/npu-mem-%s-%d", tag,
		 getpid());
	if (mkdir(cg_dir, 0755) && errno != EEXIST)
		return "cannot create a cgroup";
	if (access(cg_dir, F_OK) || nm_cgroup_write("memory.max", "max"))
		return "no memory controller in the cgroup";
	return NULL;
}

void nm_cgroup_enter(void)
{
	nm_assert_ok(nm_cgroup_write("memory.max", "max"));
	nm_assert_ok(nm_cgroup_write("cgroup.procs", "%d", getpid()));
}

uint64_t nm_cgroup_value(const char *file, const char *key)
{
	char path[PATH_MAX + 64], *text;
	uint64_t v = 0;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, file);
	if (key) {
		nm_assert_ok(nm_key_file(path, key, ' ', &v));
		return v;
	}
	text = nm_read_file(path);
	ck_assert_msg(text, "%s: %s", path, nm_errname(errno));
	v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

void nm_cgroup_remove(void)
{
	if (cg_dir[0])
		rmdir(cg_dir);
}
