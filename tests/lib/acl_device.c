// SPDX-License-Identifier: MIT
/*
 * Devices and contexts with the real driver: aclrtSetDevice/ResetDevice
 * reference counting, the per-thread current device (107002 on a thread
 * without one, or after the device was reset), buffers outliving a reset,
 * aclFinalize releasing what the program leaked, a file that is not an
 * npu-mem device.  Runs in a guest; exits 77 when /dev/npu-mem is absent.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "acltest.h"
#include "acl/acl.h"

START_TEST(set_get_reset)
{
	int32_t id = -5;
	uint32_t n = 0;
	void *p = NULL;

	ck_assert_int_eq(aclrtGetDeviceCount(&n), ACL_SUCCESS);
	ck_assert_uint_eq(n, acltest_device_count());
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_SUCCESS);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_NORMAL_ONLY),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMalloc(&p, 100, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice((int32_t)acltest_device_count()),
			 ACL_ERROR_RT_INVALID_DEVICEID);
}
END_TEST

START_TEST(reference_counted)
{
	int32_t id;

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	/* One reset per set: the first reset leaves the device alive... */
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	/* ...but this thread's context was reset, as in CANN. */
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_ERROR_RT_CONTEXT_NULL);
	/* Extra resets are harmless. */
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

struct thr {
	pthread_barrier_t *bar;
	int set;		/* call aclrtSetDevice first */
	int malloc_ret;
	int after_reset_ret;
};

static void *thread_malloc(void *arg)
{
	struct thr *t = arg;
	void *p = NULL;

	if (t->set)
		aclrtSetDevice(0);
	t->malloc_ret = aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY);
	if (!t->malloc_ret)
		aclrtFree(p);
	if (t->bar) {
		pthread_barrier_wait(t->bar);	/* main resets the device */
		pthread_barrier_wait(t->bar);
		p = NULL;
		t->after_reset_ret = aclrtMalloc(&p, 4096, 2);
		if (!t->after_reset_ret)
			aclrtFree(p);
	}
	return NULL;
}

START_TEST(current_device_is_per_thread)
{
	struct thr a = { NULL, 0, -1, -1 }, b = { NULL, 1, -1, -1 };
	pthread_t th;

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	/* A thread that never set a device has no context... */
	pthread_create(&th, NULL, thread_malloc, &a);
	pthread_join(th, NULL);
	ck_assert_int_eq(a.malloc_ret, ACL_ERROR_RT_CONTEXT_NULL);
	/* ...one that did has. */
	pthread_create(&th, NULL, thread_malloc, &b);
	pthread_join(th, NULL);
	ck_assert_int_eq(b.malloc_ret, ACL_SUCCESS);
	/* b's SetDevice is still counted: two resets to reach zero. */
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

START_TEST(reset_to_zero_invalidates_other_threads)
{
	pthread_barrier_t bar;
	struct thr t = { &bar, 1, -1, -1 };
	pthread_t th;

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&th, NULL, thread_malloc, &t);
	pthread_barrier_wait(&bar);
	ck_assert_int_eq(aclrtResetDeviceForce(0), ACL_SUCCESS);
	pthread_barrier_wait(&bar);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&bar);
	ck_assert_int_eq(t.malloc_ret, ACL_SUCCESS);
	ck_assert_int_eq(t.after_reset_ret, ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

START_TEST(buffers_outlive_reset)
{
	unsigned char *p = NULL;

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc((void **)&p, 10000, 2), ACL_SUCCESS);
	acltest_fill(p, 10000, 7);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	/* Still mapped and intact: the program did not free it. */
	ck_assert_uint_eq(acltest_verify(p, 10000, 7), SIZE_MAX);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(p, 10000, 1, 10000), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

START_TEST(finalize_releases_leaks)
{
	struct acltest_counters before, during, after;
	void *p[3];
	int i;

	acltest_counters(&before);
	ck_assert_int_eq(aclInit(NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(aclrtMalloc(&p[i], 3 << 20, 0), ACL_SUCCESS);
	acltest_counters(&during);
	ck_assert_uint_eq(during.buffers, before.buffers + 3);
	ck_assert_int_eq(aclFinalize(), ACL_SUCCESS);
	acltest_counters(&after);
	ck_assert_uint_eq(after.buffers, before.buffers);
	ck_assert_uint_eq(after.allocated_bytes, before.allocated_bytes);
	/* The device can be used again after a new aclInit. */
	ck_assert_int_eq(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
	ck_assert_int_eq(aclInit(NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&p[0], 4096, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(p[0]), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclFinalize(), ACL_SUCCESS);
}
END_TEST

START_TEST(not_an_npu_mem_device)
{
	/* /dev/null opens fine but knows none of the ioctls (ENOTTY). */
	setenv("NPU_MEM_DEVICE", "/dev/null", 1);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	unsetenv("NPU_MEM_DEVICE");
}
END_TEST

START_TEST(missing_node_while_module_loaded)
{
	/* What a program sees when the module is not loaded. */
	setenv("NPU_MEM_DEVICE", "/dev/npu-mem-does-not-exist", 1);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_ERROR_RT_NO_DEVICE);
	unsetenv("NPU_MEM_DEVICE");
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

START_TEST(synchronize_device)
{
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_device");

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "0", 1);
	nm_add(s, set_get_reset, 30);
	nm_add(s, reference_counted, 30);
	nm_add(s, current_device_is_per_thread, 30);
	nm_add(s, reset_to_zero_invalidates_other_threads, 30);
	nm_add(s, buffers_outlive_reset, 30);
	nm_add(s, finalize_releases_leaks, 60);
	nm_add(s, not_an_npu_mem_device, 30);
	nm_add(s, missing_node_while_module_loaded, 30);
	nm_add(s, synchronize_device, 30);
	return acltest_run(s);
}
