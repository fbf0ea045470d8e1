// SPDX-License-Identifier: GPL-2.0-only
/*
 * exhaustion: with the module's default parameters, allocating until
 * failure ends in -ENOMEM, never in the OOM killer.
 *
 * Pinned buffers cannot be reclaimed or swapped, and the OOM killer only
 * sees them through the mappings of whoever maps them: a global cap of all
 * RAM let a process pin so much that the kernel killed processes instead of
 * failing the ALLOC.  The defaults (max_bytes=0: 3/4 of RAM;
 * reserve_bytes=0: ALLOC fails when MemAvailable would drop below 1/16 of
 * RAM) must keep the system working.  For each policy (HUGE_FIRST,
 * HUGE_ONLY, NORMAL_ONLY), as root and as uid 65534 with RLIMIT_MEMLOCK
 * unlimited:
 *  - one process allocates 64 MiB buffers, maps each and writes every
 *    page, until ALLOC fails: the failure is -ENOMEM, the process is alive
 *    and exits normally, and it got a good share of memory (printed);
 *  - then 8 processes do the same at once, each holding what it got until
 *    all have failed: every failure is -ENOMEM, none is killed;
 *  - GET_INFO's allocated_bytes and buffers return to where they were, and
 *    the kernel's oom_kill count (/proc/vmstat) did not move.
 * In a 2 GiB guest the cap is reached first, so the same is done again as
 * root with another process holding half of RAM in anonymous memory (there
 * is no swap): then the reserve is what stops the ALLOCs, and one process
 * alone must stop with MemAvailable between the reserve and the reserve
 * plus one buffer; the memory hog must survive too.
 * The guest's dmesg is also checked for an OOM report by the harness
 * (tests/vm/report-patterns).  Skips (77) unless max_bytes and
 * reserve_bytes are at their default 0.  Runs in a guest as root.
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

#define STEP		(64 * NM_MiB)
#define NPROC		8
#define MAXBUF		1024

static const uint32_t policies[] = {
	NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_POLICY_HUGE_ONLY,
	NPU_MEM_POLICY_NORMAL_ONLY,
};
static const uid_t users[] = { 0, NM_UID_NOBODY };
/* Loop index: users x policies, then root x policies with a memory hog */
#define NPLAIN		(NM_ARRAY_SIZE(users) * NM_ARRAY_SIZE(policies))
#define NLOOP		(NPLAIN + NM_ARRAY_SIZE(policies))
/* MemAvailable moves by a few MiB on its own (per-CPU lists, slab) */
#define SLACK		(32 * NM_MiB)

/* What one worker reports, in memory shared with the test. */
struct result {
	int done;		/* 1 once it has failed and reported */
	int err;		/* the failing ALLOC's -errno; 1 for mmap */
	int map_err;		/* mmap's errno when err == 1 */
	uint64_t bytes;		/* allocated, mapped and written */
	uint64_t buffers;
	uint64_t avail_at_fail;	/* MemAvailable right after the failure */
	uint64_t alloc_at_fail;	/* GET_INFO allocated_bytes then */
};

static void write_every_page(uint8_t *p, uint64_t len, uint8_t v)
{
	for (uint64_t o = 0; o < len; o += NM_4K)
		p[o] = v;
}

/*
 * Allocate, map and write STEP-sized buffers until ALLOC fails; report,
 * then (hold != -1) keep everything until the test closes `hold`.
 */
