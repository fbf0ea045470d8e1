// SPDX-License-Identifier: MIT
/*
 * Media memory (acl/ops/acl_dvpp.h): acldvppMalloc's rounding (CANN's
 * ALIGN_UP(size, 32) + 32, size 0 included) and alignment (128 bytes at
 * least), memory usable as device memory by copies and fills, freed by
 * acldvppFree alone and refused by aclrtFree (and the reverse), and
 * aclrtCheckMemType telling DVPP memory from DEV memory; every error code.
 */
#include <stdint.h>
#include <string.h>

#include "acltest_device.h"
#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"

/* The bytes acldvppMalloc reserved: the buffer's extent for range calls. */
static size_t reserved(void *p)
{
	size_t size = 0;
	void *base = NULL;

	ck_assert_int_eq(aclrtMemGetAddressRange(p, &base, &size), ACL_SUCCESS);
	ck_assert_ptr_eq(base, p);
	return size;
}

START_TEST(malloc_rounds_and_aligns)
{
	static const struct {
		size_t in, want;
	} cases[] = {
		{ 0, 32 }, { 1, 64 }, { 32, 64 }, { 33, 96 }, { 4096, 4128 },
		{ (2 << 20) + 1, (2 << 20) + 64 },
	};
	size_t i;
	void *p;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = NULL;
		ck_assert_int_eq(acldvppMalloc(&p, cases[i].in), ACL_SUCCESS);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 128, 0);
		ck_assert_uint_eq(reserved(p), cases[i].want);
		ck_assert_int_eq(acldvppFree(p), ACL_SUCCESS);
	}
}
END_TEST

START_TEST(device_memory_for_copies)
{
	unsigned char host[100], back[100];
	aclrtPtrAttributes attr;
	aclrtStream s;
	void *p;

	memset(host, 0x5a, sizeof(host));
	ck_assert_int_eq(acldvppMalloc(&p, sizeof(host)), ACL_SUCCESS);
	ck_assert_int_eq(aclrtPointerGetAttributes(p, &attr), ACL_SUCCESS);
	ck_assert_int_eq(attr.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
	ck_assert_int_eq(aclrtMemcpy(p, sizeof(host), host, sizeof(host),
				     ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemsetAsync(p, 10, 1, 10, s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(back, sizeof(back), p, sizeof(back),
				     ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	memset(host, 1, 10);
	ck_assert_mem_eq(back, host, sizeof(back));
	/* Past the 160 bytes reserved (ALIGN_UP(100, 32) + 32): not in it. */
	ck_assert_uint_eq(reserved(p), 160);
	ck_assert_int_eq(aclrtMemset(p, 161, 0, 161), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(acldvppFree(p), ACL_SUCCESS);
}
END_TEST

/* Each kind of device memory is freed by its own call only. */
START_TEST(free_only_its_own)
{
	void *dvpp, *dev, *host;

	ck_assert_int_eq(acldvppMalloc(&dvpp, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocHost(&host, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(dvpp), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeWithDevSync(dvpp), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(acldvppFree(dev), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(acldvppFree(host), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(acldvppFree((char *)dvpp + 32),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(acldvppFree(dvpp), ACL_SUCCESS);
	ck_assert_int_eq(acldvppFree(dvpp), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(dev), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFreeHost(host), ACL_SUCCESS);
	/* A pooled DVPP buffer handed to aclrtMalloc is aclrtFree's. */
	ck_assert_int_eq(acldvppMalloc(&dvpp, 4000), ACL_SUCCESS);
	ck_assert_int_eq(acldvppFree(dvpp), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&dev, 4000, ACL_MEM_MALLOC_NORMAL_ONLY),
			 ACL_SUCCESS);
	ck_assert_int_eq(acldvppFree(dev), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(dev), ACL_SUCCESS);
}
END_TEST

START_TEST(errors)
{
	void *p;

	ck_assert_int_eq(acldvppMalloc(NULL, 64), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(acldvppMalloc(&p, SIZE_MAX - 62),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(acldvppMalloc(&p, SIZE_MAX / 2),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(acldvppFree(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(acldvppFree(&p), ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

/* Allocating needs a current device; freeing does not (as aclrtFree). */
START_TEST(context_rules)
{
	void *p;

	ck_assert_int_eq(acldvppMalloc(&p, 64), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(acldvppMalloc(&p, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(acldvppFree(p), ACL_SUCCESS);
}
END_TEST

START_TEST(check_mem_type)
{
	uint32_t r = 7;
	void *dvpp, *dev, *list[2];

	ck_assert_int_eq(acldvppMalloc(&dvpp, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	list[0] = dvpp;
	list[1] = (char *)dvpp + 16;
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DVPP, &r, 0),
			 ACL_SUCCESS);
	ck_assert_uint_eq(r, 1);
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &r, 0),
			 ACL_SUCCESS);
	ck_assert_uint_eq(r, 0);
	list[1] = dev;
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DVPP, &r, 0),
			 ACL_SUCCESS);
	ck_assert_uint_eq(r, 0);
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DVPP |
					   ACL_RT_MEM_TYPE_DEV, &r, 0),
			 ACL_SUCCESS);
	ck_assert_uint_eq(r, 1);
	ck_assert_int_eq(aclrtFree(dev), ACL_SUCCESS);
	ck_assert_int_eq(acldvppFree(dvpp), ACL_SUCCESS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_dvpp");

	acltest_require_device();
	nm_add_fx(s, malloc_rounds_and_aligns, 30, &acltest_device);
	nm_add_fx(s, device_memory_for_copies, 30, &acltest_device);
	nm_add_fx(s, free_only_its_own, 30, &acltest_device);
	nm_add_fx(s, errors, 30, &acltest_device);
	nm_add(s, context_rules, 30);
	nm_add_fx(s, check_mem_type, 30, &acltest_device);
	return acltest_run(s);
}
