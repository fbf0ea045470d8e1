// SPDX-License-Identifier: GPL-2.0-only
/*
 * leak_memcg: no page a buffer ever held stays behind, seen from outside
 * the driver.
 *
 * The driver's own counters move only on success and on release, so they
 * cannot see pages lost on an error path.  Buffer pages are charged to the
 * allocating process's memory cgroup (__GFP_ACCOUNT), and a page that is
 * never freed stays charged: the test runs in a cgroup of its own and
 * reads memory.current.  The cgroup's memory.max makes allocations fail
 * part-way, deterministically, with chunks already taken: exactly the
 * path where a missing release leaks.
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "nmtest_util.h"

#define CG_MNT		"/sys/fs/cgroup"
/* Per-CPU charge caches and slab pages the test's own calls touch. */
#define SLACK		(1 * NM_MiB)
#define ROUNDS		8

static char cg_dir[PATH_MAX];
static const char *cg_unusable;

static int cg_write(const char *dir, const char *file, const char *fmt, ...)
{
	char path[PATH_MAX + 64], text[64];
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return nm_write_file(path, text);
}

static uint64_t cg_read(const char *file)
{
	char path[PATH_MAX + 64], *text;
	uint64_t v;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, file);
	text = nm_read_file(path);
	ck_assert_msg(text, "%s: %s", path, nm_errname(errno));
	v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

/* A "key value" line of memory.events */
static uint64_t cg_event(const char *key)
{
	char path[PATH_MAX + 64], *text, *line;
	size_t klen = strlen(key);
	uint64_t v = 0;

	snprintf(path, sizeof(path), "%s/memory.events", cg_dir);
	text = nm_read_file(path);
	ck_assert_msg(text, "%s: %s", path, nm_errname(errno));
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = strtoull(line + klen + 1, NULL, 10);
	free(text);
	return v;
}

/*
 * cgroup2 with the memory controller, in this process's own mount
 * namespace when nothing is mounted: the guests' init mounts no cgroups.
 */
static const char *cg_setup(void)
{
	struct statfs sfs;

	if (statfs(CG_MNT, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("cgroup2", CG_MNT, "cgroup2", 0, NULL))
			return "cannot mount cgroup2 on " CG_MNT;
	}
	cg_write(CG_MNT, "cgroup.subtree_control", "+memory");
	snprintf(cg_dir, sizeof(cg_dir), CG_MNT "/npu-mem-leak-%d", getpid());
	if (mkdir(cg_dir, 0755) && errno != EEXIST)
		return "cannot create a cgroup";
	if (access(cg_dir, F_OK) ||
	    cg_write(cg_dir, "memory.max", "max"))
		return "no memory controller in the cgroup";
	return NULL;
}

/* The calling (test) process into the cgroup, unlimited. */
static void cg_enter(void)
{
	nm_assert_ok(cg_write(cg_dir, "memory.max", "max"));
	nm_assert_ok(cg_write(cg_dir, "cgroup.procs", "%d", getpid()));
}

/*
 * ROUNDS allocations of @size that the cgroup's limit stops part-way, then
 * everything closed: the cgroup's charge must be back at the baseline.
 */
static void fail_part_way(uint64_t size, uint32_t policy)
{
	struct npu_mem_alloc a;
	uint64_t base, after, ooms;
	int fd, r;

	if (cg_unusable) {
		nm_skip("%s", cg_unusable);
	}
	cg_enter();
	fd = nm_open();
	/* Warm the slabs and page tables the calls below use. */
	nm_alloc_ok(fd, 2 * NM_MiB, policy, 0, &a);
	nm_free_ok(fd, a.handle);
	base = cg_read("memory.current");
	ooms = cg_event("oom_kill");
	/* Room for one 2 MiB chunk and a bit: the second chunk fails. */
	nm_assert_ok(cg_write(cg_dir, "memory.max", "%llu",
			      (unsigned long long)(base + 3 * NM_MiB)));
	for (int i = 0; i < ROUNDS; i++) {
		r = nm_alloc(fd, size, policy, 0, &a);
		ck_assert_msg(r == -ENOMEM, "%s %llu MiB in a cgroup with 3 MiB "
			      "of room, round %d: %s", nm_policy_name(policy),
			      (unsigned long long)(size / NM_MiB), i,
			      nm_retname(r));
	}
	nm_assert_ok(cg_write(cg_dir, "memory.max", "max"));
	/* And a successful allocation, freed, gives everything back too. */
	nm_alloc_ok(fd, size, policy, 0, &a);
	nm_free_ok(fd, a.handle);
	close(fd);
	after = cg_read("memory.current");
	printf("%s %llu MiB: cgroup charge %llu KiB before, %llu KiB after "
	       "%d failed allocations\n", nm_policy_name(policy),
	       (unsigned long long)(size / NM_MiB),
	       (unsigned long long)(base / NM_KiB),
	       (unsigned long long)(after / NM_KiB), ROUNDS);
	ck_assert_msg(after <= base + SLACK, "%llu KiB still charged after "
		      "everything was freed: pages leaked",
		      (unsigned long long)((after - base) / NM_KiB));
	ck_assert_msg(cg_event("oom_kill") == ooms,
		      "the cgroup's limit invoked the OOM killer");
}

START_TEST(huge_only_fails_part_way)
{
	fail_part_way(8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(huge_first_fails_part_way)
{
	fail_part_way(8 * NM_MiB + 12 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(normal_only_fails_part_way)
{
	fail_part_way(8 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("leak_memcg");
	int ret;

	nm_require_device();
	if (geteuid() != 0) {
		printf("SKIP: creating cgroups needs root in a test guest\n");
		return 77;
	}
	cg_unusable = cg_setup();
	nm_add(s, huge_only_fails_part_way, 120);
	nm_add(s, huge_first_fails_part_way, 120);
	nm_add(s, normal_only_fails_part_way, 120);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	if (!cg_unusable)
		rmdir(cg_dir);
	return ret;
}
