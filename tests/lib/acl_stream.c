// SPDX-License-Identifier: MIT
/*
 * Streams: queued work runs in order and is complete when the stream is
 * synchronised; a NULL stream is the default one; errors met by queued work
 * surface at synchronisation (once); destroying waits for queued work, the
 * Force variant discards what has not started; bad handles are refused;
 * the device's last reset destroys its streams.
 */
#include <stdlib.h>
#include <string.h>

#include "acltest.h"
#include "acltest_gate.h"
#include "acl/acl.h"

#define MiB ((size_t)1 << 20)

static void setup(void)
{
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
}

static void teardown(void)
{
	aclrtResetDevice(0);
}

static void assert_all(const unsigned char *p, size_t n, int v)
{
	size_t i;

	for (i = 0; i < n && p[i] == v; i++)
		;
	ck_assert_msg(i == n, "byte %zu is %#x, not %#x", i, p[i], v);
}

START_TEST(in_order_and_complete_at_sync)
{
	unsigned char *a, *b, host[4096];
	aclrtStream s;
	int i;

	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(aclrtMalloc((void **)&a, 4096, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&b, 4096, 2), 0);
	/* Each step depends on the one before: only in-order gives 0x30. */
	for (i = 1; i <= 0x30; i++) {
		ck_assert_int_eq(aclrtMemsetAsync(a, 4096, i, 4096, s), 0);
		ck_assert_int_eq(aclrtMemcpyAsync(b, 4096, a, 4096,
						  ACL_MEMCPY_DEVICE_TO_DEVICE, s), 0);
	}
	ck_assert_int_eq(aclrtMemcpyAsync(host, 4096, b, 4096,
					  ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	assert_all(host, 4096, 0x30);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(a), 0);
	ck_assert_int_eq(aclrtFree(b), 0);
}
END_TEST

START_TEST(default_stream)
{
	unsigned char *a, host[100];

	ck_assert_int_eq(aclrtMalloc((void **)&a, 100, 2), 0);
	ck_assert_int_eq(aclrtMemsetAsync(a, 100, 0x44, 100, NULL), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(host, 100, a, 100,
					  ACL_MEMCPY_DEVICE_TO_HOST, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
	assert_all(host, 100, 0x44);
	/* SynchronizeDevice waits for every stream, the default one too. */
	ck_assert_int_eq(aclrtMemsetAsync(a, 100, 0x55, 100, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	assert_all(a, 100, 0x55);
	ck_assert_int_eq(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

/* Seconds of work under TCG: a destroy that did not wait returns first. */
static void keep_busy(aclrtStream s, void *big, size_t n)
{
	int i;

	for (i = 0; i < 40; i++)
		ck_assert_int_eq(aclrtMemsetAsync(big, n, i, n, s), 0);
}

START_TEST(errors_surface_at_sync)
{
	unsigned char *big, *victim, host[64];
	struct acltest_gate gate;
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&big, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&victim, 64, 2), 0);
	/* Valid when queued; freed before it runs. */
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtMemcpyAsync(host, 64, victim, 64,
					  ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
	ck_assert_int_eq(aclrtFree(victim), 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	/* Reported once; the stream keeps working. */
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemsetAsync(big, 64, 7, 64, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(big[63], 7);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(big), 0);
}
END_TEST

START_TEST(argument_errors_are_immediate)
{
	unsigned char *a, host[64];
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(NULL, 8, host, 8,
					  ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpyAsync(a, 8, host, 8, (aclrtMemcpyKind)9, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpyAsync(a, 8, host, 9,
					  ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpyAsync(a, 200, host, 200,
					  ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemsetAsync(host, 8, 0, 9, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemsetAsync(NULL, 8, 0, 8, s),
			 ACL_ERROR_INVALID_PARAM);
	/* Nothing was queued by those. */
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

START_TEST(bad_handles)
{
	aclrtStream s;
	int junk;

	ck_assert_int_eq(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSynchronizeStream(&junk), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(&junk), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStreamForce(&junk), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemsetAsync(&junk, 4, 0, 4, &junk),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	/* Destroyed: the handle is dead. */
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(destroy_waits_force_discards)
{
	unsigned char *big, *mark;
	uint64_t *word;
	aclrtStream s;

	ck_assert_int_eq(aclrtMalloc((void **)&big, 64 * MiB, 0), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&mark, 64, 2), 0);
	memset(mark, 0, 64);

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	keep_busy(s, big, 64 * MiB);
	ck_assert_int_eq(aclrtMemsetAsync(mark, 64, 1, 64, s), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	/* Destroy waited for everything queued. */
	ck_assert_int_eq(mark[0], 1);

	/*
	 * Held by a wait nobody satisfies, however late this thread gets to
	 * the destroy: a forced destroy makes a running wait give up (it
	 * would wait for a running host function, which no one would end).
	 */
	ck_assert_int_eq(aclrtMalloc((void **)&word, 8, 2), 0);
	*word = 0;
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, s),
			 0);
	ck_assert_int_eq(aclrtMemsetAsync(mark, 64, 2, 64, s), 0);
	ck_assert_int_eq(aclrtDestroyStreamForce(s), ACL_SUCCESS);
	/* Force: the queued tail never ran. */
	ck_assert_int_eq(mark[0], 1);
	ck_assert_int_eq(aclrtFree(word), 0);
	ck_assert_int_eq(aclrtFree(big), 0);
	ck_assert_int_eq(aclrtFree(mark), 0);
}
END_TEST

START_TEST(reset_destroys_streams)
{
	unsigned char *a;
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	ck_assert_int_eq(aclrtMemsetAsync(a, 64, 9, 64, s), 0);
	/* The last reference: queued work finishes, the stream goes. */
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(a[0], 9);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

START_TEST(no_device_no_streams)
{
	aclrtStream s;

	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
}
END_TEST

static const struct nm_fixture fixture = {
	.setup = setup, .teardown = teardown,
};

int main(void)
{
	Suite *s = suite_create("acl_stream");

	acltest_require_device();
	nm_add_fx(s, in_order_and_complete_at_sync, 60, &fixture);
	nm_add_fx(s, default_stream, 30, &fixture);
	nm_add_fx(s, errors_surface_at_sync, 120, &fixture);
	nm_add_fx(s, argument_errors_are_immediate, 30, &fixture);
	nm_add_fx(s, bad_handles, 30, &fixture);
	nm_add_fx(s, destroy_waits_force_discards, 120, &fixture);
	nm_add_fx(s, reset_destroys_streams, 30, &fixture);
	nm_add_fx(s, no_device_no_streams, 30, &fixture);
	return acltest_run(s);
}
