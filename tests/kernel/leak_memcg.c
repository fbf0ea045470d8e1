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
#include <stdio.h>
#include <unistd.h>

#include "nmtest_cgroup.h"
#include "nmtest_util.h"

/* Per-CPU charge caches and slab pages the test's own calls touch. */
#define SLACK		(1 * NM_MiB)
#define ROUNDS		8

static const char *cg_unusable;

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
	nm_cgroup_enter();
	fd = nm_open();
	/* Warm the slabs and page tables the calls below use. */
	nm_alloc_ok(fd, 2 * NM_MiB, policy, 0, &a);
	nm_free_ok(fd, a.handle);
	base = nm_cgroup_value("memory.current", NULL);
	ooms = nm_cgroup_value("memory.events", "oom_kill");
	/* Room for one 2 MiB chunk and a bit: the second chunk fails. */
	nm_assert_ok(nm_cgroup_write("memory.max", "%llu",
			      (unsigned long long)(base + 3 * NM_MiB)));
	for (int i = 0; i < ROUNDS; i++) {
		r = nm_alloc(fd, size, policy, 0, &a);
		ck_assert_msg(r == -ENOMEM, "%s %llu MiB in a cgroup with 3 MiB "
			      "of room, round %d: %s", nm_policy_name(policy),
			      (unsigned long long)(size / NM_MiB), i,
			      nm_retname(r));
	}
	nm_assert_ok(nm_cgroup_write("memory.max", "max"));
	/* And a successful allocation, freed, gives everything back too. */
	nm_alloc_ok(fd, size, policy, 0, &a);
	nm_free_ok(fd, a.handle);
	close(fd);
	after = nm_cgroup_value("memory.current", NULL);
	printf("%s %llu MiB: cgroup charge %llu KiB before, %llu KiB after "
	       "%d failed allocations\n", nm_policy_name(policy),
	       (unsigned long long)(size / NM_MiB),
	       (unsigned long long)(base / NM_KiB),
	       (unsigned long long)(after / NM_KiB), ROUNDS);
	ck_assert_msg(after <= base + SLACK, "%llu KiB still charged after "
		      "everything was freed: pages leaked",
		      (unsigned long long)((after - base) / NM_KiB));
	ck_assert_msg(nm_cgroup_value("memory.events", "oom_kill") == ooms,
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
	cg_unusable = nm_cgroup_setup("leak");
	nm_add(s, huge_only_fails_part_way, 120);
	nm_add(s, huge_first_fails_part_way, 120);
	nm_add(s, normal_only_fails_part_way, 120);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_cgroup_remove();
	return ret;
}
