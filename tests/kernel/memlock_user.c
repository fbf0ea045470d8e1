// SPDX-License-Identifier: GPL-2.0-only
/*
 * memlock_user: pinned memory is charged to the user who opened the file.
 *
 * A buffer belongs to the open file, not to the process that allocated it:
 * forked children share the file, and a descriptor can be passed to any
 * process.  Charging each allocating process's own mm would give every one
 * of them a fresh RLIMIT_MEMLOCK, so the driver charges the per-user
 * locked-memory count of the opener's uid (the count io_uring uses),
 * checked against the allocating process's RLIMIT_MEMLOCK unless the opener
 * had CAP_IPC_LOCK.  Checked here, as uid 65534 with RLIMIT_MEMLOCK 8 MiB:
 *  - N forked children filling one shared file at once get 8 MiB between
 *    them, not 8 MiB each; the file stays full after they exit, and its
 *    close gives the 8 MiB back;
 *  - a descriptor passed over a unix socket to another process of the same
 *    user draws on the same 8 MiB;
 *  - separate opens by the same user (one process or several) share the
 *    count, each ALLOC checked against its own process's limit;
 *  - two users have separate counts;
 *  - a file opened by root (CAP_IPC_LOCK) is not limited after the process
 *    drops to uid 65534, and charges nothing to that user;
 *  - FREE, close, munmap of a freed buffer and process exit give the charge
 *    back: the user can allocate up to the limit again.
 * Every test ends with the driver's global counters where they started.
 * Needs root (to change uid) in a guest: the node is made 0666 for the run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_cred.h"
#include "nmtest_util.h"

#define LIMIT		(8 * NM_MiB)
#define NCHILD		4
#define MAXBUF		64

/* Buffers of 4, 3, 2 and 1 MiB, alternately NORMAL_ONLY and HUGE_FIRST
 * (sizes whose HUGE_FIRST backing is exact): until -ENOMEM at 1 MiB. */
struct fill {
	uint32_t handle[MAXBUF];
	uint64_t size[MAXBUF];
	int n;
	uint64_t total;
};

static void fill_to_limit(int fd, struct fill *f)
{
	uint64_t step = 4 * NM_MiB;

	memset(f, 0, sizeof(*f));
	while (f->n < MAXBUF) {
		uint32_t policy = f->n % 2 ? NPU_MEM_POLICY_HUGE_FIRST :
					     NPU_MEM_POLICY_NORMAL_ONLY;
		struct npu_mem_alloc a;
		int r = nm_alloc(fd, step, policy, 0, &a);

		if (r == -ENOMEM) {
			if (step == NM_MiB)
				return;
			step -= NM_MiB;
			continue;
		}
		NM_REQUIRE(r == 0, "ALLOC %llu %s: %s, want 0 or -ENOMEM",
			   (unsigned long long)step, nm_policy_name(policy),
			   nm_retname(r));
		NM_REQUIRE(a.buf.size == step, "ALLOC %llu: size %llu",
			   (unsigned long long)step,
			   (unsigned long long)a.buf.size);
		f->handle[f->n] = a.handle;
		f->size[f->n++] = a.buf.size;
		f->total += a.buf.size;
	}
	ck_abort_msg("%d buffers (%llu bytes) and no -ENOMEM yet", f->n,
		     (unsigned long long)f->total);
}

static void free_all(int fd, struct fill *f)
{
	for (int i = 0; i < f->n; i++)
		nm_free_ok(fd, f->handle[i]);
	f->n = 0;
	f->total = 0;
}

/* The user can have exactly `want` more bytes, in its own new open file. */
static void assert_room(uint64_t want, const char *when)
{
	struct fill f;
	int fd = nm_open();

	fill_to_limit(fd, &f);
	ck_assert_msg(f.total == want, "%s: the user got %llu bytes in a new "
		      "file, want %llu", when, (unsigned long long)f.total,
		      (unsigned long long)want);
	free_all(fd, &f);
	close(fd);
}

static void expect_alloc(int fd, uint64_t size, int want, const char *why)
{
	struct npu_mem_alloc a;
	int r = nm_alloc(fd, size, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);

	ck_assert_msg(r == want, "ALLOC %llu (%s): %s, want %s",
		      (unsigned long long)size, why, nm_retname(r),
		      nm_retname(want));
}

/* Run fn in a forked child (which changes uid), check that it exited 0 and
 * that the driver's global counters are back where they were. */
