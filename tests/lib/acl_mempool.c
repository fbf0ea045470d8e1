// SPDX-License-Identifier: MIT
/*
 * Stream-ordered memory pools: a freed block is reused only after its free
 * ran on the stream; the release threshold keeps or returns freed memory;
 * maxSize bounds the pool; attributes read back; a destroyed pool's blocks
 * stay usable until freed; and the errors CANN's checks give.
 */
#include <string.h>

#include "acltest_device.h"
#include "acltest_gate.h"
#include "acl/acl.h"

static aclrtMemPoolProps props(size_t max)
{
	aclrtMemPoolProps p;

	memset(&p, 0, sizeof(p));
	p.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	p.maxSize = max;
	return p;
}

START_TEST(reuse_after_the_free_ran)
{
	aclrtMemPoolProps pp = props(0);
	struct acltest_gate gate;
	aclrtMemPool pool;
	aclrtStream s;
	uint64_t v, keep = 1 << 20;
	void *a, *b, *c;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, &pp), 0);
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep), 0);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&a, 4096, pool, s), 0);
	/* Pool memory is device memory for every other call. */
	ck_assert_int_eq(aclrtMemsetAsync(a, 4096, 0x21, 4096, s), 0);
	/* The free waits behind held work: not reusable meanwhile. */
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(a, s), 0);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&b, 4096, pool, s), 0);
	ck_assert_ptr_ne(a, b);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(a, s), ACL_ERROR_RT_PARAM_INVALID);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	/* Now it is: the same block comes back. */
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&c, 4000, pool, s), 0);
	ck_assert_ptr_eq(c, a);
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v), 0);
	ck_assert_uint_eq(v, 8192);
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, &v), 0);
	ck_assert_uint_eq(v, 8192);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(b, s), 0);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(c, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v), 0);
	ck_assert_uint_eq(v, 0);
	/* Under the threshold: kept. */
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &v), 0);
	ck_assert_uint_eq(v, 8192);
	/* Threshold 0: the next free returns what the pool keeps. */
	keep = 0;
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep), 0);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&a, 64, pool, s), 0);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(a, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtMemPoolDestroy(pool), 0);
	ck_assert_int_eq(aclrtMemPoolDestroy(pool), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

START_TEST(limits_attributes_errors)
{
	aclrtMemPoolProps pp = props(8192);
	aclrtMemPool pool;
	aclrtStream s;
	uint64_t v = 5;
	int flag = 1;
	void *a, *b;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMemPoolCreate(NULL, &pp), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, NULL), ACL_ERROR_INVALID_PARAM);
	pp.location.id = acltest_device_count();
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, &pp),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	pp.location.id = 0;
	pp.location.type = ACL_MEM_LOCATION_TYPE_HOST;
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, &pp), ACL_ERROR_INVALID_PARAM);
	pp.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, &pp), 0);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&a, 4096, pool, s), 0);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&b, 8192, pool, s),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&b, 0, pool, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(NULL, 64, pool, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&b, 64, &v, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(NULL, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(&v, s), ACL_ERROR_RT_PARAM_INVALID);
	/* Attributes. */
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &flag), 0);
	flag = 7;
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &flag), 0);
	ck_assert_int_eq(flag, 1);
	flag = 2;
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &flag),
			ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v),
			ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &v),
			ACL_ERROR_INVALID_PARAM);
	v = 0;
	ck_assert_int_eq(aclrtMemPoolSetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &v), 0);
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)99, &v),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemPoolGetAttr(pool,
			ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, NULL),
			ACL_ERROR_INVALID_PARAM);
	/* Destroyed with a block in use: the block stays good until freed. */
	ck_assert_int_eq(aclrtMemPoolDestroy(pool), 0);
	ck_assert_int_eq(aclrtMemset(a, 4096, 0x11, 4096), 0);
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&b, 64, pool, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(a, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	/* Gone now: freeing it as a plain buffer is refused. */
	ck_assert_int_eq(aclrtFree(a), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_mempool");

	acltest_require_device();
	nm_add_fx(s, reuse_after_the_free_ran, 30, &acltest_device);
	nm_add_fx(s, limits_attributes_errors, 30, &acltest_device);
	return acltest_run(s);
}
