// SPDX-License-Identifier: GPL-2.0-only
/*
 * accounting: pinned memory is charged, limited and given back.
 *  - VmPin (mm->pinned_vm) of the allocating process grows by exactly the
 *    buffer's size while it is allocated and returns after FREE, close, or
 *    FREE-while-mapped + munmap; GET_INFO counters return exactly (VmPin
 *    is informational: the limit is enforced per user, see memlock_user.c);
 *  - RLIMIT_MEMLOCK follows the privileges of the file's OPENER: a file
 *    opened with CAP_IPC_LOCK is not limited (but VmPin still counts), also
 *    after the process drops the capability or becomes uid 65534; a file
 *    opened without it (capability dropped first, still uid 0) gets ENOMEM
 *    past the limit, leaving counters and VmPin unchanged, and up to the
 *    limit works;
 *  - the module parameter max_bytes (global cap) is readable and writable at
 *    run time by root: GET_INFO limit_bytes follows it (3/4 of RAM when 0),
 *    allocations past it give ENOMEM (or E2BIG when one request exceeds
 *    max_alloc), nothing is leaked; the original value is restored;
 *  - the module parameter reserve_bytes (memory ALLOC leaves available to
 *    the rest of the system) is writable at run time: a reserve above all
 *    of RAM refuses every ALLOC with ENOMEM, leaking nothing, and putting
 *    it back lets them through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "nmtest_util.h"

static void vmpin_one(uint64_t req, uint32_t policy, int how)
{
	struct nm_counters start;
	struct npu_mem_alloc a;
	uint64_t pin0, pin1;
	int fd = nm_open();
	uint8_t *p = NULL;

	nm_counters(fd, &start);
	pin0 = nm_vmpin_bytes();
	nm_alloc_ok(fd, req, policy, 0, &a);
	pin1 = nm_vmpin_bytes();
	ck_assert_msg(pin1 == pin0 + a.buf.size, "%s %llu bytes: VmPin %llu "
		      "-> %llu, want +%llu", nm_policy_name(policy),
		      (unsigned long long)req, (unsigned long long)pin0,
		      (unsigned long long)pin1,
		      (unsigned long long)a.buf.size);
	switch (how) {
	case 0:				/* FREE */
		nm_free_ok(fd, a.handle);
		break;
	case 1:				/* close */
		close(fd);
		fd = nm_open();
		break;
	case 2:				/* FREE while mapped, then munmap */
		p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		nm_free_ok(fd, a.handle);
		p[0] = 1;
		munmap(p, a.buf.size);
		break;
	}
	ck_assert_msg(nm_vmpin_bytes() == pin0, "VmPin %llu after release, "
		      "was %llu", (unsigned long long)nm_vmpin_bytes(),
		      (unsigned long long)pin0);
	nm_assert_counters_now(fd, &start);
	close(fd);
}

START_TEST(vmpin_after_free)
{
	vmpin_one(5 * NM_MiB + 1, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	vmpin_one(5 * NM_MiB + 1, NPU_MEM_POLICY_HUGE_ONLY, 0);
	vmpin_one(5 * NM_MiB + 1, NPU_MEM_POLICY_HUGE_FIRST, 0);
}
END_TEST

START_TEST(vmpin_after_close)
{
	vmpin_one(3 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 1);
	vmpin_one(3 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 1);
	vmpin_one(3 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 1);
}
END_TEST

START_TEST(vmpin_after_free_while_mapped)
{
	vmpin_one(3 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 2);
	vmpin_one(3 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 2);
	vmpin_one(3 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 2);
}
END_TEST

START_TEST(vmpin_many_buffers)
{
	enum { N = 64 };
	struct npu_mem_alloc a[N];
	uint64_t pin0 = nm_vmpin_bytes(), total = 0;
	int fd = nm_open();

	for (int i = 0; i < N; i++) {
		nm_alloc_ok(fd, (i % 9 + 1) * NM_4K * 37, i % 3, 0, &a[i]);
		total += a[i].buf.size;
		ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + total);
	}
	for (int i = 0; i < N; i += 2) {
		nm_free_ok(fd, a[i].handle);
		total -= a[i].buf.size;
		ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + total);
	}
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
}
END_TEST

