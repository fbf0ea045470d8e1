// SPDX-License-Identifier: MIT
/*
 * acl_pool_classes: the pool's size classes round up to the policy's page
 * granule, so that every size is pooled and a class never holds a buffer
 * smaller than its requests.
 *
 *  - a 100-byte aclrtMalloc (128 bytes with CANN's padding) is kept in the
 *    pool when freed, in the 4 KiB class, and a 200-byte one reuses it
 *    without a driver call: a class computed by rounding down would be 0,
 *    which the pool takes for "not poolable";
 *  - a buffer of exactly 4 KiB (aclrtMallocAlign32, no padding) and a
 *    request of 4 KiB + 32 (aclrtMalloc of 4096) are different classes: the
 *    second gets a new buffer and the first stays pooled.  Rounded down,
 *    both would be the 4 KiB class, and the 4 KiB buffer would be handed
 *    to a request it cannot hold (the library then drops it).
 * Driver buffers are counted through GET_INFO of a file of the test's own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "acltest.h"
#include "acl/acl.h"

START_TEST(small_sizes_are_pooled)
{
	struct acltest_counters c0, c;
	void *p, *q;

	ck_assert_int_eq(aclrtSetDevice(0), 0);
	acltest_counters(&c0);
	ck_assert_int_eq(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	acltest_counters(&c);
	ck_assert_msg(c.buffers == c0.buffers + 1, "a freed 100-byte buffer "
		      "was not kept in the pool (%llu driver buffers, want "
		      "%llu)", (unsigned long long)c.buffers,
		      (unsigned long long)c0.buffers + 1);
	ck_assert_int_eq(aclrtMalloc(&q, 200, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_ptr_eq(q, p);
	acltest_counters(&c);
	ck_assert_uint_eq(c.buffers, c0.buffers + 1);
	ck_assert_int_eq(aclrtFree(q), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

START_TEST(exact_page_is_its_own_class)
{
	struct acltest_counters c0, c;
	void *p, *q;

	ck_assert_int_eq(aclrtSetDevice(0), 0);
	acltest_counters(&c0);
	ck_assert_int_eq(aclrtMallocAlign32(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	/* 4096 + 32 bytes of padding: the 8 KiB class */
	ck_assert_int_eq(aclrtMalloc(&q, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_ptr_ne(q, p);
	acltest_counters(&c);
	ck_assert_msg(c.buffers == c0.buffers + 2, "%llu driver buffers, want "
		      "%llu: the pooled 4 KiB buffer was offered to a request "
		      "of 4128 bytes", (unsigned long long)c.buffers,
		      (unsigned long long)c0.buffers + 2);
	ck_assert_int_eq(aclrtMemset(q, 4128, 1, 4128), 0);
	ck_assert_int_eq(aclrtFree(q), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_pool_classes");

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "16M", 1);
	nm_add(s, small_sizes_are_pooled, 30);
	nm_add(s, exact_page_is_its_own_class, 30);
	return acltest_run(s);
}
