// SPDX-License-Identifier: GPL-2.0-only
/*
 * memlock_errpath: an ALLOC that fails after its RLIMIT_MEMLOCK charge
 * gives the charge back.
 *
 * The opener's user is charged before any page is taken, so every failure
 * after that point (pages or chunk array not available, the device gone)
 * must undo the charge.  A lost undo is invisible to root (CAP_IPC_LOCK
 * openers draw on no count) and to every test whose ALLOCs fail at the
 * charge itself; it shows only as an unprivileged user that can no longer
 * allocate its own limit.  So, as uid 65534 with RLIMIT_MEMLOCK 8 MiB, in
 * a memory cgroup whose memory.max leaves room for about 3 MiB (set by the
 * root parent): ROUNDS ALLOCs of the whole 8 MiB fail part-way with
 * -ENOMEM, each passing the charge; memory.events "max" proves the cgroup
 * stopped them, not the limit.  With the cgroup unlimited again, the user
 * must still get all of its 8 MiB at once, as often as it failed before.
 * Needs root in a guest (cgroup2 with the memory controller, and the
 * node made 0666 for the run).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_cgroup.h"
#include "nmtest_cred.h"
#include "nmtest_util.h"

#define LIMIT		(8 * NM_MiB)
#define ROUNDS		4

static const char *cg_unusable;

/* The unprivileged child: its steps are ordered by the parent. */
static void child(int go_r, int done_w)
{
	struct npu_mem_alloc a;
	int fd, r;

	nm_become_ok(NM_UID_NOBODY, LIMIT);
	fd = nm_open();
	/* Warm the slabs and page tables the calls below use. */
	nm_alloc_ok(fd, 2 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_free_ok(fd, a.handle);
	nm_assert_ok(nm_signal(done_w));
	nm_assert_ok(nm_await(go_r));		/* the cgroup is limited */
	for (int i = 0; i < ROUNDS; i++) {
		r = nm_alloc(fd, LIMIT, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
		ck_assert_msg(r == -ENOMEM, "uid %d, ALLOC of its whole %llu "
			      "MiB limit in a cgroup with 3 MiB of room, round "
			      "%d: %s, want -ENOMEM", NM_UID_NOBODY,
			      (unsigned long long)(LIMIT / NM_MiB), i,
			      nm_retname(r));
	}
	nm_assert_ok(nm_signal(done_w));
	nm_assert_ok(nm_await(go_r));		/* the cgroup is unlimited */
	for (int i = 0; i < ROUNDS; i++) {
		r = nm_alloc(fd, LIMIT, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
		ck_assert_msg(r == 0, "uid %d, ALLOC of its whole %llu MiB "
			      "limit after %d ALLOCs failed part-way, round %d: "
			      "%s: failed ALLOCs left RLIMIT_MEMLOCK charged",
			      NM_UID_NOBODY, (unsigned long long)(LIMIT / NM_MiB),
			      ROUNDS, i, nm_retname(r));
		nm_free_ok(fd, a.handle);
	}
	close(fd);
	printf("uid %d: %d ALLOCs of %llu MiB failed part-way, then %d of "
	       "them succeeded\n", NM_UID_NOBODY, ROUNDS,
	       (unsigned long long)(LIMIT / NM_MiB), ROUNDS);
}

START_TEST(failed_alloc_gives_memlock_back)
{
	int go[2], done[2];
	uint64_t base, hits;
	pid_t pid;

	if (cg_unusable)
		nm_skip("%s", cg_unusable);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	nm_assert_ok(nm_cgroup_write("memory.max", "max"));
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		nm_assert_ok(nm_cgroup_write("cgroup.procs", "%d", getpid()));
		child(go[0], done[1]);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	nm_assert_ok(nm_await(done[0]));
	base = nm_cgroup_value("memory.current", NULL);
	hits = nm_cgroup_value("memory.events", "max");
	nm_assert_ok(nm_cgroup_write("memory.max", "%llu",
			      (unsigned long long)(base + 3 * NM_MiB)));
	nm_assert_ok(nm_signal(go[1]));
	/* A child that failed an assertion exits: its status says why. */
	if (nm_await(done[0]) == 0) {
		ck_assert_msg(nm_cgroup_value("memory.events", "max") > hits,
			      "the cgroup's limit was never hit: the ALLOCs "
			      "failed before taking pages, which proves nothing");
		nm_assert_ok(nm_cgroup_write("memory.max", "max"));
		nm_assert_ok(nm_signal(go[1]));
	}
	close(go[1]);
	nm_wait_ok(pid, "unprivileged allocating child");
	close(done[0]);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("memlock_errpath");
	int ret;

	nm_require_device();
	ret = nm_node_open_to_all();
	if (ret) {
		printf("SKIP: needs root in a test guest, to use cgroups and let "
		       "uid %d open " NM_DEV_PATH ": %s\n", NM_UID_NOBODY,
		       nm_retname(ret));
		return 77;
	}
	cg_unusable = nm_cgroup_setup("memlock");
	nm_add(s, failed_alloc_gives_memlock_back, 120);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_node_restore();
	nm_cgroup_remove();
	return ret;
}