/* ---------------------------------------------------------------- */

static void set_memlock(uint64_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	ck_assert_msg(setrlimit(RLIMIT_MEMLOCK, &rl) == 0,
		      "setrlimit(RLIMIT_MEMLOCK, %llu): %s",
		      (unsigned long long)bytes, nm_errname(errno));
}

/*
 * In a child: RLIMIT_MEMLOCK = VmPin + 1 MiB, then check enforcement.
 * mode 0: drop CAP_IPC_LOCK, then open: limited.  The count is uid 0's,
 * which no other process adds to in the test guest, so it starts at this
 * process's VmPin (0).
 */
static void memlock_child(int mode)
{
	struct nm_counters c0;
	struct npu_mem_alloc a, b, x;
	uint64_t pin0, limit;
	int fd;

	(void)mode;
	nm_assert_ok(nm_drop_caps(1ULL << CAP_IPC_LOCK));
	pin0 = nm_vmpin_bytes();
	limit = pin0 + NM_MiB;
	set_memlock(limit);
	fd = nm_open();
	nm_counters(fd, &c0);

	/* over the limit in one go */
	nm_assert_ret(nm_alloc(fd, 2 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
			       &x), -ENOMEM);
	nm_assert_ret(nm_alloc(fd, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0, &x),
		      -ENOMEM);
	nm_assert_ret(nm_alloc(fd, NM_MiB + 1, NPU_MEM_POLICY_HUGE_FIRST, 0,
			       &x), -ENOMEM);
	nm_assert_counters_now(fd, &c0);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);

	/* up to the limit works, one page more does not */
	nm_alloc_ok(fd, NM_MiB / 2, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_alloc_ok(fd, NM_MiB / 2, NPU_MEM_POLICY_HUGE_FIRST, 0, &b);
	ck_assert_uint_eq(nm_vmpin_bytes(), limit);
	{
		struct nm_counters c1;

		nm_counters(fd, &c1);
		nm_assert_ret(nm_alloc(fd, 1, NPU_MEM_POLICY_NORMAL_ONLY, 0,
				       &x), -ENOMEM);
		nm_assert_counters_now(fd, &c1);
	}
	ck_assert_uint_eq(nm_vmpin_bytes(), limit);
	/* freeing makes room again */
	nm_free_ok(fd, a.handle);
	nm_alloc_ok(fd, NM_MiB / 4, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, b.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	nm_assert_counters_now(fd, &c0);
	close(fd);
}

/*
 * Opened by root with CAP_IPC_LOCK, then RLIMIT_MEMLOCK = VmPin + 1 MiB and
 * mode 1: CAP_IPC_LOCK dropped; 2: setuid(65534) (no capabilities at all).
 * The opener's privilege stays with the file: 8 MiB works.
 */
static void memlock_opener_child(int mode)
{
	struct npu_mem_alloc a, b;
	uint64_t pin0;
	int fd = nm_open();

	pin0 = nm_vmpin_bytes();
	set_memlock(pin0 + NM_MiB);
	if (mode == 1)
		nm_assert_ok(nm_drop_caps(1ULL << CAP_IPC_LOCK));
	else
		ck_assert_msg(setgid(65534) == 0 && setuid(65534) == 0,
			      "setuid 65534: %s", nm_errname(errno));
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &b);
	/* VmPin shows it all the same */
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + 8 * NM_MiB);
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, b.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	close(fd);
}

