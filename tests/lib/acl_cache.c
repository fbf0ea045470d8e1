// SPDX-License-Identifier: MIT
/*
 * The caching allocator with the driver (NPU_MEM_POOL_MAX=16M here):
 * a freed buffer is reused by the next allocation of its class without a
 * driver call, other classes are not; the cap holds; the pool is emptied
 * by the device's last reset and by aclFinalize; an allocation that fails
 * for lack of memory empties the pool and is retried once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acltest.h"
#include "acl/acl.h"

#define MiB ((size_t)1 << 20)
#define CAP (16 * MiB)

static uint64_t saved_max_bytes;

START_TEST(reuse_without_driver)
{
	struct acltest_counters c0, c1;
	void *p, *q;

	ck_assert_int_eq(aclrtSetDevice(0), 0);
	acltest_counters(&c0);
	ck_assert_int_eq(aclrtMalloc(&p, 10000, 2), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	acltest_counters(&c1);
	/* Kept: still a driver buffer. */
	ck_assert_uint_eq(c1.buffers, c0.buffers + 1);
	/* Same class (10000 and 12000 both round to 12 KiB): the same one. */
	ck_assert_int_eq(aclrtMallocCached(&q, 12000, 2), 0);
	ck_assert_ptr_eq(q, p);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers + 1);
	/* It is a live buffer again, to its new size. */
	ck_assert_int_eq(aclrtMemset(q, 12032, 0, 12032), 0);
	ck_assert_int_eq(aclrtMemset(q, 12033, 0, 12033),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(q), 0);
	/* A different class or policy is not served from it. */
	ck_assert_int_eq(aclrtMalloc(&q, 20000, 2), 0);
	ck_assert_ptr_ne(q, p);
	ck_assert_int_eq(aclrtFree(q), 0);
	ck_assert_int_eq(aclrtMalloc(&q, 10000, ACL_MEM_MALLOC_HUGE_ONLY), 0);
	ck_assert_ptr_ne(q, p);
	ck_assert_int_eq(aclrtFree(q), 0);
	/* Freed pointers stay invalid while pooled. */
	ck_assert_int_eq(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(p, 8, 0, 8), ACL_ERROR_RT_PARAM_INVALID);
	/* The last reset gives everything back. */
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
}
END_TEST

START_TEST(cap_holds)
{
	struct acltest_counters c0, c1;
	void *p[40];
	int i;

	ck_assert_int_eq(aclrtSetDevice(0), 0);
	acltest_counters(&c0);
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(aclrtMalloc(&p[i], MiB - 64, 2), 0);
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(aclrtFree(p[i]), 0);
	acltest_counters(&c1);
	/* Nothing live: what the driver still holds is the pool, <= cap. */
	ck_assert_uint_le(c1.allocated_bytes - c0.allocated_bytes, CAP);
	ck_assert_uint_ge(c1.allocated_bytes - c0.allocated_bytes, CAP - MiB);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
}
END_TEST

START_TEST(finalize_empties)
{
	struct acltest_counters c0, c1;
	void *p;

	acltest_counters(&c0);
	ck_assert_int_eq(aclInit(NULL), 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtMalloc(&p, 3 * MiB, 0), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	ck_assert_int_eq(aclFinalize(), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
}
END_TEST

START_TEST(oom_trims_and_retries)
{
	struct acltest_counters c0, c1;
	void *p, *q;

	ck_assert_int_eq(aclrtSetDevice(0), 0);
	acltest_counters(&c0);
	ck_assert_int_eq(acltest_set_max_bytes(c0.allocated_bytes + 12 * MiB,
					       NULL), 0);
	/* 8 MiB into the pool... */
	ck_assert_int_eq(aclrtMalloc(&p, 8 * MiB - 64, 2), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.allocated_bytes - c0.allocated_bytes, 8 * MiB);
	/* ...6 MiB more only fits once the pool gives it back. */
	ck_assert_int_eq(aclrtMalloc(&q, 6 * MiB - 64, 2), ACL_SUCCESS);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.allocated_bytes - c0.allocated_bytes, 6 * MiB);
	ck_assert_uint_eq(c1.buffers, c0.buffers + 1);
	ck_assert_int_eq(aclrtFree(q), 0);
	/* With the pool already empty, a real shortage is still reported. */
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtMalloc(&q, 14 * MiB, 2),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(acltest_set_max_bytes(saved_max_bytes, NULL), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

START_TEST(mem_info_counts_pool_as_free)
{
	struct acltest_counters c0;
	size_t f, t;
	void *p;

	/*
	 * Under a cap 64 MiB above what is allocated, "free" is the room
	 * under the cap (RAM is larger): exact, unlike the RAM's free count,
	 * which per-CPU page lists blur by megabytes.
	 */
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	acltest_counters(&c0);
	ck_assert_int_eq(acltest_set_max_bytes(c0.allocated_bytes + 64 * MiB,
					       NULL), 0);
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, &f, &t), 0);
	ck_assert_uint_eq(t, c0.allocated_bytes + 64 * MiB);
	ck_assert_uint_eq(f, 64 * MiB);
	ck_assert_int_eq(aclrtMalloc(&p, 8 * MiB - 64, 2), 0);
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, &f, &t), 0);
	ck_assert_uint_eq(f, 56 * MiB);
	ck_assert_int_eq(aclrtFree(p), 0);
	/* Pooled, but the library gives it back on demand: free again. */
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, &f, &t), 0);
	ck_assert_uint_eq(f, 64 * MiB);
	ck_assert_int_eq(aclrtGetMemInfo(ACL_MEM_HUGE, &f, &t), 0);
	ck_assert_uint_eq(f, 64 * MiB);
	ck_assert_int_eq(acltest_set_max_bytes(saved_max_bytes, NULL), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_cache");
	int ret;

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "16M", 1);
	if (acltest_get_max_bytes(&saved_max_bytes)) {
		printf("cannot read the module's max_bytes\n");
		return 1;
	}
	nm_add(s, reuse_without_driver, 30);
	nm_add(s, cap_holds, 60);
	nm_add(s, finalize_empties, 30);
	nm_add(s, oom_trims_and_retries, 30);
	nm_add(s, mem_info_counts_pool_as_free, 30);
	ret = acltest_run(s);
	acltest_set_max_bytes(saved_max_bytes, NULL);
	return ret;
}
