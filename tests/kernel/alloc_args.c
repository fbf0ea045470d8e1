// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_args: argument validation of ALLOC, FREE and QUERY, one rule per
 * test, exact errno each time, and after each refused call an unrelated
 * live buffer (contents, QUERY answer) and the counters are unchanged:
 *  ALLOC  size 0 -> EINVAL; sizes that overflow when rounded -> E2BIG;
 *         size > max_alloc -> E2BIG; unknown policy -> EINVAL; flag bits
 *         1..31 -> EINVAL; pad -> EINVAL; output fields are not inputs;
 *         handles are never 0 and unique among live buffers.
 *  FREE   handle 0, unknown, freed (double free), another file's -> ENOENT;
 *         flags -> EINVAL (and the buffer stays).
 *  QUERY  same handle rules; flags -> EINVAL; answers exactly what ALLOC
 *         returned, every output field written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_fixture.h"

static const uint32_t policies[] = {
	NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_POLICY_HUGE_ONLY,
	NPU_MEM_POLICY_NORMAL_ONLY, NPU_MEM_POLICY_HUGE1G_ONLY,
};

/* ALLOC with every field given; expect want, then nothing disturbed. */
#define ALLOC_FAILS(c, sz, pol, fl, pd, want) do {			\
	struct npu_mem_alloc _a = { .size = (sz), .policy = (pol),	\
				    .flags = (fl), .device = (pd) };	\
	int _r = nm_ioctl((c)->fd, NPU_MEM_IOCTL_ALLOC, &_a);		\
	ck_assert_msg(_r == (want), "ALLOC(size %#llx, policy %#x, "	\
		      "flags %#x, device %#x): expected %s, got %s",	\
		      (unsigned long long)(sz), (unsigned)(pol),	\
		      (unsigned)(fl), (unsigned)(pd), nm_retname(want),	\
		      nm_retname(_r));					\
	NM_SENTINEL_CHECK(&(c)->s);					\
} while (0)

