// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_policy: what ALLOC gives for each page policy.
 *  - NORMAL_ONLY: size rounded up to 4 KiB, all 4 KiB pages;
 *  - HUGE_ONLY: size rounded up to 2 MiB, all 2 MiB chunks;
 *  - HUGE_FIRST: size rounded up to 4 KiB; every full 2 MiB piece is a 2 MiB
 *    chunk (when 2 MiB pages can be had), the tail below 2 MiB 4 KiB pages;
 *    huge*2M + normal*4K == size always;
 *  - HUGE1G_ONLY: 1 GiB pages, or ENOMEM/EOPNOTSUPP (consistent with
 *    page_sizes), counters unchanged on failure;
 *  - handle never 0, QUERY == ALLOC, policy and READONLY reported, dev_addr
 *    non-zero and page aligned for root, device ranges (of DEV_CONTIG
 *    buffers) and mmap offset ranges of live buffers disjoint, a single
 *    page or chunk always DEV_CONTIG, every buffer DEV_CONTIG under an
 *    IOMMU;
 *  - DEV_CONTIG exactly when dev_segments == 1 (its own test);
 *  - opened without CAP_SYS_ADMIN, a physical dev_addr and the layout are
 *    withheld (DEV_HIDDEN; dev_addr 0, dev_segments 0, DEV_CONTIG clear);
 *    visibility.c covers who decides (the opener) in full.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "nmtest_util.h"

static void check_one(int fd, uint64_t req, uint32_t policy, uint32_t flags,
		      struct npu_mem_alloc *a)
{
	struct npu_mem_buffer q;

	nm_alloc_ok(fd, req, policy, flags, a);
	nm_assert_buffer_sane(req, policy, flags, &a->buf);
	nm_assert_ok(nm_query(fd, a->handle, &q));
	nm_assert_buf_eq(&a->buf, &q);
}

static void alloc_free_check(uint64_t req, uint32_t policy)
{
	struct nm_counters start, now;
	struct npu_mem_alloc a;
	int fd = nm_open();

	nm_counters(fd, &start);
	check_one(fd, req, policy, 0, &a);
	now = start;
	nm_counters_add(&now, &a.buf, +1, true);
	nm_assert_counters_now(fd, &now);
	nm_free_ok(fd, a.handle);
	nm_assert_counters_now(fd, &start);
	close(fd);
}