static void worker(uid_t uid, uint32_t policy, struct result *r, int hold)
{
	struct npu_mem_info info;
	int fd;

	if (uid)
		nm_become_ok(uid, NM_MEMLOCK_INF);
	/* after the uid change, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(4);
	fd = nm_open();
	for (;;) {
		struct npu_mem_alloc a;
		uint8_t *p;
		int ret = nm_alloc(fd, STEP, policy, 0, &a);

		if (ret) {
			r->err = ret;
			break;
		}
		p = nm_mmap(fd, a.buf.mmap_offset, a.buf.size,
			    PROT_READ | PROT_WRITE);
		if (p == MAP_FAILED) {
			r->err = 1;
			r->map_err = errno;
			break;
		}
		write_every_page(p, a.buf.size, (uint8_t)r->buffers + 1);
		r->bytes += a.buf.size;
		r->buffers++;
		if (r->buffers == MAXBUF)
			break;
	}
	nm_meminfo("MemAvailable", &r->avail_at_fail);
	if (nm_get_info(fd, &info) == 0)
		r->alloc_at_fail = info.allocated_bytes;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	if (hold >= 0)
		nm_await(hold);
	_exit(0);
}

static const char *user_name(uid_t uid)
{
	return uid ? "uid 65534" : "root";
}

static void print_result(const char *tag, int i, const struct result *r)
{
	printf("  %s %d: %llu buffers, %llu MiB, then %s; MemAvailable "
	       "%llu MiB, allocated_bytes %llu MiB\n", tag, i,
	       (unsigned long long)r->buffers,
	       (unsigned long long)(r->bytes >> 20),
	       r->err == 1 ? "mmap failed" : nm_retname(r->err),
	       (unsigned long long)(r->avail_at_fail >> 20),
	       (unsigned long long)(r->alloc_at_fail >> 20));
}

static void check_result(const char *what, int i, const struct result *r,
			 int status)
{
	ck_assert_msg(status != -1, "%s %d did not finish in time", what, i);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s %d ended by %s after %llu MiB: killed instead of "
		      "getting -ENOMEM", what, i, nm_status_str(status),
		      (unsigned long long)(r->bytes >> 20));
	ck_assert_msg(r->done, "%s %d exited without reporting", what, i);
	ck_assert_msg(r->err != 1, "%s %d: mmap of a new buffer failed (%s) "
		      "after %llu MiB", what, i, nm_errname(r->map_err),
		      (unsigned long long)(r->bytes >> 20));
	ck_assert_msg(r->err == -ENOMEM, "%s %d: ALLOC failed with %s after "
		      "%llu MiB, want -ENOMEM", what, i, nm_retname(r->err),
		      (unsigned long long)(r->bytes >> 20));
}

/* The memory one process may expect to get before -ENOMEM: the room under
 * the cap or above the reserve, whichever is smaller. */
static uint64_t expected_room(const struct npu_mem_info *info,
			      uint64_t reserve)
{
	uint64_t avail = 0, room_cap, room_ram;

	ck_assert_int_eq(nm_meminfo("MemAvailable", &avail), 0);
	room_cap = info->limit_bytes > info->allocated_bytes ?
		   info->limit_bytes - info->allocated_bytes : 0;
	room_ram = avail > reserve ? avail - reserve : 0;
	return room_cap < room_ram ? room_cap : room_ram;
}

static uint64_t reserve_default(const struct npu_mem_info *info)
{
	return info->total_ram / 16;
}

/* A process holding `bytes` of written anonymous memory until killed. */
static pid_t start_hog(uint64_t bytes)
{
	int ready[2];
	pid_t pid;

	ck_assert_int_eq(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint8_t *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		if (p == MAP_FAILED)
			_exit(3);
		write_every_page(p, bytes, 1);
		nm_signal(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	ck_assert_msg(nm_await(ready[0]) == 0, "the memory hog did not start");
	close(ready[0]);
	return pid;
}

/* Fork a worker; it dies with the test process (a failed assertion must
 * not leave memory pinned for the next test). */
static pid_t start_worker(uid_t uid, uint32_t policy, struct result *r,
			  int hold_r, int hold_w, int obs)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(obs);
		if (hold_w >= 0)
			close(hold_w);
		worker(uid, policy, r, hold_r);
	}
	return pid;
}

/*
 * Wait until what earlier tests freed is gone: the counters stop moving,
 * the same in ten readings in a row (each after a sleep in which pending
 * work gets the CPU, however slow the guest), up to two minutes.
 */
static void settle(int obs, struct nm_counters *c)
{
	struct nm_counters prev;
	double end = nm_now() + 120;
	int same = 0;

	nm_counters(obs, c);
	while (same < 10 && nm_now() < end) {
		prev = *c;
		usleep(100000);
		nm_counters(obs, c);
		same = memcmp(&prev, c, sizeof(prev)) ? 0 : same + 1;
	}
}

/*
 * Wait until the global counters are back at *want (the workers' files
 * are released when they exit, but a loaded guest can be slow to let the
 * last of them go), up to two minutes; *c is the last reading.
 */
static void settle_to(int obs, struct nm_counters *c,
		      const struct nm_counters *want)
{
	double end = nm_now() + 120;

	for (;;) {
		nm_counters(obs, c);
		if (c->allocated_bytes == want->allocated_bytes &&
		    c->huge_pages == want->huge_pages &&
		    c->normal_pages == want->normal_pages &&
		    c->giant_pages == want->giant_pages &&
		    c->buffers == want->buffers)
			return;
		if (nm_now() > end)
			return;
		usleep(100000);
	}
}

START_TEST(exhaust)
{
	bool hog = _i >= (int)NPLAIN;
	uid_t uid = hog ? 0 : users[_i / NM_ARRAY_SIZE(policies)];
	uint32_t policy = policies[_i % NM_ARRAY_SIZE(policies)];
	struct nm_counters start, after1, after8, c;
	struct npu_mem_info info;
	struct result *res;
	uint64_t oom0 = 0, oom1 = 0, room, total = 0, want, reserve;
	uint64_t avail8 = 0;
	int obs = nm_open(), hold[2], st1, have_oom, hog_st = 0;
	bool hog_alive = true;
	pid_t pid[NPROC], hog_pid = -1;
	int status[NPROC];
	bool reaped[NPROC] = { false };
	char what[64], what8[64];
	double t0 = nm_now();

	settle(obs, &start);
	nm_get_info_ok(obs, &info);
	have_oom = nm_vmstat("oom_kill", &oom0) == 0;
	res = mmap(NULL, NPROC * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(res != MAP_FAILED);
	reserve = reserve_default(&info);
	if (hog)
		hog_pid = start_hog(info.total_ram / 2);
	room = expected_room(&info, reserve);
	snprintf(what, sizeof(what), "%s %s%s, one process", user_name(uid),
		 nm_policy_name(policy), hog ? " + hog" : "");
	snprintf(what8, sizeof(what8), "%s %s%s, %d at once, process",
		 user_name(uid), nm_policy_name(policy), hog ? " + hog" : "",
		 NPROC);
	printf("%s %s%s: total_ram %llu MiB, limit_bytes %llu MiB, "
	       "allocated %llu MiB, room about %llu MiB\n", user_name(uid),
	       nm_policy_name(policy), hog ? " beside a memory hog" : "",
	       (unsigned long long)(info.total_ram >> 20),
	       (unsigned long long)(info.limit_bytes >> 20),
	       (unsigned long long)(info.allocated_bytes >> 20),
	       (unsigned long long)(room >> 20));

	/* one process, which frees everything by exiting */
	memset(res, 0, NPROC * sizeof(*res));
	pid[0] = start_worker(uid, policy, &res[0], -1, -1, obs);
	st1 = nm_wait_timeout(pid[0], 600);
	print_result("one process", 0, &res[0]);
	settle_to(obs, &after1, &start);
	struct result one = res[0];

	/* NPROC processes at once, all holding until all have failed */
	memset(res, 0, NPROC * sizeof(*res));
	ck_assert_int_eq(pipe(hold), 0);
	for (int i = 0; i < NPROC; i++)
		pid[i] = start_worker(uid, policy, &res[i], hold[0], hold[1],
				      obs);
	close(hold[0]);
	for (;;) {
		int done = 0;

		for (int i = 0; i < NPROC; i++) {
			if (!reaped[i] && waitpid(pid[i], &status[i],
						  WNOHANG) == pid[i])
				reaped[i] = true;	/* died early */
			if (reaped[i] || __atomic_load_n(&res[i].done,
							 __ATOMIC_ACQUIRE))
				done++;
		}
		if (done == NPROC || nm_now() - t0 > 1200)
			break;
		usleep(20000);
	}
	nm_counters(obs, &c);
	nm_meminfo("MemAvailable", &avail8);
	close(hold[1]);		/* let them go */
	for (int i = 0; i < NPROC; i++)
		if (!reaped[i])
			status[i] = nm_wait_timeout(pid[i], 120);
	if (hog) {
		hog_alive = waitpid(hog_pid, &hog_st, WNOHANG) == 0;
		kill(hog_pid, SIGKILL);
		waitpid(hog_pid, NULL, 0);
	}
	settle_to(obs, &after8, &start);
	if (have_oom)
		nm_vmstat("oom_kill", &oom1);

	/* everything is cleaned up: now judge */
	printf("%d processes at once: %llu MiB allocated when all had "
	       "failed; MemAvailable %llu MiB (reserve %llu MiB)\n", NPROC,
	       (unsigned long long)((c.allocated_bytes -
				     start.allocated_bytes) >> 20),
	       (unsigned long long)(avail8 >> 20),
	       (unsigned long long)(reserve >> 20));
	for (int i = 0; i < NPROC; i++) {
		print_result("process", i, &res[i]);
		total += res[i].bytes;
	}
	printf("%s %s: done in %.1f s\n", user_name(uid),
	       nm_policy_name(policy), nm_now() - t0);
	if (have_oom)
		ck_assert_msg(oom1 == oom0, "the OOM killer killed %llu "
			      "processes during the test",
			      (unsigned long long)(oom1 - oom0));
	ck_assert_msg(hog_alive, "the memory hog died: %s",
		      nm_status_str(hog_st));

	check_result(what, 0, &one, st1);
	/*
	 * It must have run into the limits, not stopped early: a good part of
	 * the room (HUGE_ONLY may run out of free 2 MiB blocks sooner, and
	 * with the hog's pages scattered through memory, at any point: its
	 * ENOMEM is then the documented "cannot get its large pages").
	 */
	if (policy != NPU_MEM_POLICY_HUGE_ONLY)
		want = room / 2;
	else
		want = hog ? 0 : room / 4;
	ck_assert_msg(one.bytes >= want, "%s: only %llu MiB before -ENOMEM, "
		      "want at least %llu of about %llu MiB", what,
		      (unsigned long long)(one.bytes >> 20),
		      (unsigned long long)(want >> 20),
		      (unsigned long long)(room >> 20));
	if (hog && policy != NPU_MEM_POLICY_HUGE_ONLY)
		/* stopped by the reserve, at the right point */
		ck_assert_msg(one.avail_at_fail + SLACK >= reserve &&
			      one.avail_at_fail < reserve + STEP + SLACK,
			      "%s: MemAvailable %llu MiB at -ENOMEM, want "
			      "between the reserve (%llu MiB) and one buffer "
			      "more", what,
			      (unsigned long long)(one.avail_at_fail >> 20),
			      (unsigned long long)(reserve >> 20));
	nm_assert_global_eq(&start, &after1);

	for (int i = 0; i < NPROC; i++)
		check_result(what8, i, &res[i], status[i]);
	ck_assert_msg(total >= room / 4, "%d processes got only %llu MiB in "
		      "all, of about %llu MiB", NPROC,
		      (unsigned long long)(total >> 20),
		      (unsigned long long)(room >> 20));
	/*
	 * "Each ALLOC needs MemAvailable to stay above reserve_bytes after
	 * it": also when they run at once.  ALLOCs that all check
	 * MemAvailable before any of them has taken its pages would each
	 * pass, and with N CPUs overshoot the reserve by up to N - 1
	 * requests.
	 */
	if (hog)
		ck_assert_msg(avail8 + SLACK >= reserve, "%s %s, %d at once: "
			      "MemAvailable %llu MiB when all had failed, "
			      "below the reserve of %llu MiB", user_name(uid),
			      nm_policy_name(policy), NPROC,
			      (unsigned long long)(avail8 >> 20),
			      (unsigned long long)(reserve >> 20));
	nm_assert_global_eq(&start, &after8);
	munmap(res, NPROC * sizeof(*res));
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("exhaustion");
	uint64_t max_bytes = 0, reserve = 0;
	int ret;

	nm_require_device();
	ret = nm_param_get("max_bytes", &max_bytes);
	if (ret) {
		printf("FAIL: " NM_SYSMOD "/parameters/max_bytes: %s\n",
		       nm_retname(ret));
		return 1;
	}
	ret = nm_param_get("reserve_bytes", &reserve);
	if (ret == -ENOENT) {
		/* A module without the reserve: its defaults are what this
		 * test is about, so test them as they are. */
		printf("note: the module has no reserve_bytes parameter\n");
	} else if (ret) {
		printf("FAIL: " NM_SYSMOD "/parameters/reserve_bytes: %s\n",
		       nm_retname(ret));
		return 1;
	}
	if (max_bytes || reserve) {
		printf("SKIP: tests the default limits, but max_bytes=%llu "
		       "reserve_bytes=%llu (load the module without them)\n",
		       (unsigned long long)max_bytes,
		       (unsigned long long)reserve);
		return 77;
	}
	nm_add_loop(s, exhaust, NLOOP, 600, NULL);
	return nm_run_open_to_all(s);
}
