// SPDX-License-Identifier: GPL-2.0-only
/*
 * retained: a freed buffer's chunk that someone else still references stays
 * charged until the last reference goes.
 *
 * vmsplice() of one 4 KiB page of a 2 MiB chunk into a pipe keeps the whole
 * chunk alive after munmap and FREE, and the pipe is charged for one page at
 * most.  Were the chunk uncharged with its buffer, any user could hold all
 * of RAM 2 MiB at a time, outside RLIMIT_MEMLOCK and the global cap, until
 * the OOM killer picked someone.  Checked here:
 *  - uid 65534 under RLIMIT_MEMLOCK 8 MiB, one vmspliced page per freed
 *    HUGE_ONLY buffer: exactly four such buffers, then -ENOMEM; GET_INFO's
 *    retained_bytes and allocated_bytes, fdinfo and VmPin show the 8 MiB;
 *    once the pipes are closed it all goes back to zero (waited for, with a
 *    60 s ceiling) and the user can allocate its 8 MiB again;
 *  - the same as root (no memlock limit) against max_bytes: -ENOMEM at the
 *    cap, and a bystander (another user) then gets -ENOMEM from the module
 *    and its ordinary memory from the kernel, nobody OOM-killed;
 *  - a buffer freed with no outside reference (or whose pipe was drained
 *    before FREE) is released at once: retained_bytes stays 0;
 *  - draining the pipe after FREE lets the chunk go too;
 *  - a page of a freed buffer that a memory error took out of use
 *    (MADV_HWPOISON) ends its charges: 5.10's memory_failure() keeps a
 *    reference to such a page for good, and the charge stayed with it.
 * Needs root (to change uid and max_bytes) in a guest: the node is made
 * 0666 for the run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_cred.h"
#include "nmtest_util.h"

#define LIMIT		(8 * NM_MiB)
#define CHUNK		(2 * NM_MiB)
#define MAXKEPT		64
/* How long the module may take to notice that a holder let go. */
#define LET_GO_CEILING	60.0

struct kept {
	int pipe[MAXKEPT];	/* read ends; each holds one page of a chunk */
	int n;
};

static uint64_t retained_now(int fd)
{
	struct npu_mem_info info;

	nm_get_info_ok(fd, &info);
	return info.retained_bytes;
}

/*
 * ALLOC a 2 MiB chunk, vmsplice its first page into a new pipe, munmap and
 * FREE it.  0 with the pipe's read end in *pfd (the write end is closed: the
 * page stays in the pipe until it is read or the pipe goes), or ALLOC's
 * -errno.  With drain, the pipe is emptied before the FREE.
 */
static int splice_and_free(int fd, int *pfd, bool drain)
{
	struct npu_mem_alloc a;
	struct iovec iov;
	char *p;
	int pp[2], r;
	ssize_t n;

	r = nm_alloc(fd, CHUNK, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	if (r)
		return r;
	ck_assert_uint_eq(a.buf.huge_pages, 1);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	p[0] = 1;
	ck_assert_int_eq(pipe(pp), 0);
	iov.iov_base = p + NM_4K;
	iov.iov_len = NM_4K;
	n = vmsplice(pp[1], &iov, 1, 0);
	ck_assert_msg(n == NM_4K, "vmsplice: %zd (%s)", n,
		      n < 0 ? nm_errname(errno) : "short");
	close(pp[1]);
	if (drain) {
		char page[NM_4K];

		ck_assert_int_eq(nm_read_full(pp[0], page, sizeof(page)), 0);
	}
	ck_assert_int_eq(munmap(p, a.buf.size), 0);
	nm_free_ok(fd, a.handle);
	*pfd = pp[0];
	return 0;
}

/* Splice-and-free until ALLOC fails, which it must with -ENOMEM. */
static void retain_until_refused(int fd, struct kept *k)
{
	int r = 0;

	k->n = 0;
	while (k->n < MAXKEPT) {
		r = splice_and_free(fd, &k->pipe[k->n], false);
		if (r)
			break;
		k->n++;
	}
	ck_assert_msg(r == -ENOMEM, "after %d chunks kept by pipes (%d MiB): "
		      "ALLOC %s, want -ENOMEM", k->n, k->n * 2, nm_retname(r));
}

static void close_all(struct kept *k)
{
	for (int i = 0; i < k->n; i++)
		close(k->pipe[i]);
	k->n = 0;
}

/* Wait until nothing is retained, or fail at the ceiling. */
static void await_let_go(int fd, const char *what)
{
	double t0 = nm_now();
	uint64_t left;
	int r = nm_await_no_retained(fd, LET_GO_CEILING, &left);

	ck_assert_msg(r == 0, "%s: %s, retained_bytes still %llu after %.0f s",
		      what, nm_retname(r), (unsigned long long)left,
		      LET_GO_CEILING);
	printf("%s: let go after %.2f s\n", what, nm_now() - t0);
}

/* Run fn in a forked child; it must exit 0. */
static void in_child(void (*fn)(void), const char *what)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	nm_wait_ok(pid, what);
}