static void in_child(void (*fn)(int), int mode, const char *what)
{
	struct nm_counters start;
	int obs = nm_open();
	pid_t pid;

	nm_counters(obs, &start);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(obs);
		fn(mode);
		_exit(0);
	}
	nm_wait_ok(pid, what);
	nm_assert_counters_now(obs, &start);
	close(obs);
}

START_TEST(memlock_enforced_without_cap_ipc_lock)
{
	in_child(memlock_child, 0, "CAP_IPC_LOCK dropped before open");
}
END_TEST

START_TEST(memlock_not_enforced_cap_dropped_after_open)
{
	in_child(memlock_opener_child, 1, "CAP_IPC_LOCK dropped after open");
}
END_TEST

START_TEST(memlock_not_enforced_setuid_nobody_after_open)
{
	in_child(memlock_opener_child, 2, "setuid 65534 after open");
}
END_TEST

static void memlock_with_cap(int unused)
{
	struct npu_mem_alloc a;
	uint64_t pin0 = nm_vmpin_bytes();
	int fd = nm_open();

	(void)unused;
	set_memlock(64 * NM_KiB);
	nm_alloc_ok(fd, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	/* accounted anyway */
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + a.buf.size);
	nm_free_ok(fd, a.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	close(fd);
}

START_TEST(memlock_not_enforced_with_cap_ipc_lock)
{
	in_child(memlock_with_cap, 0, "root with a small RLIMIT_MEMLOCK");
}
END_TEST

/* ---------------------------------------------------------------- */

START_TEST(max_bytes_param)
{
	struct npu_mem_info info;
	struct nm_counters c0, c1;
	struct npu_mem_alloc a, b, x;
	uint64_t orig, cap, now;
	int fd = nm_open(), r;

	r = nm_param_get("max_bytes", &orig);
	ck_assert_msg(r == 0, NM_SYSMOD "/parameters/max_bytes: %s",
		      nm_retname(r));
	nm_counters(fd, &c0);
	cap = c0.allocated_bytes + 6 * NM_MiB;
	nm_assert_ok(nm_param_set("max_bytes", cap));
	nm_assert_ok(nm_param_get("max_bytes", &now));
	ck_assert_uint_eq(now, cap);
	nm_get_info_ok(fd, &info);
	ck_assert_uint_eq(info.limit_bytes, cap);
	printf("max_bytes %llu -> %llu: limit_bytes %llu max_alloc %llu\n",
	       (unsigned long long)orig, (unsigned long long)cap,
	       (unsigned long long)info.limit_bytes,
	       (unsigned long long)info.max_alloc);

	/* one request over the cap: ENOMEM, or E2BIG if also over max_alloc */
	r = nm_alloc(fd, 8 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
	ck_assert_msg(r == (8 * NM_MiB > info.max_alloc ? -E2BIG : -ENOMEM),
		      "ALLOC 8 MiB with a 6 MiB cap (max_alloc %llu): %s",
		      (unsigned long long)info.max_alloc, nm_retname(r));
	nm_assert_counters_now(fd, &c0);

	/* the cap reached in steps: the step across it gets ENOMEM */
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	nm_counters(fd, &c1);
	nm_assert_ret(nm_alloc(fd, 4 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
			       &x), -ENOMEM);
	nm_assert_ret(nm_alloc(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0,
			       &x), -ENOMEM);
	nm_assert_ret(nm_alloc(fd, 2 * NM_MiB + 1, NPU_MEM_POLICY_HUGE_FIRST,
			       0, &x), -ENOMEM);
	nm_assert_counters_now(fd, &c1);
	/* exactly up to the cap works */
	nm_alloc_ok(fd, 2 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &b);
	nm_assert_ret(nm_alloc(fd, 1, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x),
		      -ENOMEM);
	/* another open file is under the same global cap */
	{
		int other = nm_open();

		nm_assert_ret(nm_alloc(other, 1, NPU_MEM_POLICY_NORMAL_ONLY, 0,
				       &x), -ENOMEM);
		close(other);
	}
	/* raising the cap at run time lets allocations through again */
	nm_assert_ok(nm_param_set("max_bytes", cap + NM_MiB));
	nm_alloc_ok(fd, 1, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
	nm_free_ok(fd, x.handle);
	/* lowering it below what is allocated keeps what exists */
	nm_assert_ok(nm_param_set("max_bytes", NM_MiB));
	nm_assert_ok(nm_query(fd, a.handle, NULL));
	nm_assert_ret(nm_alloc(fd, 1, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x),
		      -ENOMEM);
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, b.handle);
	nm_assert_counters_now(fd, &c0);

	nm_assert_ok(nm_param_set("max_bytes", orig));
	nm_get_info_ok(fd, &info);
	if (orig == 0)	/* the default keeps a quarter of RAM out of reach */
		ck_assert_uint_eq(info.limit_bytes, info.total_ram / 4 * 3);
	else if (orig < info.total_ram)
		ck_assert_uint_eq(info.limit_bytes, orig);
	else
		ck_assert_uint_eq(info.limit_bytes, info.total_ram);
	close(fd);
}
END_TEST

static uint64_t saved_reserve;
static bool have_saved_reserve;

static void save_reserve(void)
{
	have_saved_reserve = nm_param_get("reserve_bytes", &saved_reserve) == 0;
}

static void restore_reserve(void)
{
	if (have_saved_reserve)
		nm_param_set("reserve_bytes", saved_reserve);
}

START_TEST(reserve_bytes_param)
{
	struct npu_mem_info info;
	struct nm_counters c0;
	struct npu_mem_alloc x;
	uint64_t orig, now;
	int fd = nm_open(), r;

	r = nm_param_get("reserve_bytes", &orig);
	ck_assert_msg(r == 0, NM_SYSMOD "/parameters/reserve_bytes: %s",
		      nm_retname(r));
	nm_get_info_ok(fd, &info);
	nm_counters(fd, &c0);
	/* more than MemAvailable can ever be: every ALLOC is refused */
	nm_assert_ok(nm_param_set("reserve_bytes", info.total_ram + NM_MiB));
	nm_assert_ok(nm_param_get("reserve_bytes", &now));
	ck_assert_uint_eq(now, info.total_ram + NM_MiB);
	for (uint32_t p = 0; p < 3; p++)
		nm_assert_ret(nm_alloc(fd, p == NPU_MEM_POLICY_HUGE_ONLY ?
				       NM_2M : NM_4K, p, 0, &x), -ENOMEM);
	nm_assert_counters_now(fd, &c0);
	/* a reserve that leaves room lets them through again */
	nm_assert_ok(nm_param_set("reserve_bytes", orig));
	nm_alloc_ok(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
	nm_free_ok(fd, x.handle);
	nm_assert_counters_now(fd, &c0);
	close(fd);
}
END_TEST

/* In Check's own process: the parameter comes back even if the test dies. */
static const struct nm_fixture reserve_fx = {
	.setup = save_reserve, .teardown = restore_reserve, .unchecked = true,
};

int main(void)
{
	Suite *s = nm_suite("accounting");

	nm_add(s, vmpin_after_free, 60);
	nm_add(s, vmpin_after_close, 60);
	nm_add(s, vmpin_after_free_while_mapped, 60);
	nm_add(s, vmpin_many_buffers, 60);
	nm_add(s, memlock_enforced_without_cap_ipc_lock, 60);
	nm_add(s, memlock_not_enforced_cap_dropped_after_open, 60);
	nm_add(s, memlock_not_enforced_setuid_nobody_after_open, 60);
	nm_add(s, memlock_not_enforced_with_cap_ipc_lock, 60);
	nm_add_fx(s, max_bytes_param, 60, &nm_max_bytes_fx);
	nm_add_fx(s, reserve_bytes_param, 60, &reserve_fx);
	return nm_run(s, NM_NEEDS_DEVICE);
}
