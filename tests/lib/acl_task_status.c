// SPDX-License-Identifier: MIT
/*
 * What a program asks about its tasks: the float overflow status (always
 * zero here, written in stream order into device memory, as CANN writes
 * it), its reset, the last task a thread queued on a created stream, and
 * the kernel arguments and handle of an exception, which a task that ran
 * no kernel does not have; every error code.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "acltest_device.h"
#include "acltest_gate.h"
#include "acl/acl.h"

#define STATUS	64

START_TEST(overflow_status_is_zero_in_stream_order)
{
	struct acltest_gate gate;
	unsigned char back[STATUS], zero[STATUS] = { 0 };
	aclrtStream s;
	void *out;

	ck_assert_int_eq(aclrtMalloc(&out, STATUS, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(out, STATUS, 0xff, STATUS), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtResetOverflowStatus(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetOverflowStatus(out, STATUS, s), ACL_SUCCESS);
	/* Asynchronous: nothing is written before the stream gets there. */
	ck_assert_int_eq(aclrtMemcpy(back, STATUS, out, STATUS,
				     ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	ck_assert_uint_eq(back[0], 0xff);
	ck_assert_uint_eq(back[STATUS - 1], 0xff);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(back, STATUS, out, STATUS,
				     ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	ck_assert_mem_eq(back, zero, STATUS);
	/* The default stream too. */
	ck_assert_int_eq(aclrtMemset(out, STATUS, 0xff, STATUS), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetOverflowStatus(NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetOverflowStatus(out, STATUS, NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	ck_assert_mem_eq(out, zero, STATUS);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(out), ACL_SUCCESS);
}
END_TEST

START_TEST(overflow_status_errors)
{
	unsigned char host[STATUS];
	aclrtStream s, dead;
	void *out, *ro, *hostmem;

	ck_assert_int_eq(aclrtMalloc(&out, 2 * STATUS, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&ro, STATUS, ACL_MEM_MALLOC_NORMAL_ONLY |
				     ACL_MEM_ACCESS_USER_SPACE_READONLY),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocHost(&hostmem, STATUS), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&dead), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(dead), ACL_SUCCESS);

	ck_assert_int_eq(aclrtGetOverflowStatus(NULL, STATUS, s),
			 ACL_ERROR_INVALID_PARAM);
	/* CANN documents the size as fixed: 64 bytes. */
	ck_assert_int_eq(aclrtGetOverflowStatus(out, 0, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus(out, STATUS - 1, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus(out, STATUS + 1, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Device memory that holds all 64 bytes and may be written. */
	ck_assert_int_eq(aclrtGetOverflowStatus(host, STATUS, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus(hostmem, STATUS, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus(ro, STATUS, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus((char *)out + 2 * STATUS - 8,
						STATUS, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus(out, STATUS, dead),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtResetOverflowStatus(dead),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetOverflowStatus((char *)out + 8, STATUS, s),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);

	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFreeHost(hostmem), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(ro), ACL_SUCCESS);
	/* No current device: 107002, after the NULL check. */
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetOverflowStatus(NULL, STATUS, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetOverflowStatus(out, STATUS, NULL),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtResetOverflowStatus(NULL),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtFree(out), ACL_SUCCESS);
}
END_TEST

static void *fresh_thread(void *arg)
{
	uint32_t *id = arg;

	if (aclrtGetThreadLastTaskId(id) != ACL_SUCCESS)
		*id = 55;
	return NULL;
}

START_TEST(thread_last_task_id)
{
	aclrtStream s;
	uint32_t id = 77;
	pthread_t t;
	void *p;

	ck_assert_int_eq(aclrtGetThreadLastTaskId(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMalloc(&p, STATUS, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemsetAsync(p, STATUS, 0, STATUS, s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetThreadLastTaskId(&id), ACL_SUCCESS);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(aclrtMemsetAsync(p, STATUS, 0, STATUS, s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetOverflowStatus(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetThreadLastTaskId(&id), ACL_SUCCESS);
	ck_assert_uint_eq(id, 2);
	/*
	 * The default stream's tasks are not counted (its first task here,
	 * number 0 where the test runs in a process of its own, would be).
	 */
	ck_assert_int_eq(aclrtMemsetAsync(p, STATUS, 0, STATUS, NULL),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetThreadLastTaskId(&id), ACL_SUCCESS);
	ck_assert_uint_eq(id, 2);
	/* Per thread: one that queued nothing reads 0. */
	id = 77;
	ck_assert_int_eq(pthread_create(&t, NULL, fresh_thread, &id), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
}
END_TEST

static struct {
	int calls;
	aclError args, args_null, args_len_null, func, func_null;
	void *dev_args;
	uint32_t len;
	aclrtFuncHandle handle;
} exc;

static void exception_cb(aclrtExceptionInfo *info)
{
	void *p;
	uint32_t n;

	exc.calls++;
	exc.dev_args = &exc;
	exc.len = 99;
	exc.handle = &exc;
	exc.args = aclrtGetArgsFromExceptionInfo(info, &exc.dev_args, &exc.len);
	exc.args_null = aclrtGetArgsFromExceptionInfo(info, NULL, &n);
	exc.args_len_null = aclrtGetArgsFromExceptionInfo(info, &p, NULL);
	exc.func = aclrtGetFuncHandleFromExceptionInfo(info, &exc.handle);
	exc.func_null = aclrtGetFuncHandleFromExceptionInfo(info, NULL);
}

/*
 * The failed task here is a copy, not a kernel: it has no arguments and no
 * kernel handle, and the getters say so as CANN's do for such exceptions.
 */
START_TEST(exception_without_kernel)
{
	struct acltest_gate gate;
	unsigned char host[64];
	aclrtFuncHandle f = NULL;
	aclrtStream s;
	uint32_t n = 0;
	void *doomed, *p = NULL;

	/* A NULL info: CANN's 0xFFFFFFFF, whatever else is NULL. */
	ck_assert_int_eq(aclrtGetArgsFromExceptionInfo(NULL, &p, &n),
			 (aclError)0xFFFFFFFFU);
	ck_assert_int_eq(aclrtGetArgsFromExceptionInfo(NULL, NULL, NULL),
			 (aclError)0xFFFFFFFFU);
	ck_assert_int_eq(aclrtGetFuncHandleFromExceptionInfo(NULL, &f),
			 (aclError)0xFFFFFFFFU);
	ck_assert_int_eq(aclrtGetFuncHandleFromExceptionInfo(NULL, NULL),
			 (aclError)0xFFFFFFFFU);

	ck_assert_int_eq(aclrtSetExceptionInfoCallback(exception_cb), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc(&doomed, 64, 2), 0);
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtMemcpyAsync(host, 64, doomed, 64,
					  ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
	ck_assert_int_eq(aclrtFree(doomed), 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(exc.calls, 1);
	ck_assert_int_eq(exc.args, (aclError)0xFFFFFFFFU);
	ck_assert_int_eq(exc.args_null, ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(exc.args_len_null, ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(exc.func, ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(exc.func_null, ACL_ERROR_INVALID_PARAM);
	/* Outputs are left alone on failure. */
	ck_assert_ptr_eq(exc.dev_args, &exc);
	ck_assert_uint_eq(exc.len, 99);
	ck_assert_ptr_eq(exc.handle, &exc);
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(NULL), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_task_status");

	acltest_require_device();
	nm_add_fx(s, overflow_status_is_zero_in_stream_order, 30,
		  &acltest_device);
	nm_add_fx(s, overflow_status_errors, 30, &acltest_device);
	nm_add_fx(s, thread_last_task_id, 30, &acltest_device);
	nm_add_fx(s, exception_without_kernel, 30, &acltest_device);
	return acltest_run(s);
}