/* ---------------------------------------------------------------- */

static void memlock_user_body(void)
{
	struct nm_counters c0, c1;
	struct npu_mem_alloc a;
	struct kept k;
	uint64_t pin0, v;
	int fd, r;

	nm_become_ok(NM_UID_NOBODY, LIMIT);
	/*
	 * The uid change made the process non-dumpable, which gives its
	 * /proc files to root before 5.14: its own fdinfo would be -EACCES.
	 */
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1), 0);
	fd = nm_open();
	await_let_go(fd, "left by an earlier test");
	nm_counters(fd, &c0);
	pin0 = nm_vmpin_bytes();

	retain_until_refused(fd, &k);
	printf("uid %d, RLIMIT_MEMLOCK %d MiB: %d freed chunks kept by pipes, "
	       "then -ENOMEM\n", NM_UID_NOBODY, (int)(LIMIT / NM_MiB), k.n);
	ck_assert_msg(k.n == LIMIT / CHUNK, "the user kept %d freed 2 MiB "
		      "chunks (%d MiB) with one pipe page each under "
		      "RLIMIT_MEMLOCK %d MiB: want %d", k.n, k.n * 2,
		      (int)(LIMIT / NM_MiB), (int)(LIMIT / CHUNK));
	/* The limit refuses, not a want of 2 MiB blocks: 4 KiB too. */
	r = nm_alloc(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ck_assert_msg(r == -ENOMEM, "4 KiB ALLOC with the limit taken by "
		      "retained chunks: %s", nm_retname(r));

	nm_counters(fd, &c1);
	ck_assert_uint_eq(retained_now(fd), LIMIT);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes + LIMIT);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	ck_assert_uint_eq(c1.huge_pages, c0.huge_pages);
	ck_assert_uint_eq(c1.client_buffers, 0);
	nm_assert_ok(nm_fdinfo(fd, "npu-mem-retained-bytes", &v));
	ck_assert_uint_eq(v, LIMIT);
	ck_assert_uint_eq(nm_vmpin_bytes() - pin0, LIMIT);

	close_all(&k);
	await_let_go(fd, "pipes closed");
	nm_counters(fd, &c1);
	nm_assert_global_eq(&c0, &c1);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	nm_assert_ok(nm_fdinfo(fd, "npu-mem-retained-bytes", &v));
	ck_assert_uint_eq(v, 0);
	/* The user's whole limit is back. */
	nm_alloc_ok(fd, LIMIT, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_free_ok(fd, a.handle);
	close(fd);
}

START_TEST(memlock_counts_retained_chunks)
{
	in_child(memlock_user_body, "uid 65534 keeping chunks by vmsplice");
}
END_TEST

/* ---------------------------------------------------------------- */

