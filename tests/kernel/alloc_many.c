// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_many: 100,000 live small buffers in one open file (NPU_MEM_MANY,
 * default 100000): every ALLOC works, handles are unique and never 0, QUERY
 * finds any of them, the counters say 100,000, and
 *  - close() frees them all (counters back to the start values);
 *  - or FREE of each, in a scattered order, does (NPU_MEM_MANY_FREE
 *    buffers, default 20000, to keep the run short under TCG).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_util.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t gcd(size_t a, size_t b)
{
	while (b) {
		size_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static uint32_t *alloc_all(int fd, size_t n, struct npu_mem_buffer *sample)
{
	uint32_t *h = calloc(n, sizeof(*h)), *sorted;
	struct nm_counters before, after;
	struct npu_mem_alloc a;
	double t0 = nm_now();

	ck_assert(h);
	nm_counters(fd, &before);
	for (size_t i = 0; i < n; i++) {
		int r = nm_alloc(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);

		NM_REQUIRE(r == 0, "ALLOC #%zu of %zu: %s", i, n,
			   nm_retname(r));
		NM_REQUIRE(a.handle != 0, "ALLOC #%zu: handle 0", i);
		h[i] = a.handle;
		if (i == n / 2)
			*sample = a.buf;
	}
	printf("%zu ALLOCs in %.2f s\n", n, nm_now() - t0);
	nm_counters(fd, &after);
	ck_assert_uint_eq(after.client_buffers, before.client_buffers + n);
	ck_assert_uint_eq(after.client_bytes, before.client_bytes + n * NM_4K);
	ck_assert_uint_eq(after.buffers, before.buffers + n);
	ck_assert_uint_eq(after.normal_pages, before.normal_pages + n);
	ck_assert_uint_eq(after.allocated_bytes,
			  before.allocated_bytes + n * NM_4K);
	sorted = malloc(n * sizeof(*sorted));
	ck_assert(sorted);
	memcpy(sorted, h, n * sizeof(*h));
	qsort(sorted, n, sizeof(*sorted), cmp_u32);
	for (size_t i = 1; i < n; i++)
		NM_REQUIRE(sorted[i] != sorted[i - 1],
			   "handle %u given out twice", sorted[i]);
	free(sorted);
	/* lookups anywhere in the table */
	for (size_t i = 0; i < n; i += n / 97 + 1) {
		struct npu_mem_buffer q;

		nm_assert_ok(nm_query(fd, h[i], &q));
		ck_assert_uint_eq(q.size, NM_4K);
	}
	{
		struct npu_mem_buffer q;

		nm_assert_ok(nm_query(fd, h[n / 2], &q));
		nm_assert_buf_eq(sample, &q);
	}
	return h;
}

START_TEST(many_freed_by_close)
{
	size_t n = nm_env_u64("NPU_MEM_MANY", 100000);
	struct nm_counters start;
	struct npu_mem_buffer sample;
	int obs = nm_open(), fd = nm_open();
	uint32_t *h;
	double t0;

	nm_counters(obs, &start);
	h = alloc_all(fd, n, &sample);
	/* one of them is usable as a buffer */
	{
		uint8_t *p = nm_mmap(fd, sample.mmap_offset, NM_4K,
				     PROT_READ | PROT_WRITE);

		ck_assert(p != MAP_FAILED);
		ck_assert_uint_eq(nm_nonzero(p, NM_4K), SIZE_MAX);
		p[0] = 1;
		munmap(p, NM_4K);
	}
	t0 = nm_now();
	close(fd);
	printf("close of %zu buffers: %.2f s\n", n, nm_now() - t0);
	nm_assert_counters_now(obs, &start);
	free(h);
	close(obs);
}
END_TEST

START_TEST(many_freed_one_by_one)
{
	size_t n = nm_env_u64("NPU_MEM_MANY_FREE", 20000);
	struct nm_counters start, mid;
	struct npu_mem_buffer sample;
	int fd = nm_open();
	uint32_t *h;
	size_t step = 7919;	/* coprime with n: visits every index once */
	double t0;

	nm_counters(fd, &start);
	h = alloc_all(fd, n, &sample);
	while (gcd(step, n) != 1)
		step++;
	t0 = nm_now();
	for (size_t k = 0, i = 0; k < n; k++, i = (i + step) % n) {
		nm_free_ok(fd, h[i]);
		if (k == n / 2) {
			nm_counters(fd, &mid);
			ck_assert_uint_eq(mid.client_buffers,
					  start.client_buffers + n - k - 1);
		}
	}
	printf("%zu FREEs in %.2f s\n", n, nm_now() - t0);
	nm_assert_counters_now(fd, &start);
	/* all gone */
	nm_assert_ret(nm_free(fd, h[0]), -ENOENT);
	nm_assert_ret(nm_free(fd, h[n - 1]), -ENOENT);
	free(h);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("alloc_many");

	nm_add(s, many_freed_by_close, 600);
	nm_add(s, many_freed_one_by_one, 600);
	return nm_run(s, NM_NEEDS_DEVICE);
}
