// SPDX-License-Identifier: GPL-2.0-only
/*
 * visibility: who learns a buffer's device address.
 *
 * Without an IOMMU a device address is a physical address, and so is the
 * layout that dev_segments and NPU_MEM_BUF_DEV_CONTIG reveal (how many
 * physically contiguous runs, whether they abut): unprivileged users must
 * not learn either.  As for any file, the privilege is the OPENER's: a file
 * opened without CAP_SYS_ADMIN stays hidden when root uses it, and one root
 * opened stays visible after the process drops privileges or passes it on.
 * Checked, for every policy and for ALLOC's and QUERY's answers:
 *  - opened without CAP_SYS_ADMIN (uid 0 with the capability dropped, and
 *    uid 65534): DEV_HIDDEN set, dev_addr 0, dev_segments 0, DEV_CONTIG
 *    clear, the rest of the description as usual;
 *  - opened by root: DEV_HIDDEN clear, dev_addr non-zero and page aligned,
 *    dev_segments >= 1, DEV_CONTIG exactly when dev_segments is 1;
 *  - the opener decides: a root-opened file used after setuid(65534), and
 *    a file uid 65534 opened passed to root over a unix socket;
 *  - GET_INFO's global totals are the same for every caller (a documented
 *    choice, as /proc/meminfo), its client_* fields are the file's own.
 * Under an IOMMU (x86_64-iommu-edu) dev_addr is an IOVA, not a physical
 * address: shown to everyone, one DEV_CONTIG segment per buffer, whoever
 * opened the file; the same program checks that there.
 * Needs root in a guest (the node is made 0666 for the run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "nmtest_cred.h"
#include "nmtest_util.h"

static const struct {
	uint64_t size;
	uint32_t policy;
} shapes[] = {
	{ NM_4K, NPU_MEM_POLICY_NORMAL_ONLY },		/* one page: contiguous */
	{ 3 * NM_4K + 5, NPU_MEM_POLICY_NORMAL_ONLY },
	{ 4 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY },
	{ NM_2M, NPU_MEM_POLICY_HUGE_ONLY },		/* one chunk */
	{ 6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
	{ NM_2M + 3 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST },
	{ 8 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST },
};
#define NSHAPES NM_ARRAY_SIZE(shapes)

static bool have_iommu(void)
{
	struct npu_mem_info info;
	int fd = nm_open();

	nm_get_info_ok(fd, &info);
	close(fd);
	return info.dev_flags & NPU_MEM_DEV_IOMMU;
}

/* The description's size and pages, whoever asks. */
static void check_backing(const struct npu_mem_buffer *b, uint64_t req,
			  uint32_t policy, const char *what)
{
	uint64_t align = policy == NPU_MEM_POLICY_HUGE_ONLY ? NM_2M : NM_4K;

	ck_assert_msg(b->size == NM_ALIGN(req, align) && b->policy == policy &&
		      (uint64_t)b->huge_pages * NM_2M +
		      (uint64_t)b->normal_pages * NM_4K == b->size,
		      "%s: %s %llu: size %llu policy %u huge %u normal %u",
		      what, nm_policy_name(policy), (unsigned long long)req,
		      (unsigned long long)b->size, b->policy, b->huge_pages,
		      b->normal_pages);
}

/*
 * shown: the opener had CAP_SYS_ADMIN, or an IOMMU translates (then the
 * address is an IOVA and the buffer one segment).
 */