/* Another user, after the cap is taken: -ENOMEM here, memory elsewhere. */
static void bystander_body(void)
{
	const size_t len = 64 * NM_MiB;
	struct npu_mem_alloc a;
	char *p;
	int fd, r;

	nm_become_ok(NM_UID_OTHER, NM_MEMLOCK_INF);
	fd = nm_open();
	r = nm_alloc(fd, CHUNK, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	ck_assert_msg(r == -ENOMEM, "bystander's ALLOC with the cap taken by "
		      "retained chunks: %s", nm_retname(r));
	close(fd);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ck_assert(p != MAP_FAILED);
	memset(p, 0x5a, len);
	munmap(p, len);
}

START_TEST(cap_counts_retained_chunks)
{
	const uint64_t room = 16 * NM_MiB;
	struct nm_counters c0, c1;
	struct npu_mem_alloc a;
	struct kept k;
	int fd = nm_open(), r;

	await_let_go(fd, "left by an earlier test");
	nm_counters(fd, &c0);
	nm_assert_ok(nm_param_set("max_bytes", c0.allocated_bytes + room));

	/* Root's file is not limited by RLIMIT_MEMLOCK: the cap is. */
	retain_until_refused(fd, &k);
	printf("max_bytes %llu MiB: %d freed chunks kept by pipes, then "
	       "-ENOMEM\n", (unsigned long long)((c0.allocated_bytes + room) /
						 NM_MiB), k.n);
	ck_assert_msg(k.n == room / CHUNK, "%d freed 2 MiB chunks (%d MiB) "
		      "kept with one pipe page each, %llu MiB below the cap: "
		      "want %d", k.n, k.n * 2,
		      (unsigned long long)(room / NM_MiB), (int)(room / CHUNK));
	r = nm_alloc(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ck_assert_msg(r == -ENOMEM, "4 KiB ALLOC at the cap: %s",
		      nm_retname(r));
	nm_counters(fd, &c1);
	ck_assert_uint_eq(retained_now(fd), room);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes + room);

	in_child(bystander_body, "bystander at the cap");

	close_all(&k);
	await_let_go(fd, "pipes closed");
	nm_counters(fd, &c1);
	nm_assert_global_eq(&c0, &c1);
	/* The cap's room is back. */
	nm_alloc_ok(fd, room, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

/* ---------------------------------------------------------------- */

START_TEST(unreferenced_goes_at_once)
{
	struct nm_counters c0, c1;
	struct npu_mem_alloc a;
	char *p;
	int fd = nm_open(), pfd;

	await_let_go(fd, "left by an earlier test");
	nm_counters(fd, &c0);

	/* Mapped, touched (one PMD), unmapped, freed: nothing left. */
	nm_alloc_ok(fd, CHUNK, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	memset(p, 1, CHUNK);
	ck_assert_int_eq(munmap(p, CHUNK), 0);
	nm_free_ok(fd, a.handle);
	ck_assert_uint_eq(retained_now(fd), 0);
	nm_assert_counters_now(fd, &c0);

	/* The pipe drained before FREE holds nothing any more. */
	ck_assert_int_eq(splice_and_free(fd, &pfd, true), 0);
	ck_assert_uint_eq(retained_now(fd), 0);
	nm_assert_counters_now(fd, &c0);
	close(pfd);

	/* Drained after FREE: retained until then, let go after. */
	ck_assert_int_eq(splice_and_free(fd, &pfd, false), 0);
	nm_counters(fd, &c1);
	ck_assert_uint_eq(retained_now(fd), CHUNK);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes + CHUNK);
	{
		char page[NM_4K];

		ck_assert_int_eq(nm_read_full(pfd, page, sizeof(page)), 0);
	}
	await_let_go(fd, "pipe drained");
	nm_assert_counters_now(fd, &c0);
	close(pfd);
	close(fd);
}
END_TEST

/*
 * Poison one page of a mapped small-page buffer, then unmap and FREE it:
 * the charges must end (the kernel may hold the page for good).  Needs
 * CONFIG_MEMORY_FAILURE and CAP_SYS_ADMIN; the guest loses the page.
 */
START_TEST(poisoned_page_ends_charges)
{
	uint64_t pin0 = nm_vmpin_bytes();
	struct nm_counters c0;
	struct npu_mem_alloc a;
	bool unsupported;
	char *p;
	int fd = nm_open();

	await_let_go(fd, "left by an earlier test");
	nm_counters(fd, &c0);
	nm_alloc_ok(fd, 4 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	memset(p, 1, 4 * NM_4K);
	/*
	 * A failed recovery (EBUSY on 5.10, which is what keeps the page)
	 * still poisons it; EINVAL: the kernel has no memory failure handling.
	 */
	unsupported = madvise(p + NM_4K, NM_4K, MADV_HWPOISON) &&
		      errno == EINVAL;
	ck_assert_int_eq(munmap(p, 4 * NM_4K), 0);
	nm_free_ok(fd, a.handle);
	if (unsupported) {
		close(fd);
		nm_skip("MADV_HWPOISON: EINVAL (no CONFIG_MEMORY_FAILURE)");
	}
	await_let_go(fd, "page poisoned");
	nm_assert_counters_now(fd, &c0);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("retained");

	nm_add(s, unreferenced_goes_at_once, 120);
	nm_add(s, memlock_counts_retained_chunks, 180);
	nm_add_fx(s, cap_counts_retained_chunks, 180, &nm_max_bytes_fx);
	nm_add(s, poisoned_page_ends_charges, 120);
	return nm_run_open_to_all(s);
}