static void in_child(void (*fn)(void), const char *what)
{
	struct nm_counters start;
	int obs = nm_open();
	pid_t pid;

	nm_counters(obs, &start);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(obs);
		fn();
		_exit(0);
	}
	nm_wait_ok(pid, what);
	nm_assert_global_now(obs, &start);
	close(obs);
}

/* ---------------------------------------------------------------- */

struct shared_totals {
	uint64_t got[NCHILD];
	uint64_t vmpin[NCHILD];
};

static void children_share_one_file(void)
{
	struct shared_totals *sh;
	struct npu_mem_info info;
	uint64_t sum = 0;
	int go[2], fd;
	pid_t pid[NCHILD];

	nm_become_ok(NM_UID_NOBODY, LIMIT);
	fd = nm_open();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(sh != MAP_FAILED);
	ck_assert_int_eq(pipe(go), 0);
	for (int i = 0; i < NCHILD; i++) {
		fflush(stdout);
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (pid[i] == 0) {
			struct fill f;
			uint64_t pin0;

			close(go[1]);
			/* all start together: the charge must hold races */
			nm_assert_ret(nm_await(go[0]), -EPIPE);
			pin0 = nm_vmpin_bytes();
			fill_to_limit(fd, &f);
			sh->got[i] = f.total;
			/* VmPin still shows what this process allocated */
			sh->vmpin[i] = nm_vmpin_bytes() - pin0;
			/* exit holding the buffers: they are the file's */
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < NCHILD; i++)
		nm_wait_ok(pid[i], "child filling the shared file");
	for (int i = 0; i < NCHILD; i++) {
		printf("child %d got %llu bytes (VmPin +%llu)\n", i,
		       (unsigned long long)sh->got[i],
		       (unsigned long long)sh->vmpin[i]);
		ck_assert_msg(sh->vmpin[i] == sh->got[i], "child %d: VmPin +%llu "
			      "for %llu bytes allocated", i,
			      (unsigned long long)sh->vmpin[i],
			      (unsigned long long)sh->got[i]);
		sum += sh->got[i];
	}
	nm_get_info_ok(fd, &info);
	printf("%d children of uid %d sharing one file: %llu bytes "
	       "(RLIMIT_MEMLOCK %llu); the file holds %llu\n", NCHILD,
	       NM_UID_NOBODY, (unsigned long long)sum,
	       (unsigned long long)LIMIT,
	       (unsigned long long)info.client_bytes);
	ck_assert_msg(sum <= LIMIT, "the user pinned %llu bytes through %d "
		      "forked children with RLIMIT_MEMLOCK %llu: the limit is "
		      "per process, not per user", (unsigned long long)sum,
		      NCHILD, (unsigned long long)LIMIT);
	/* sizes are whole MiB: the last 1 MiB refused means it is full */
	ck_assert_uint_eq(sum, LIMIT);
	ck_assert_uint_eq(info.client_bytes, sum);
	/* the children are gone, their buffers are not: still full */
	expect_alloc(fd, NM_4K, -ENOMEM, "file full, children gone");
	{
		int other = nm_open();

		expect_alloc(other, NM_4K, -ENOMEM, "another file, same user");
		close(other);
	}
	close(fd);
	assert_room(LIMIT, "after closing the shared file");
	munmap(sh, sizeof(*sh));
}

START_TEST(forked_children_share_the_limit)
{
	in_child(children_share_one_file, "children sharing one file");
}
END_TEST

/* ---------------------------------------------------------------- */

START_TEST(fd_passed_to_another_process)
{
	struct nm_counters start;
	int sv[2], done[2], obs = nm_open();
	pid_t a, b;

	nm_counters(obs, &start);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(done), 0);
	fflush(stdout);
	a = fork();
	ck_assert_int_ge(a, 0);
	if (a == 0) {		/* opens, allocates 5 MiB, passes the file */
		struct npu_mem_alloc x;
		int fd;

		close(obs);
		close(sv[1]);
		close(done[1]);
		nm_become_ok(NM_UID_NOBODY, LIMIT);
		fd = nm_open();
		nm_alloc_ok(fd, 5 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
		nm_assert_ok(nm_send_fd(sv[0], fd));
		close(fd);
		nm_assert_ret(nm_await(done[0]), -EPIPE);
		_exit(0);
	}
	/* whoever dies, the other sees end of file instead of hanging */
	close(sv[0]);
	b = fork();
	ck_assert_int_ge(b, 0);
	if (b == 0) {		/* not related to a: same user, same limit */
		struct npu_mem_alloc x;
		int fd;

		close(obs);
		close(done[0]);
		nm_become_ok(NM_UID_NOBODY, LIMIT);
		fd = nm_recv_fd(sv[1]);
		ck_assert_msg(fd >= 0, "receive fd: %s", nm_retname(fd));
		expect_alloc(fd, 4 * NM_MiB, -ENOMEM, "5 MiB of 8 used by the "
			     "process that passed the file");
		nm_alloc_ok(fd, 3 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
		expect_alloc(fd, NM_4K, -ENOMEM, "8 MiB of 8 used");
		/* and through a file of its own: the same user's count */
		{
			int own = nm_open();

			expect_alloc(own, NM_4K, -ENOMEM, "own file, 8 of 8");
			close(own);
		}
		nm_free_ok(fd, x.handle);
		close(fd);
		close(done[1]);
		_exit(0);
	}
	close(done[0]);
	close(done[1]);
	close(sv[1]);
	nm_wait_ok(b, "receiver");
	nm_wait_ok(a, "sender");
	nm_assert_global_now(obs, &start);
	close(obs);
}
END_TEST

/* ---------------------------------------------------------------- */

/* In a forked child of the same user: RLIMIT_MEMLOCK rl, a file of its own,
 * ALLOC `size` expecting want; then exit (which frees). */
static void other_process(uint64_t rl, uint64_t size, int want,
			  const char *why)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;

		nm_assert_ok(nm_set_memlock(rl));
		fd = nm_open();
		expect_alloc(fd, size, want, why);
		if (want == 0 && size < LIMIT)
			expect_alloc(fd, NM_4K, -ENOMEM, "then one page more");
		_exit(0);
	}
	nm_wait_ok(pid, why);
}

