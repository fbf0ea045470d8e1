// SPDX-License-Identifier: GPL-2.0-only
/*
 * content_zero: every byte of a new buffer reads 0, for each policy, over the
 * whole rounded size; also when its pages were just used by an earlier
 * buffer that was filled with a pattern and freed (before or after munmap),
 * and when they held another process's data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_util.h"

static void assert_zero(const struct npu_mem_alloc *a, const uint8_t *p,
			const char *what)
{
	size_t nz = nm_nonzero(p, a->buf.size);

	ck_assert_msg(nz == SIZE_MAX, "%s: %s buffer of %llu bytes has byte "
		      "%#x at offset %zu (chunk %zu)", what,
		      nm_policy_name(a->buf.policy),
		      (unsigned long long)a->buf.size, p[nz], nz,
		      nz / (size_t)(a->buf.policy == NPU_MEM_POLICY_NORMAL_ONLY ?
				    NM_4K : NM_2M));
}

static void zero_fresh(uint64_t size, uint32_t policy)
{
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p;

	nm_alloc_ok(fd, size, policy, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ);
	assert_zero(&a, p, "fresh");
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}

START_TEST(zero_normal_only)
{
	zero_fresh(32 * NM_MiB + 5, NPU_MEM_POLICY_NORMAL_ONLY);
	zero_fresh(1, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(zero_huge_only)
{
	zero_fresh(32 * NM_MiB - 5, NPU_MEM_POLICY_HUGE_ONLY);
	zero_fresh(1, NPU_MEM_POLICY_HUGE_ONLY);	/* the rounded tail */
}
END_TEST

START_TEST(zero_huge_first)
{
	zero_fresh(33 * NM_MiB + 3 * NM_4K + 1, NPU_MEM_POLICY_HUGE_FIRST);
	zero_fresh(NM_4K, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(zero_huge1g_only)
{
	struct npu_mem_alloc a;
	int fd = nm_open(), r;
	uint8_t *p;

	r = nm_alloc(fd, NM_1G, NPU_MEM_POLICY_HUGE1G_ONLY, 0, &a);
	if (r) {
		ck_assert_msg(r == -ENOMEM || r == -EOPNOTSUPP,
			      "HUGE1G_ONLY: %s", nm_retname(r));
		close(fd);
		nm_skip("HUGE1G_ONLY not available here (%s): no 1 GiB "
			"buffer to check", nm_retname(r));
	}
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	assert_zero(&a, p, "fresh");
	memset(p, 0x5a, a.buf.size);
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	r = nm_alloc(fd, NM_1G, NPU_MEM_POLICY_HUGE1G_ONLY, 0, &a);
	if (!r) {
		p = nm_map_ok(fd, &a, PROT_READ);
		assert_zero(&a, p, "reused");
		munmap(p, a.buf.size);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

/*
 * Fill, free, allocate again (the allocator hands recently freed pages out
 * first): the new buffer is zero.  free_first: FREE while still mapped,
 * the pages go back at munmap.
 */
static void zero_reuse(uint64_t size, uint32_t policy, bool free_first)
{
	int fd = nm_open();

	for (int round = 0; round < 6; round++) {
		struct npu_mem_alloc a;
		uint8_t *p;

		nm_alloc_ok(fd, size, policy, 0, &a);
		p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		assert_zero(&a, p, round ? "reused" : "fresh");
		if (round % 2)
			memset(p, 0xff, a.buf.size);
		else
			nm_fill(p, a.buf.size, round + 1);
		if (free_first) {
			nm_free_ok(fd, a.handle);
			munmap(p, a.buf.size);
		} else {
			munmap(p, a.buf.size);
			nm_free_ok(fd, a.handle);
		}
	}
	close(fd);
}

START_TEST(zero_after_reuse_normal_only)
{
	zero_reuse(16 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, false);
}
END_TEST

START_TEST(zero_after_reuse_huge_only)
{
	zero_reuse(16 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, false);
}
END_TEST

START_TEST(zero_after_reuse_huge_first)
{
	zero_reuse(16 * NM_MiB + 5 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST, false);
}
END_TEST

START_TEST(zero_after_reuse_freed_while_mapped)
{
	zero_reuse(8 * NM_MiB + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, true);
	zero_reuse(4 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
}
END_TEST

START_TEST(zero_after_reuse_across_policies)
{
	/* A huge buffer's chunks, freed, are handed out as 4 KiB pages and
	 * the other way round. */
	int fd = nm_open();
	static const uint32_t order[] = {
		NPU_MEM_POLICY_HUGE_ONLY, NPU_MEM_POLICY_NORMAL_ONLY,
		NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_POLICY_NORMAL_ONLY,
		NPU_MEM_POLICY_HUGE_ONLY,
	};

	for (size_t i = 0; i < NM_ARRAY_SIZE(order); i++) {
		struct npu_mem_alloc a;
		uint8_t *p;

		nm_alloc_ok(fd, 8 * NM_MiB, order[i], 0, &a);
		p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		assert_zero(&a, p, "reused across policies");
		memset(p, 0xa5, a.buf.size);
		munmap(p, a.buf.size);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

START_TEST(zero_after_other_process_memory)
{
	/* Another process's anonymous memory, full of a pattern, is freed at
	 * its exit; buffers allocated right after must not show it. */
	const size_t len = 96 * NM_MiB;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				  -1, 0);

		if (m == MAP_FAILED)
			_exit(2);
		memset(m, 0xc3, len);
		_exit(0);
	}
	nm_wait_ok(pid, "memory filler");
	zero_fresh(32 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY);
	zero_fresh(32 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST);
	zero_fresh(32 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("content_zero");

	nm_add(s, zero_normal_only, 120);
	nm_add(s, zero_huge_only, 120);
	nm_add(s, zero_huge_first, 120);
	nm_add(s, zero_huge1g_only, 300);
	nm_add(s, zero_after_reuse_normal_only, 120);
	nm_add(s, zero_after_reuse_huge_only, 120);
	nm_add(s, zero_after_reuse_huge_first, 120);
	nm_add(s, zero_after_reuse_freed_while_mapped, 120);
	nm_add(s, zero_after_reuse_across_policies, 120);
	nm_add(s, zero_after_other_process_memory, 120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