START_TEST(normal_only_rounding)
{
	static const uint64_t sizes[] = { 1, 100, 4095, 4096, 4097, 8191,
					  NM_2M - 1, NM_2M, NM_2M + 1,
					  3 * NM_MiB, 5 * NM_MiB + 1 };

	for (size_t i = 0; i < NM_ARRAY_SIZE(sizes); i++)
		alloc_free_check(sizes[i], NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(huge_only_rounding)
{
	static const uint64_t sizes[] = { 1, 4096, NM_2M - 1, NM_2M,
					  NM_2M + 1, 5 * NM_MiB,
					  10 * NM_MiB, 16 * NM_MiB - 1 };

	for (size_t i = 0; i < NM_ARRAY_SIZE(sizes); i++)
		alloc_free_check(sizes[i], NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(huge_first_split)
{
	static const uint64_t sizes[] = { 1, 4096, 4097, NM_2M - NM_4K,
					  NM_2M - 1, NM_2M, NM_2M + 1,
					  5 * NM_MiB, 5 * NM_MiB + 1,
					  8 * NM_MiB + 3 * NM_4K,
					  16 * NM_MiB };
	int fd = nm_open();

	for (size_t i = 0; i < NM_ARRAY_SIZE(sizes); i++) {
		uint64_t size = NM_ALIGN(sizes[i], NM_4K);
		uint64_t want_huge = size / NM_2M;
		uint64_t want_normal = (size % NM_2M) / NM_4K;
		struct npu_mem_alloc a, h;

		alloc_free_check(sizes[i], NPU_MEM_POLICY_HUGE_FIRST);
		check_one(fd, sizes[i], NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
		if (a.buf.huge_pages != want_huge ||
		    a.buf.normal_pages != want_normal) {
			/* Only acceptable when 2 MiB pages really are
			 * unavailable right now. */
			int r = nm_alloc(fd, NM_2M, NPU_MEM_POLICY_HUGE_ONLY,
					 0, &h);

			if (!r)
				nm_free_ok(fd, h.handle);
			ck_assert_msg(r == -ENOMEM,
				      "HUGE_FIRST %llu: %u huge + %u normal, "
				      "want %llu + %llu, and HUGE_ONLY 2 MiB "
				      "gave %s (so 2 MiB pages were available)",
				      (unsigned long long)sizes[i],
				      a.buf.huge_pages, a.buf.normal_pages,
				      (unsigned long long)want_huge,
				      (unsigned long long)want_normal,
				      nm_retname(r));
			printf("note: HUGE_FIRST %llu fell back (no 2 MiB "
			       "pages free)\n", (unsigned long long)sizes[i]);
		}
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

START_TEST(huge1g_only)
{
	struct nm_counters start, now;
	struct npu_mem_info info;
	struct npu_mem_alloc a;
	int fd = nm_open(), r;

	nm_get_info_ok(fd, &info);
	nm_counters(fd, &start);
	r = nm_alloc(fd, 1, NPU_MEM_POLICY_HUGE1G_ONLY, 0, &a);
	printf("HUGE1G_ONLY 1 byte: %s (page_sizes %#llx, free_ram %llu)\n",
	       nm_retname(r), (unsigned long long)info.page_sizes,
	       (unsigned long long)info.free_ram);
	ck_assert_msg(r == 0 || r == -ENOMEM || r == -EOPNOTSUPP,
		      "HUGE1G_ONLY: %s (want success, ENOMEM or EOPNOTSUPP)",
		      nm_retname(r));
	if (r == -EOPNOTSUPP)
		ck_assert_msg(!(info.page_sizes & NPU_MEM_PAGE_1G),
			      "EOPNOTSUPP although page_sizes has 1G");
	if (r == 0) {
		ck_assert_msg(info.page_sizes & NPU_MEM_PAGE_1G,
			      "1 GiB buffer although page_sizes lacks 1G");
		nm_assert_buffer_sane(1, NPU_MEM_POLICY_HUGE1G_ONLY, 0, &a.buf);
		ck_assert_uint_eq(a.buf.giant_pages, 1);
		ck_assert_uint_eq(a.buf.size, NM_1G);
		now = start;
		nm_counters_add(&now, &a.buf, +1, true);
		nm_assert_counters_now(fd, &now);
		nm_free_ok(fd, a.handle);
	} else if (info.page_sizes & NPU_MEM_PAGE_1G) {
		ck_assert_int_eq(r, -ENOMEM);
	}
	nm_assert_counters_now(fd, &start);
	close(fd);
}
END_TEST

START_TEST(readonly_reported)
{
	for (uint32_t p = 0; p < 3; p++) {
		struct npu_mem_alloc a;
		int fd = nm_open();

		check_one(fd, NM_4K, p, NPU_MEM_ALLOC_READONLY, &a);
		ck_assert(a.buf.flags & NPU_MEM_BUF_READONLY);
		nm_free_ok(fd, a.handle);
		check_one(fd, NM_4K, p, 0, &a);
		ck_assert(!(a.buf.flags & NPU_MEM_BUF_READONLY));
		nm_free_ok(fd, a.handle);
		close(fd);
	}
}
END_TEST

struct range {
	uint64_t start, len;
	uint32_t handle;
};

static void assert_disjoint(const char *what, struct range *r, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			ck_assert_msg(r[i].start + r[i].len <= r[j].start ||
				      r[j].start + r[j].len <= r[i].start,
				      "%s of handles %u [%#llx+%#llx) and %u "
				      "[%#llx+%#llx) overlap", what,
				      r[i].handle,
				      (unsigned long long)r[i].start,
				      (unsigned long long)r[i].len,
				      r[j].handle,
				      (unsigned long long)r[j].start,
				      (unsigned long long)r[j].len);
}

START_TEST(dev_addr_and_offsets)
{
	enum { N = 48 };
	struct npu_mem_alloc a[N];
	struct range dev[N], off[N];
	struct npu_mem_info info;
	int fd = nm_open(), nd = 0;

	nm_get_info_ok(fd, &info);
	for (int i = 0; i < N; i++) {
		uint32_t policy = i % 3 == 0 ? NPU_MEM_POLICY_NORMAL_ONLY :
				  i % 3 == 1 ? NPU_MEM_POLICY_HUGE_ONLY :
					       NPU_MEM_POLICY_HUGE_FIRST;
		uint64_t size = (uint64_t)(i + 1) * 37 * NM_4K + i;

		check_one(fd, size, policy, 0, &a[i]);
		ck_assert_msg(!(a[i].buf.flags & NPU_MEM_BUF_DEV_HIDDEN),
			      "dev_addr hidden from root");
		ck_assert_uint_ne(a[i].buf.dev_addr, 0);
		if (info.dev_flags & NPU_MEM_DEV_IOMMU)
			ck_assert_msg(a[i].buf.flags & NPU_MEM_BUF_DEV_CONTIG,
				      "under an IOMMU a buffer must be one "
				      "device range; %u segments, flags %#x",
				      a[i].buf.dev_segments, a[i].buf.flags);
		/*
		 * A bounced chunk is cut to the bounce pool's largest mapping
		 * (256 KiB for swiotlb), whose slots need not be adjacent.
		 */
		if (a[i].buf.normal_pages + a[i].buf.huge_pages == 1 &&
		    !(a[i].buf.flags & NPU_MEM_BUF_BOUNCED))
			ck_assert_msg(a[i].buf.flags & NPU_MEM_BUF_DEV_CONTIG,
				      "one page or chunk is not DEV_CONTIG");
		if (a[i].buf.huge_pages == 1 && !a[i].buf.normal_pages &&
		    (a[i].buf.flags & NPU_MEM_BUF_BOUNCED))
			ck_assert_msg(a[i].buf.dev_segments >= 1 &&
				      a[i].buf.dev_segments <= NM_2M / (256 << 10),
				      "bounced 2 MiB chunk in %u device ranges",
				      a[i].buf.dev_segments);
		if (a[i].buf.flags & NPU_MEM_BUF_DEV_CONTIG)
			dev[nd++] = (struct range){ a[i].buf.dev_addr,
						    a[i].buf.size,
						    a[i].handle };
		off[i] = (struct range){ a[i].buf.mmap_offset, a[i].buf.size,
					 a[i].handle };
	}
	assert_disjoint("device ranges", dev, nd);
	assert_disjoint("mmap offset ranges", off, N);
	printf("%d of %d buffers device-contiguous (dev_flags %#x)\n", nd, N,
	       info.dev_flags);
	for (int i = 0; i < N; i++)
		nm_free_ok(fd, a[i].handle);
	close(fd);
}
END_TEST

START_TEST(dev_contig_iff_one_segment)
{
	/* "dev_segments: contiguous device address ranges the buffer
	 * occupies"; DEV_CONTIG: "one contiguous device address range".
	 * So DEV_CONTIG is set exactly when dev_segments == 1. */
	int fd = nm_open();

	for (int i = 0; i < 60; i++) {
		struct npu_mem_alloc a;
		uint32_t policy = i % 3 == 0 ? NPU_MEM_POLICY_NORMAL_ONLY :
				  i % 3 == 1 ? NPU_MEM_POLICY_HUGE_ONLY :
					       NPU_MEM_POLICY_HUGE_FIRST;

		check_one(fd, (uint64_t)(i + 1) * 29 * NM_4K, policy, 0, &a);
		nm_assert_dev_contig(&a.buf);
		nm_free_ok(fd, a.handle);
	}
	/* many-chunk buffers: physically adjacent chunks are likely, which is
	 * where "abutting segments" and "one segment" can differ */
	for (int i = 0; i < 16; i++) {
		struct npu_mem_alloc a;
		uint32_t policy = i % 2 ? NPU_MEM_POLICY_HUGE_ONLY :
					  NPU_MEM_POLICY_HUGE_FIRST;

		check_one(fd, 32 * NM_MiB + (i % 2 ? 0 : 3 * NM_4K), policy, 0,
			  &a);
		printf("%s 32 MiB: %u segments, flags %#x\n",
		       nm_policy_name(policy), a.buf.dev_segments,
		       a.buf.flags);
		nm_assert_dev_contig(&a.buf);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

START_TEST(dev_addr_hidden_without_cap_sys_admin)
{
	struct npu_mem_info info;
	int fd = nm_open();
	pid_t pid;

	nm_get_info_ok(fd, &info);
	close(fd);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct npu_mem_alloc a;
		struct npu_mem_buffer q;
		bool iommu = info.dev_flags & NPU_MEM_DEV_IOMMU;

		/* still uid 0 (owner of the node), minus CAP_SYS_ADMIN */
		nm_assert_ok(nm_drop_caps(1ULL << CAP_SYS_ADMIN));
		fd = nm_open();
		for (uint32_t p = 0; p < 3; p++) {
			nm_alloc_ok(fd, 3 * NM_4K, p, 0, &a);
			nm_assert_buffer_sane(3 * NM_4K, p, 0, &a.buf);
			nm_assert_ok(nm_query(fd, a.handle, &q));
			nm_assert_buf_eq(&a.buf, &q);
			if (iommu) {
				/* an IOVA is not a physical address */
				ck_assert(!(a.buf.flags &
					    NPU_MEM_BUF_DEV_HIDDEN));
				ck_assert_uint_ne(a.buf.dev_addr, 0);
			} else {
				ck_assert_msg(a.buf.flags &
					      NPU_MEM_BUF_DEV_HIDDEN,
					      "physical dev_addr %#llx shown "
					      "without CAP_SYS_ADMIN",
					      (unsigned long long)
					      a.buf.dev_addr);
				ck_assert_uint_eq(a.buf.dev_addr, 0);
				/* the layout is physical too */
				ck_assert_uint_eq(a.buf.dev_segments, 0);
				ck_assert(!(a.buf.flags &
					    NPU_MEM_BUF_DEV_CONTIG));
			}
			nm_free_ok(fd, a.handle);
		}
		close(fd);
		_exit(0);
	}
	nm_wait_ok(pid, "without CAP_SYS_ADMIN");
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("alloc_policy");

	nm_add(s, normal_only_rounding, 60);
	nm_add(s, huge_only_rounding, 60);
	nm_add(s, huge_first_split, 60);
	nm_add(s, huge1g_only, 180);
	nm_add(s, readonly_reported, 30);
	nm_add(s, dev_addr_and_offsets, 60);
	nm_add(s, dev_contig_iff_one_segment, 60);
	nm_add(s, dev_addr_hidden_without_cap_sys_admin, 30);
	return nm_run(s, NM_NEEDS_DEVICE);
}