static void separate_opens(void)
{
	struct npu_mem_alloc x, y;
	int fd1, fd2;

	nm_become_ok(NM_UID_NOBODY, LIMIT);
	fd1 = nm_open();
	fd2 = nm_open();
	nm_alloc_ok(fd1, 5 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
	expect_alloc(fd2, 4 * NM_MiB, -ENOMEM, "5 of 8 MiB used through "
		     "another open file of this process");
	/* other processes of the user, each with its own open file, are
	 * checked against their own RLIMIT_MEMLOCK: 5 MiB is used */
	other_process(16 * NM_MiB, 11 * NM_MiB, 0,
		      "another process, limit 16 MiB, 5 MiB used");
	other_process(16 * NM_MiB, 12 * NM_MiB, -ENOMEM,
		      "another process, limit 16 MiB, 5 MiB used, 12 MiB");
	other_process(4 * NM_MiB, NM_4K, -ENOMEM,
		      "another process, limit 4 MiB, 5 MiB used");
	other_process(LIMIT, 4 * NM_MiB, -ENOMEM,
		      "another process, limit 8 MiB, 5 MiB used, 4 MiB");
	nm_alloc_ok(fd2, 3 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &y);
	expect_alloc(fd1, NM_4K, -ENOMEM, "8 of 8 MiB used");
	other_process(LIMIT, NM_4K, -ENOMEM,
		      "another process, limit 8 MiB, 8 MiB used");
	nm_free_ok(fd1, x.handle);
	close(fd2);
	close(fd1);
	assert_room(LIMIT, "after FREE and close");
}

START_TEST(same_user_separate_opens_share_the_limit)
{
	in_child(separate_opens, "separate opens");
}
END_TEST

/* ---------------------------------------------------------------- */

START_TEST(two_users_have_separate_limits)
{
	static const uid_t uids[2] = { NM_UID_NOBODY, NM_UID_OTHER };
	struct nm_counters start;
	int full[2], quit[2], obs = nm_open();
	pid_t pid[2];

	nm_counters(obs, &start);
	ck_assert_int_eq(pipe(quit), 0);
	/* both users hold 8 MiB at the same time */
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pipe(full), 0);
		fflush(stdout);
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (pid[i] == 0) {
			struct fill f;
			int fd;

			close(obs);
			close(full[0]);
			close(quit[1]);
			nm_become_ok(uids[i], LIMIT);
			fd = nm_open();
			fill_to_limit(fd, &f);
			ck_assert_msg(f.total == LIMIT, "uid %u got %llu bytes, "
				      "want %llu", (unsigned)uids[i],
				      (unsigned long long)f.total,
				      (unsigned long long)LIMIT);
			nm_assert_ok(nm_signal(full[1]));
			nm_assert_ret(nm_await(quit[0]), -EPIPE);
			_exit(0);
		}
		/* the first one is full before the second starts */
		close(full[1]);
		nm_assert_ok(nm_await(full[0]));
		close(full[0]);
	}
	{
		struct nm_counters c;

		nm_counters(obs, &c);
		ck_assert_uint_eq(c.allocated_bytes,
				  start.allocated_bytes + 2 * LIMIT);
	}
	close(quit[1]);
	close(quit[0]);
	for (int i = 0; i < 2; i++)
		nm_wait_ok(pid[i], "user filling its limit");
	nm_assert_global_now(obs, &start);
	close(obs);
}
END_TEST