START_TEST(alloc_size_zero)
{
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (size_t p = 0; p < NM_ARRAY_SIZE(policies); p++) {
		ALLOC_FAILS(&c, 0, policies[p], 0, 0, -EINVAL);
		ALLOC_FAILS(&c, 0, policies[p], NPU_MEM_ALLOC_READONLY, 0,
			    -EINVAL);
	}
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(alloc_size_overflow)
{
	static const uint64_t sizes[] = {
		UINT64_MAX, UINT64_MAX - 4095, UINT64_MAX - 4096 + 1,
		UINT64_MAX - NM_2M + 2, UINT64_MAX - NM_1G + 2,
		1ULL << 63, (1ULL << 63) + 1, 1ULL << 52,
	};
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (size_t p = 0; p < NM_ARRAY_SIZE(policies); p++)
		for (size_t i = 0; i < NM_ARRAY_SIZE(sizes); i++)
			ALLOC_FAILS(&c, sizes[i], policies[p], 0, 0, -E2BIG);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(alloc_above_max_alloc)
{
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	printf("max_alloc %llu\n", (unsigned long long)c.info.max_alloc);
	ck_assert_uint_lt(c.info.max_alloc, UINT64_MAX / 4);
	for (size_t p = 0; p < NM_ARRAY_SIZE(policies); p++) {
		const uint64_t sizes[] = {
			c.info.max_alloc + 1, c.info.max_alloc + NM_4K,
			c.info.max_alloc + NM_2M, 2 * c.info.max_alloc,
		};

		for (size_t i = 0; i < NM_ARRAY_SIZE(sizes); i++)
			ALLOC_FAILS(&c, sizes[i], policies[p], 0, 0, -E2BIG);
	}
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(alloc_bad_policy)
{
	static const uint32_t bad[] = { NPU_MEM_POLICY_COUNT, 4, 5, 0x100,
					0x7fffffff, 0x80000000, 0xfffffffe,
					0xffffffff };
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		ALLOC_FAILS(&c, NM_4K, bad[i], 0, 0, -EINVAL);
		ALLOC_FAILS(&c, NM_2M, bad[i], 0, 0, -EINVAL);
	}
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(alloc_bad_flags)
{
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (int bit = 1; bit < 32; bit++) {
		ALLOC_FAILS(&c, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 1U << bit,
			    0, -EINVAL);
		ALLOC_FAILS(&c, NM_4K, NPU_MEM_POLICY_HUGE_FIRST,
			    NPU_MEM_ALLOC_READONLY | (1U << bit), 0, -EINVAL);
	}
	ALLOC_FAILS(&c, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0xffffffff, 0,
		    -EINVAL);
	ALLOC_FAILS(&c, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
		    ~NPU_MEM_ALLOC_VALID, 0, -EINVAL);
	nm_ctx_fini(&c);
}
END_TEST

/* The device index, pad before ABI 1.3: one past the last NPU and beyond. */
START_TEST(alloc_pad_nonzero)
{
	static const uint32_t pads[] = { 1, 0x80, 0x10000, 0x80000000,
					 0xffffffff };
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(pads); i++)
		for (size_t p = 0; p < 3; p++)
			ALLOC_FAILS(&c, NM_4K, policies[p], 0,
				    pads[i] < c.info.device_count ?
				    c.info.device_count : pads[i], -EINVAL);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(alloc_valid_flags_work)
{
	/* The control: flags 0 and READONLY are accepted. */
	struct npu_mem_alloc a;
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	nm_alloc_ok(c.fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
		    NPU_MEM_ALLOC_READONLY, &a);
	nm_assert_buffer_sane(NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
			      NPU_MEM_ALLOC_READONLY, &a.buf);
	nm_free_ok(c.fd, a.handle);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(alloc_output_fields_not_inputs)
{
	/* handle and buf are outputs: garbage there is overwritten, not
	 * refused. */
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	memset(&a, 0xff, sizeof(a));
	a.size = 5 * NM_4K;
	a.policy = NPU_MEM_POLICY_NORMAL_ONLY;
	a.flags = 0;
	a.device = 0;
	nm_assert_ok(nm_ioctl(c.fd, NPU_MEM_IOCTL_ALLOC, &a));
	ck_assert_uint_ne(a.handle, 0);
	ck_assert_uint_ne(a.handle, 0xffffffff);
	nm_assert_buffer_sane(5 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a.buf);
	ck_assert_uint_eq(a.size, 5 * NM_4K);	/* inputs are not rewritten */
	ck_assert_uint_eq(a.device, 0);
	nm_assert_ok(nm_query(c.fd, a.handle, &q));
	nm_assert_buf_eq(&a.buf, &q);
	nm_free_ok(c.fd, a.handle);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(handles_nonzero_unique)
{
	enum { N = 2000 };
	static uint32_t h[N];
	struct npu_mem_alloc a;
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			if (round && i % 2)
				continue;	/* still live from before */
			h[i] = nm_alloc_ok(c.fd, NM_4K,
					   NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
		}
		/* all live handles distinct (and distinct from the
		 * sentinel's); nm_alloc_ok checked they are not 0 */
		for (int i = 0; i < N; i++)
			NM_REQUIRE(h[i] != c.s.alloc[0].handle &&
				   h[i] != c.s.alloc[1].handle,
				   "handle %u is also a sentinel's", h[i]);
		{
			static uint32_t sorted[N];

			memcpy(sorted, h, sizeof(h));
			qsort(sorted, N, sizeof(sorted[0]), cmp_u32);
			for (int i = 1; i < N; i++)
				NM_REQUIRE(sorted[i] != sorted[i - 1],
					   "handle %u given out twice",
					   sorted[i]);
		}
		/* free the even ones, keep the odd ones for the next round */
		for (int i = 0; i < N; i += 2)
			nm_free_ok(c.fd, h[i]);
	}
	for (int i = 1; i < N; i += 2)
		nm_free_ok(c.fd, h[i]);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

/* --- FREE ------------------------------------------------------------ */

START_TEST(free_handle_zero)
{
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	nm_assert_ret(nm_free(c.fd, 0), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(free_unknown_handle)
{
	static const uint32_t bad[] = { 0xdeadbeef, 0xffffffff, 0x7fffffff,
					0x80000000, 1000000 };
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		if (bad[i] == c.s.alloc[0].handle ||
		    bad[i] == c.s.alloc[1].handle)
			continue;
		nm_assert_ret(nm_free(c.fd, bad[i]), -ENOENT);
		NM_SENTINEL_CHECK(&c.s);
	}
	/* the handle after the newest one */
	nm_assert_ret(nm_free(c.fd, c.s.alloc[1].handle + 1), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(free_double)
{
	struct npu_mem_alloc a;
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	nm_alloc_ok(c.fd, NM_2M, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	nm_free_ok(c.fd, a.handle);
	NM_SENTINEL_CHECK(&c.s);
	nm_assert_ret(nm_free(c.fd, a.handle), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_assert_ret(nm_free(c.fd, a.handle), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(free_other_files_handle)
{
	struct npu_mem_alloc a[3], b;
	struct npu_mem_buffer q;
	struct nm_ctx c;
	int other = nm_open();

	nm_ctx_init(&c, 0);
	for (int i = 0; i < 3; i++)
		nm_alloc_ok(c.fd, (i + 1) * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
			    0, &a[i]);
	/* the other file has no buffers at all */
	for (int i = 0; i < 3; i++) {
		nm_assert_ret(nm_free(other, a[i].handle), -ENOENT);
		nm_assert_ret(nm_query(other, a[i].handle, &q), -ENOENT);
	}
	nm_assert_ret(nm_free(other, c.s.alloc[0].handle), -ENOENT);
	/* the other file has a buffer: handles that are only ours still
	 * fail there */
	nm_alloc_ok(other, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &b);
	for (int i = 0; i < 3; i++) {
		if (a[i].handle == b.handle)
			continue;
		nm_assert_ret(nm_free(other, a[i].handle), -ENOENT);
	}
	nm_free_ok(other, b.handle);
	close(other);
	/* ours are intact */
	for (int i = 0; i < 3; i++) {
		nm_assert_ok(nm_query(c.fd, a[i].handle, &q));
		nm_assert_buf_eq(&a[i].buf, &q);
		nm_free_ok(c.fd, a[i].handle);
	}
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(free_flags_nonzero)
{
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	nm_alloc_ok(c.fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_sentinel_resnap(&c.s);	/* a stays live throughout */
	for (int bit = 0; bit < 32; bit++) {
		struct npu_mem_free f = { .handle = a.handle,
					  .flags = 1U << bit };

		nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_FREE, &f), -EINVAL);
		nm_assert_ok(nm_query(c.fd, a.handle, &q));	/* still here */
		nm_assert_buf_eq(&a.buf, &q);
		NM_SENTINEL_CHECK(&c.s);
		/* and with an unknown handle: the flags are still wrong */
		f.handle = 0xdeadbeef;
		{
			int r = nm_ioctl(c.fd, NPU_MEM_IOCTL_FREE, &f);

			ck_assert_msg(r == -EINVAL || r == -ENOENT,
				      "FREE(unknown, flags %#x): %s", f.flags,
				      nm_retname(r));
		}
	}
	nm_free_ok(c.fd, a.handle);
	nm_ctx_fini(&c);
}
END_TEST

/* --- QUERY ----------------------------------------------------------- */

START_TEST(query_bad_handles)
{
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	struct nm_ctx c;
	int other = nm_open();

	nm_ctx_init(&c, 0);
	nm_assert_ret(nm_query(c.fd, 0, &q), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_assert_ret(nm_query(c.fd, 0xdeadbeef, &q), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_assert_ret(nm_query(c.fd, 0xffffffff, &q), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	nm_alloc_ok(c.fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_free_ok(c.fd, a.handle);
	nm_assert_ret(nm_query(c.fd, a.handle, &q), -ENOENT);	/* freed */
	NM_SENTINEL_CHECK(&c.s);
	nm_assert_ret(nm_query(other, c.s.alloc[0].handle, &q), -ENOENT);
	nm_assert_ret(nm_query(other, c.s.alloc[1].handle, &q), -ENOENT);
	NM_SENTINEL_CHECK(&c.s);
	close(other);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(query_flags_nonzero)
{
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (int bit = 0; bit < 32; bit++) {
		struct npu_mem_query q = { .handle = c.s.alloc[0].handle,
					   .flags = 1U << bit };

		nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_QUERY, &q), -EINVAL);
		NM_SENTINEL_CHECK(&c.s);
	}
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(query_equals_alloc)
{
	static const struct {
		uint64_t size;
		uint32_t policy, flags;
	} reqs[] = {
		{ 1, NPU_MEM_POLICY_NORMAL_ONLY, 0 },
		{ 3 * NM_MiB + 1, NPU_MEM_POLICY_NORMAL_ONLY,
		  NPU_MEM_ALLOC_READONLY },
		{ 1, NPU_MEM_POLICY_HUGE_ONLY, 0 },
		{ 6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, NPU_MEM_ALLOC_READONLY },
		{ 5 * NM_MiB + 3 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0 },
	};
	struct npu_mem_alloc a[NM_ARRAY_SIZE(reqs)];
	struct nm_ctx c;

	nm_ctx_init(&c, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(reqs); i++)
		nm_alloc_ok(c.fd, reqs[i].size, reqs[i].policy, reqs[i].flags,
			    &a[i]);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < NM_ARRAY_SIZE(reqs); i++) {
			struct npu_mem_query q;

			/* poisoned output: every field must be written */
			memset(&q, 0xff, sizeof(q));
			q.handle = a[i].handle;
			q.flags = 0;
			nm_assert_ok(nm_ioctl(c.fd, NPU_MEM_IOCTL_QUERY, &q));
			nm_assert_buf_eq(&a[i].buf, &q.buf);
			ck_assert_uint_eq(q.handle, a[i].handle);
		}
	}
	for (size_t i = 0; i < NM_ARRAY_SIZE(reqs); i++)
		nm_free_ok(c.fd, a[i].handle);
	NM_SENTINEL_CHECK(&c.s);
	nm_ctx_fini(&c);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("alloc_args");

	nm_add(s, alloc_size_zero, 30);
	nm_add(s, alloc_size_overflow, 30);
	nm_add(s, alloc_above_max_alloc, 30);
	nm_add(s, alloc_bad_policy, 30);
	nm_add(s, alloc_bad_flags, 30);
	nm_add(s, alloc_pad_nonzero, 30);
	nm_add(s, alloc_valid_flags_work, 30);
	nm_add(s, alloc_output_fields_not_inputs, 30);
	nm_add(s, handles_nonzero_unique, 120);
	nm_add(s, free_handle_zero, 30);
	nm_add(s, free_unknown_handle, 30);
	nm_add(s, free_double, 30);
	nm_add(s, free_other_files_handle, 30);
	nm_add(s, free_flags_nonzero, 30);
	nm_add(s, query_bad_handles, 30);
	nm_add(s, query_flags_nonzero, 30);
	nm_add(s, query_equals_alloc, 60);
	return nm_run(s, NM_NEEDS_DEVICE);
}