static void check_visibility(const struct npu_mem_buffer *b, bool shown,
			     bool iommu, const char *what)
{
	const uint32_t dev_bits = NPU_MEM_BUF_DEV_HIDDEN |
				  NPU_MEM_BUF_DEV_CONTIG;

	if (!shown) {
		ck_assert_msg((b->flags & dev_bits) == NPU_MEM_BUF_DEV_HIDDEN &&
			      b->dev_addr == 0 && b->dev_segments == 0,
			      "%s: physical layout shown to an opener without "
			      "CAP_SYS_ADMIN: flags %#x (want DEV_HIDDEN, not "
			      "DEV_CONTIG), dev_addr %#llx, dev_segments %u "
			      "(want 0, 0)", what, b->flags,
			      (unsigned long long)b->dev_addr,
			      b->dev_segments);
		return;
	}
	ck_assert_msg(!(b->flags & NPU_MEM_BUF_DEV_HIDDEN) && b->dev_addr &&
		      !(b->dev_addr & (NM_4K - 1)) && b->dev_segments >= 1,
		      "%s: device address withheld: flags %#x dev_addr %#llx "
		      "dev_segments %u", what, b->flags,
		      (unsigned long long)b->dev_addr, b->dev_segments);
	ck_assert_msg(!!(b->flags & NPU_MEM_BUF_DEV_CONTIG) ==
		      (b->dev_segments == 1), "%s: DEV_CONTIG %s with %u "
		      "segments", what,
		      b->flags & NPU_MEM_BUF_DEV_CONTIG ? "set" : "clear",
		      b->dev_segments);
	if (iommu)
		ck_assert_msg(b->dev_segments == 1, "%s: %u device segments "
			      "under an IOMMU", what, b->dev_segments);
	/*
	 * A bounced chunk is cut to swiotlb's largest mapping (256 KiB),
	 * whose slots need not be adjacent; one 4 KiB page is one mapping.
	 */
	if (b->normal_pages + b->huge_pages == 1 &&
	    (!(b->flags & NPU_MEM_BUF_BOUNCED) || b->normal_pages))
		ck_assert_msg(b->flags & NPU_MEM_BUF_DEV_CONTIG,
			      "%s: one page or chunk is not DEV_CONTIG", what);
}

/* Allocate every shape in fd, check ALLOC's and QUERY's answers, free. */
static void check_file(int fd, bool shown, bool iommu, const char *who)
{
	for (size_t i = 0; i < NSHAPES; i++) {
		struct npu_mem_alloc a;
		struct npu_mem_buffer q;
		char what[96];

		snprintf(what, sizeof(what), "%s, ALLOC %s %llu", who,
			 nm_policy_name(shapes[i].policy),
			 (unsigned long long)shapes[i].size);
		nm_alloc_ok(fd, shapes[i].size, shapes[i].policy, 0, &a);
		check_backing(&a.buf, shapes[i].size, shapes[i].policy, what);
		check_visibility(&a.buf, shown, iommu, what);
		nm_assert_ok(nm_query(fd, a.handle, &q));
		nm_assert_buf_eq(&a.buf, &q);
		nm_free_ok(fd, a.handle);
	}
}

static void in_child(void (*fn)(bool), bool iommu, const char *what)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn(iommu);
		_exit(0);
	}
	nm_wait_ok(pid, what);
}

/* ---------------------------------------------------------------- */

START_TEST(shown_to_root)
{
	bool iommu = have_iommu();
	int fd = nm_open();

	check_file(fd, true, iommu, "root");
	close(fd);
}
END_TEST

static void no_sys_admin(bool iommu)
{
	int fd;

	nm_assert_ok(nm_drop_caps(1ULL << CAP_SYS_ADMIN));
	fd = nm_open();
	check_file(fd, iommu, iommu, "uid 0 without CAP_SYS_ADMIN");
	close(fd);
}

START_TEST(hidden_without_cap_sys_admin)
{
	in_child(no_sys_admin, have_iommu(), "uid 0 without CAP_SYS_ADMIN");
}
END_TEST

static void nobody(bool iommu)
{
	int fd;

	nm_become_ok(NM_UID_NOBODY, 64 * NM_MiB);
	fd = nm_open();
	check_file(fd, iommu, iommu, "uid 65534");
	close(fd);
}

START_TEST(hidden_from_unprivileged_user)
{
	in_child(nobody, have_iommu(), "uid 65534");
}
END_TEST

/* ---------------------------------------------------------------- */

/* Root opens and allocates, then becomes uid 65534: the file still shows
 * addresses, old buffers and new ones. */