/* ---------------------------------------------------------------- */

static void root_opened(void)
{
	struct npu_mem_alloc a[4];
	int fd = nm_open();	/* as root, CAP_IPC_LOCK */

	nm_become_ok(NM_UID_NOBODY, LIMIT);
	/* the opener had CAP_IPC_LOCK: twice the caller's limit works */
	for (int i = 0; i < 4; i++) {
		int r = nm_alloc(fd, 4 * NM_MiB, i % 2 ?
				 NPU_MEM_POLICY_HUGE_ONLY :
				 NPU_MEM_POLICY_NORMAL_ONLY, 0, &a[i]);

		ck_assert_msg(r == 0, "ALLOC 4 MiB #%d in a file root opened, "
			      "now uid %d with RLIMIT_MEMLOCK 8 MiB: %s", i,
			      NM_UID_NOBODY, nm_retname(r));
	}
	/* and nothing of it is charged to uid 65534 */
	assert_room(LIMIT, "16 MiB held in a file root opened");
	for (int i = 0; i < 4; i++)
		nm_free_ok(fd, a[i].handle);
	close(fd);
}

START_TEST(cap_ipc_lock_opener_not_limited)
{
	in_child(root_opened, "root-opened file used as uid 65534");
}
END_TEST

/* ---------------------------------------------------------------- */

static void give_back(void)
{
	struct npu_mem_alloc x;
	struct fill f;
	uint8_t *p;
	int fd;
	pid_t pid;
	int st;

	nm_become_ok(NM_UID_NOBODY, LIMIT);
	assert_room(LIMIT, "at the start");

	/* FREE returns exactly what was freed */
	fd = nm_open();
	fill_to_limit(fd, &f);
	ck_assert_uint_eq(f.total, LIMIT);
	nm_free_ok(fd, f.handle[0]);		/* a 4 MiB one */
	ck_assert_uint_eq(f.size[0], 4 * NM_MiB);
	expect_alloc(fd, 4 * NM_MiB + NM_4K, -ENOMEM, "4 MiB freed");
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &x);
	f.handle[0] = x.handle;
	expect_alloc(fd, NM_4K, -ENOMEM, "full again");

	/* a freed buffer that is still mapped is still pinned: charged
	 * until its last mapping goes */
	p = nm_map_ok(fd, &x, PROT_READ | PROT_WRITE);
	nm_free_ok(fd, x.handle);
	p[0] = 1;
	expect_alloc(fd, NM_4K, -ENOMEM, "freed but still mapped");
	munmap(p, x.buf.size);
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &x);
	f.handle[0] = x.handle;

	/* close returns everything */
	close(fd);
	assert_room(LIMIT, "after close");

	/* exit returns everything: a process filling the limit and exiting
	 * without FREE or close, and one killed while holding it */
	for (int kill_it = 0; kill_it < 2; kill_it++) {
		int full[2];

		ck_assert_int_eq(pipe(full), 0);
		fflush(stdout);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int cfd = nm_open();

			fill_to_limit(cfd, &f);
			nm_assert_ok(nm_signal(full[1]));
			if (kill_it)
				pause();
			_exit(f.total == LIMIT ? 0 : 3);
		}
		close(full[1]);
		nm_assert_ok(nm_await(full[0]));
		close(full[0]);
		if (kill_it)
			kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(kill_it ? WIFSIGNALED(st) :
			      WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "child holding the limit: %s", nm_status_str(st));
		assert_room(LIMIT, kill_it ? "after a holder was killed" :
				   "after a holder exited");
	}
}

START_TEST(free_close_exit_give_the_charge_back)
{
	in_child(give_back, "give back");
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("memlock_user");

	nm_require_device();
	nm_add(s, forked_children_share_the_limit, 120);
	nm_add(s, fd_passed_to_another_process, 60);
	nm_add(s, same_user_separate_opens_share_the_limit, 120);
	nm_add(s, two_users_have_separate_limits, 60);
	nm_add(s, cap_ipc_lock_opener_not_limited, 60);
	nm_add(s, free_close_exit_give_the_charge_back, 120);
	return nm_run_open_to_all(s);
}
