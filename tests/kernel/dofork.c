// SPDX-License-Identifier: GPL-2.0-only
/*
 * dofork: CPU mappings and fork(), as the UAPI header documents them.
 *
 * Mappings are VM_DONTCOPY, so a child does not inherit them; the driver
 * does not refuse madvise(MADV_DOFORK) (refusing it would take VM_IO, which
 * breaks O_DIRECT), so a process can ask for its mappings to be inherited;
 * Linux 7.x refuses it itself on every VM_DONTEXPAND mapping, and the
 * tests that need it skip there.
 * The child then shares the very pages, and its copy of the mapping keeps
 * the buffer alive like any other mapping.  Checked, for every policy:
 *  - without MADV_DOFORK the child faults (SIGSEGV) at the address;
 *  - with it, the child reads what the parent wrote and the parent reads
 *    what the child wrote (the same pages, not copies);
 *  - the parent FREEs, unmaps and closes while the child still maps it: the
 *    child's mapping works on, the memory stays counted, and the global
 *    counters return to the start when the child exits;
 *  - MADV_DOFORK on part of a mapping: the child inherits that part only;
 *  - the allocating process exits first, its child still mapping the
 *    buffer: the memory stays usable and is freed at the child's exit.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_cred.h"
#include "nmtest_util.h"

static const struct {
	uint64_t size;
	uint32_t policy;
} shapes[] = {
	{ 3 * NM_MiB + 5 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY },
	{ 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
	{ 4 * NM_MiB + 3 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST },
};

/* Child exit codes: which step failed (the parent names it). */
enum {
	C_OK, C_PROBE, C_SEE_PARENT, C_SIGNAL, C_AWAIT, C_SEE_PARENT2,
	C_NOT_FAULT, C_SEE_PART, C_CLOSE,
};

static const char *const child_step[] = {
	"ok", "touching the inherited mapping faulted",
	"the child does not see what the parent wrote",
	"signal the parent", "wait for the parent",
	"the child does not see the parent's last writes",
	"a part without MADV_DOFORK was inherited",
	"the inherited part does not hold the parent's data",
	"close",
};

static void wait_child(pid_t pid, const char *what)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child %s%s%s",
		      what, nm_status_str(st),
		      WIFEXITED(st) && WEXITSTATUS(st) <
		      (int)NM_ARRAY_SIZE(child_step) ? ": " : "",
		      WIFEXITED(st) && WEXITSTATUS(st) <
		      (int)NM_ARRAY_SIZE(child_step) ?
		      child_step[WEXITSTATUS(st)] : "");
}

START_TEST(not_inherited_without_madv_dofork)
{
	uint64_t size = shapes[_i].size;
	uint32_t policy = shapes[_i].policy;
	struct nm_counters start;
	struct npu_mem_alloc a;
	int fd = nm_open(), obs = nm_open(), st;
	uint8_t *p;
	pid_t pid;

	nm_counters(obs, &start);
	nm_alloc_ok(fd, size, policy, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 1);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int r = nm_probe(p, false), w = nm_probe(p + a.buf.size - 1,
							  true);

		_exit(r == SIGSEGV && w == SIGSEGV ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child "
		      "could touch a mapping it should not have inherited "
		      "(%s)", nm_policy_name(policy), nm_status_str(st));
	munmap(p, a.buf.size);
	close(fd);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

START_TEST(inherited_with_madv_dofork)
{
	uint64_t size = shapes[_i].size;
	uint32_t policy = shapes[_i].policy;
	struct nm_counters start, c, live;
	struct npu_mem_alloc a;
	int fd = nm_open(), obs = nm_open();
	int to_child[2], to_parent[2];
	uint64_t half;
	uint8_t *p;
	pid_t pid;

	if (nm_dofork_refused())
		nm_skip(NM_DOFORK_REFUSED);

	nm_counters(obs, &start);
	nm_alloc_ok(fd, size, policy, 0, &a);
	half = a.buf.size / 2 & ~(NM_4K - 1);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 1);
	nm_assert_sys(madvise(p, a.buf.size, MADV_DOFORK));
	ck_assert_int_eq(pipe(to_child), 0);
	ck_assert_int_eq(pipe(to_parent), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		/* only the mapping is to keep the buffer: not the fd */
		if (close(fd) || close(obs))
			_exit(C_CLOSE);
		if (nm_probe(p, false) || nm_probe(p + a.buf.size - 1, false))
			_exit(C_PROBE);
		if (nm_verify(p, a.buf.size, 1) != SIZE_MAX)
			_exit(C_SEE_PARENT);
		/* the child writes the first half */
		nm_fill_at(p, half, 2, 0);
		if (nm_signal(to_parent[1]))
			_exit(C_SIGNAL);
		/* the parent writes the second half, FREEs, unmaps, closes */
		if (nm_await(to_child[0]))
			_exit(C_AWAIT);
		if (nm_verify_at(p + half, a.buf.size - half, 3, half) !=
		    SIZE_MAX || nm_verify_at(p, half, 2, 0) != SIZE_MAX)
			_exit(C_SEE_PARENT2);
		/* still usable memory */
		nm_fill(p, a.buf.size, 4);
		if (nm_verify(p, a.buf.size, 4) != SIZE_MAX)
			_exit(C_SEE_PARENT2);
		_exit(C_OK);
	}
	close(to_child[0]);
	close(to_parent[1]);
	ck_assert_int_eq(nm_await(to_parent[0]), 0);
	/* what the child wrote is in our mapping: the same pages */
	ck_assert_msg(nm_verify_at(p, half, 2, 0) == SIZE_MAX,
		      "%s: the parent does not see the child's writes at %zu",
		      nm_policy_name(policy), nm_verify_at(p, half, 2, 0));
	nm_fill_at(p + half, a.buf.size - half, 3, half);
	nm_free_ok(fd, a.handle);
	munmap(p, a.buf.size);
	close(fd);
	/* the child's mapping holds the buffer */
	live = start;
	nm_counters_add(&live, &a.buf, +1, false);
	nm_counters(obs, &c);
	nm_assert_global_eq(&live, &c);
	ck_assert_int_eq(nm_signal(to_child[1]), 0);
	wait_child(pid, nm_policy_name(policy));
	close(to_child[1]);
	close(to_parent[0]);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

START_TEST(dofork_on_part_of_a_mapping)
{
	uint64_t size = shapes[_i].size;
	uint32_t policy = shapes[_i].policy;
	struct nm_counters start;
	struct npu_mem_alloc a;
	int fd = nm_open(), obs = nm_open();
	uint64_t off, len;
	uint8_t *p;
	pid_t pid;

	if (nm_dofork_refused())
		nm_skip(NM_DOFORK_REFUSED);

	nm_counters(obs, &start);
	nm_alloc_ok(fd, size, policy, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 9);
	/* the middle: the VMA is split in three */
	off = NM_2M - 2 * NM_4K;
	len = NM_MiB + 3 * NM_4K;
	nm_assert_sys(madvise(p + off, len, MADV_DOFORK));
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fd);
		close(obs);
		if (nm_probe(p + off - 1, false) != SIGSEGV ||
		    nm_probe(p + off + len, false) != SIGSEGV)
			_exit(C_NOT_FAULT);
		if (nm_probe(p + off, false) || nm_probe(p + off + len - 1, true))
			_exit(C_PROBE);
		if (nm_verify_at(p + off, len, 9, off) != SIZE_MAX)
			_exit(C_SEE_PART);
		nm_fill_at(p + off, len, 10, off);
		_exit(C_OK);
	}
	wait_child(pid, nm_policy_name(policy));
	ck_assert_msg(nm_verify_at(p + off, len, 10, off) == SIZE_MAX,
		      "%s: the child's writes are not in the parent's pages",
		      nm_policy_name(policy));
	ck_assert_msg(nm_verify_at(p, off, 9, 0) == SIZE_MAX &&
		      nm_verify_at(p + off + len, a.buf.size - off - len, 9,
				   off + len) == SIZE_MAX,
		      "%s: memory outside the inherited part changed",
		      nm_policy_name(policy));
	nm_free_ok(fd, a.handle);
	munmap(p, a.buf.size);
	close(fd);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