static void root_file_after_setuid(bool iommu)
{
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	int fd = nm_open();

	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	check_visibility(&a.buf, true, iommu, "root's ALLOC");
	nm_become_ok(NM_UID_NOBODY, 64 * NM_MiB);
	nm_assert_ok(nm_query(fd, a.handle, &q));
	nm_assert_buf_eq(&a.buf, &q);
	check_visibility(&q, true, iommu,
			 "QUERY as uid 65534 in a file root opened");
	check_file(fd, true, iommu, "uid 65534 in a file root opened");
	nm_free_ok(fd, a.handle);
	close(fd);
}

START_TEST(root_opened_file_stays_visible)
{
	in_child(root_file_after_setuid, have_iommu(),
		 "root-opened file after setuid");
}
END_TEST

/* uid 65534 opens and allocates, and passes the file to root. */
START_TEST(unprivileged_file_stays_hidden_for_root)
{
	bool iommu = have_iommu();
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	uint32_t *handle;
	int sv[2], fd;
	pid_t pid;

	handle = mmap(NULL, NM_4K, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(handle != MAP_FAILED);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[1]);
		nm_become_ok(NM_UID_NOBODY, 64 * NM_MiB);
		fd = nm_open();
		nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
		check_visibility(&a.buf, iommu, iommu, "uid 65534's ALLOC");
		*handle = a.handle;
		nm_assert_ok(nm_send_fd(sv[0], fd));
		_exit(0);
	}
	close(sv[0]);
	/* the file's buffers are uid 65534's, checked against this
	 * process's limit: root's CAP_IPC_LOCK is not the opener's */
	nm_assert_ok(nm_set_memlock(64 * NM_MiB));
	fd = nm_recv_fd(sv[1]);
	ck_assert_msg(fd >= 0, "receive the file: %s", nm_retname(fd));
	nm_wait_ok(pid, "uid 65534 passing its file");
	close(sv[1]);
	nm_assert_ok(nm_query(fd, *handle, &q));
	check_visibility(&q, iommu, iommu,
			 "root's QUERY in a file uid 65534 opened");
	check_file(fd, iommu, iommu, "root in a file uid 65534 opened");
	nm_free_ok(fd, *handle);
	close(fd);
	munmap(handle, NM_4K);
}
END_TEST

/* ---------------------------------------------------------------- */

/* GET_INFO's global fields, as uid 65534 sees them, while root holds
 * buffers: the same as root's view; client_* are the caller's file's. */
START_TEST(global_totals_visible_to_everyone)
{
	struct nm_counters mine, *theirs;
	struct npu_mem_alloc a, b;
	int fd = nm_open();
	pid_t pid;

	nm_alloc_ok(fd, 6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	nm_alloc_ok(fd, 5 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &b);
	theirs = mmap(NULL, sizeof(*theirs), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(theirs != MAP_FAILED);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int own;

		close(fd);
		nm_become_ok(NM_UID_NOBODY, 64 * NM_MiB);
		own = nm_open();
		nm_counters(own, theirs);
		_exit(0);
	}
	nm_wait_ok(pid, "uid 65534 reading GET_INFO");
	nm_counters(fd, &mine);
	nm_assert_global_eq(&mine, theirs);
	ck_assert_uint_ge(theirs->allocated_bytes, a.buf.size + b.buf.size);
	ck_assert_uint_ge(theirs->buffers, 2);
	ck_assert_uint_eq(theirs->client_buffers, 0);
	ck_assert_uint_eq(theirs->client_bytes, 0);
	ck_assert_uint_eq(mine.client_buffers, 2);
	ck_assert_uint_eq(mine.client_bytes, a.buf.size + b.buf.size);
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, b.handle);
	munmap(theirs, sizeof(*theirs));
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("visibility");

	nm_require_device();
	nm_add(s, shown_to_root, 60);
	nm_add(s, hidden_without_cap_sys_admin, 60);
	nm_add(s, hidden_from_unprivileged_user, 60);
	nm_add(s, root_opened_file_stays_visible, 60);
	nm_add(s, unprivileged_file_stays_hidden_for_root, 60);
	nm_add(s, global_totals_visible_to_everyone, 60);
	return nm_run_open_to_all(s);
}