/*
 * The allocating process exits first: its child, reparented to the test
 * (a subreaper), keeps the buffer alive through its inherited mapping.
 */
START_TEST(allocator_exits_first)
{
	uint64_t size = shapes[_i].size;
	uint32_t policy = shapes[_i].policy;
	struct nm_counters start, c;
	int obs = nm_open(), go[2], st;
	pid_t mid, *grandchild;
	uint64_t *bytes;

	if (nm_dofork_refused())
		nm_skip(NM_DOFORK_REFUSED);

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	nm_counters(obs, &start);
	grandchild = mmap(NULL, NM_4K, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(grandchild != MAP_FAILED);
	bytes = (uint64_t *)(grandchild + 1);
	ck_assert_int_eq(pipe(go), 0);
	fflush(stdout);
	mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		struct npu_mem_alloc a;
		uint8_t *p;
		int fd = nm_open();
		pid_t g;

		close(obs);
		close(go[1]);
		nm_alloc_ok(fd, size, policy, 0, &a);
		p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		nm_fill(p, a.buf.size, 21);
		nm_assert_sys(madvise(p, a.buf.size, MADV_DOFORK));
		*bytes = a.buf.size;
		g = fork();
		ck_assert_int_ge(g, 0);
		if (g == 0) {
			close(fd);
			/* until the test says its parent is gone */
			if (nm_await(go[0]))
				_exit(C_AWAIT);
			if (nm_verify(p, a.buf.size, 21) != SIZE_MAX)
				_exit(C_SEE_PARENT);
			nm_fill(p, a.buf.size, 22);
			if (nm_verify(p, a.buf.size, 22) != SIZE_MAX)
				_exit(C_SEE_PARENT2);
			_exit(C_OK);
		}
		*grandchild = g;
		/* exit with the buffer allocated, mapped and the file open */
		_exit(0);
	}
	close(go[0]);
	nm_wait_ok(mid, "allocating process");
	nm_counters(obs, &c);
	ck_assert_msg(c.allocated_bytes == start.allocated_bytes + *bytes,
		      "%s: allocated_bytes %llu after the allocator exited, "
		      "want %llu (its child still maps the buffer)",
		      nm_policy_name(policy),
		      (unsigned long long)c.allocated_bytes,
		      (unsigned long long)(start.allocated_bytes + *bytes));
	ck_assert_int_eq(nm_signal(go[1]), 0);
	close(go[1]);
	ck_assert_int_eq(waitpid(*grandchild, &st, 0), *grandchild);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child "
		      "of the exited allocator: %s", nm_policy_name(policy),
		      nm_status_str(st));
	nm_assert_global_now(obs, &start);
	munmap(grandchild, NM_4K);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("dofork");
	const TTest *tests[] = {
		not_inherited_without_madv_dofork, inherited_with_madv_dofork,
		dofork_on_part_of_a_mapping, allocator_exits_first,
	};

	for (size_t i = 0; i < NM_ARRAY_SIZE(tests); i++) {
		nm_add_loop(s, tests[i], NM_ARRAY_SIZE(shapes), 60, NULL);
	}
	return nm_run(s, NM_NEEDS_DEVICE);
}
