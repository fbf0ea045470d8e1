// SPDX-License-Identifier: MIT
/*
 * aclrtReduceAsync: each supported type under SUM, MAX and MIN gives the
 * exact results, in stream order; every refusal has CANN's code (NULLs,
 * reserve and unmapped types 100000; kinds and types the device does not
 * reduce 207000; unaligned 107008; partial elements, wrapping counts, host
 * or freed memory 107000; no context 107002; another context's stream
 * 107003).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "acltest_device.h"
#include "acl/acl.h"

#define SUM ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM
#define MAX ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX
#define MIN ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN

static aclrtStream stream;
static unsigned char *dev_a, *dev_b;

static void setup(void)
{
	acltest_set_device();
	ck_assert_int_eq(aclrtCreateStream(&stream), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&dev_a, 4096, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&dev_b, 4096, 2), 0);
}

static void teardown(void)
{
	acltest_reset_device();
}

static const struct nm_fixture fx = { .setup = setup, .teardown = teardown };

/* dst = a, src = b, reduce, read back dst. */
static void run(int kind, aclDataType type, const void *a, const void *b,
		void *out, size_t bytes)
{
	memcpy(dev_a, a, bytes);
	memcpy(dev_b, b, bytes);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, bytes, kind, type,
					  stream, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(stream), 0);
	memcpy(out, dev_a, bytes);
}

START_TEST(integers)
{
	int8_t a8[4] = { 100, -128, 5, -7 }, b8[4] = { 100, -1, -5, 3 }, o8[4];
	int16_t a16[3] = { 32767, -300, 12 }, b16[3] = { 1, 299, -12 }, o16[3];
	int32_t a32[3] = { INT32_MAX, -5, 7 }, b32[3] = { 1, -6, 7 }, o32[3];
	uint32_t au[3] = { 0xffffffffu, 3, 9 }, bu[3] = { 2, 0x80000000u, 1 },
		 ou[3];

	run(SUM, ACL_INT8, a8, b8, o8, sizeof(a8));
	ck_assert_int_eq(o8[0], -56);		/* 200 wraps */
	ck_assert_int_eq(o8[1], 127);		/* -129 wraps */
	ck_assert_int_eq(o8[2], 0);
	ck_assert_int_eq(o8[3], -4);
	run(MAX, ACL_INT8, a8, b8, o8, sizeof(a8));
	ck_assert_int_eq(o8[1], -1);
	ck_assert_int_eq(o8[3], 3);
	run(MIN, ACL_INT8, a8, b8, o8, sizeof(a8));
	ck_assert_int_eq(o8[1], -128);
	ck_assert_int_eq(o8[2], -5);

	run(SUM, ACL_INT16, a16, b16, o16, sizeof(a16));
	ck_assert_int_eq(o16[0], -32768);
	ck_assert_int_eq(o16[1], -1);
	ck_assert_int_eq(o16[2], 0);
	run(MAX, ACL_INT16, a16, b16, o16, sizeof(a16));
	ck_assert_int_eq(o16[1], 299);
	run(MIN, ACL_INT16, a16, b16, o16, sizeof(a16));
	ck_assert_int_eq(o16[2], -12);

	run(SUM, ACL_INT32, a32, b32, o32, sizeof(a32));
	ck_assert_int_eq(o32[0], INT32_MIN);
	ck_assert_int_eq(o32[1], -11);
	ck_assert_int_eq(o32[2], 14);
	run(MAX, ACL_INT32, a32, b32, o32, sizeof(a32));
	ck_assert_int_eq(o32[0], INT32_MAX);
	ck_assert_int_eq(o32[1], -5);
	run(MIN, ACL_INT32, a32, b32, o32, sizeof(a32));
	ck_assert_int_eq(o32[0], 1);
	ck_assert_int_eq(o32[1], -6);

	run(SUM, ACL_UINT32, au, bu, ou, sizeof(au));
	ck_assert_uint_eq(ou[0], 1);
	ck_assert_uint_eq(ou[1], 0x80000003u);
	run(MAX, ACL_UINT32, au, bu, ou, sizeof(au));
	ck_assert_uint_eq(ou[0], 0xffffffffu);	/* unsigned, not -1 */
	ck_assert_uint_eq(ou[1], 0x80000000u);
	run(MIN, ACL_UINT32, au, bu, ou, sizeof(au));
	ck_assert_uint_eq(ou[0], 2);
	ck_assert_uint_eq(ou[2], 1);
}
END_TEST

START_TEST(floats)
{
	float af[4] = { 1.5f, -2.0f, 1e30f, NAN }, bf[4] = { 0.25f, 3.0f,
		1e30f, 1.0f }, of[4];
	/* fp16: 1.0, 2.0, 65504 (max), -0.5 */
	uint16_t ah[4] = { 0x3c00, 0x4000, 0x7bff, 0xb800 },
		 bh[4] = { 0x3c00, 0x3c00, 0x7bff, 0x3800 }, oh[4];
	/* bf16: 1.0, -3.0, 256.0, 1.0; 1.0 twice, 1/128 */
	uint16_t ab[4] = { 0x3f80, 0xc040, 0x4380, 0x3f80 },
		 bb[4] = { 0x3f80, 0x3f80, 0x3f80, 0x3c00 }, ob[4];

	run(SUM, ACL_FLOAT, af, bf, of, sizeof(af));
	ck_assert(of[0] == 1.75f && of[1] == 1.0f && of[2] == 2e30f);
	ck_assert(isnan(of[3]));
	run(MAX, ACL_FLOAT, af, bf, of, sizeof(af));
	ck_assert(of[0] == 1.5f && of[1] == 3.0f && isnan(of[3]));
	run(MIN, ACL_FLOAT, af, bf, of, sizeof(af));
	ck_assert(of[0] == 0.25f && of[1] == -2.0f && isnan(of[3]));

	run(SUM, ACL_FLOAT16, ah, bh, oh, sizeof(ah));
	ck_assert_uint_eq(oh[0], 0x4000);	/* 2.0 */
	ck_assert_uint_eq(oh[1], 0x4200);	/* 3.0 */
	ck_assert_uint_eq(oh[2], 0x7bff);	/* saturates: 65504 */
	ck_assert_uint_eq(oh[3], 0x0000);	/* +0 */
	run(MAX, ACL_FLOAT16, ah, bh, oh, sizeof(ah));
	ck_assert_uint_eq(oh[1], 0x4000);
	ck_assert_uint_eq(oh[3], 0x3800);
	run(MIN, ACL_FLOAT16, ah, bh, oh, sizeof(ah));
	ck_assert_uint_eq(oh[1], 0x3c00);
	ck_assert_uint_eq(oh[3], 0xb800);

	run(SUM, ACL_BF16, ab, bb, ob, sizeof(ab));
	ck_assert_uint_eq(ob[0], 0x4000);	/* 2.0 */
	ck_assert_uint_eq(ob[1], 0xc000);	/* -2.0 */
	ck_assert_uint_eq(ob[2], 0x4380);	/* 257 rounds to even: 256 */
	ck_assert_uint_eq(ob[3], 0x3f81);	/* 1 + 1/128 */
	run(MAX, ACL_BF16, ab, bb, ob, sizeof(ab));
	ck_assert_uint_eq(ob[1], 0x3f80);
	run(MIN, ACL_BF16, ab, bb, ob, sizeof(ab));
	ck_assert_uint_eq(ob[1], 0xc040);
	ck_assert_uint_eq(ob[3], 0x3c00);
}
END_TEST

/* Queued work runs in order: a fill, then two sums, then a copy out. */
START_TEST(stream_order)
{
	int32_t out[256], one[256];
	size_t i;

	for (i = 0; i < 256; i++)
		one[i] = 1;
	memcpy(dev_b, one, sizeof(one));
	ck_assert_int_eq(aclrtMemsetAsync(dev_a, 4096, 0, 1024, stream), 0);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 1024, SUM, ACL_INT32,
					  stream, NULL), 0);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 1024, SUM, ACL_INT32,
					  stream, NULL), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(out, sizeof(out), dev_a, 1024,
					  ACL_MEMCPY_DEVICE_TO_HOST, stream), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(stream), 0);
	for (i = 0; i < 256; i++)
		ck_assert_int_eq(out[i], 2);
	/* The default stream (NULL) too; count 0 is nothing to do. */
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 0, SUM, ACL_INT32,
					  NULL, NULL), 0);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4, SUM, ACL_INT32,
					  NULL, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	ck_assert_int_eq(((int32_t *)dev_a)[0], 3);
	ck_assert_int_eq(((int32_t *)dev_a)[1], 2);
}
END_TEST

START_TEST(refusals)
{
	static const aclDataType unmapped[] = {
		ACL_INT64, ACL_UINT64, ACL_DOUBLE, ACL_BOOL, ACL_DT_UNDEFINED,
		(aclDataType)99,
	};
	static const aclDataType unreduced[] = { ACL_INT4, ACL_UINT8,
						 ACL_UINT16 };
	int32_t host[4];
	void *doomed;
	size_t i;

	ck_assert_int_eq(aclrtReduceAsync(NULL, dev_b, 4, SUM, ACL_INT32,
					  stream, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, NULL, 4, SUM, ACL_INT32,
					  stream, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4, SUM, ACL_INT32,
					  stream, dev_a),
			 ACL_ERROR_INVALID_PARAM);
	for (i = 0; i < sizeof(unmapped) / sizeof(unmapped[0]); i++)
		ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 8, SUM,
						  unmapped[i], stream, NULL),
				 ACL_ERROR_INVALID_PARAM);
	for (i = 0; i < sizeof(unreduced) / sizeof(unreduced[0]); i++)
		ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 8, SUM,
						  unreduced[i], stream, NULL),
				 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4,
					  ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL,
					  ACL_INT32, stream, NULL),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4, (aclrtReduceKind)0,
					  ACL_INT32, stream, NULL),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4, (aclrtReduceKind)14,
					  ACL_INT32, stream, NULL),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	/* Alignment, whole elements, a count that wraps. */
	ck_assert_int_eq(aclrtReduceAsync(dev_a + 2, dev_b, 4, SUM, ACL_INT32,
					  stream, NULL),
			 ACL_ERROR_RT_ADDR_UNALIGNED);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b + 1, 2, SUM, ACL_INT16,
					  stream, NULL),
			 ACL_ERROR_RT_ADDR_UNALIGNED);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 6, SUM, ACL_INT32,
					  stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, UINT64_MAX - 3, SUM,
					  ACL_INT32, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Past the buffer, host memory on either side. */
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 8192, SUM, ACL_INT32,
					  stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtReduceAsync(host, dev_b, 16, SUM, ACL_INT32,
					  stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, host, 16, SUM, ACL_INT32,
					  stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* A buffer freed before the task runs: the stream's error. */
	ck_assert_int_eq(aclrtMalloc(&doomed, 64, 2), 0);
	*(uint64_t *)dev_a = 0;
	ck_assert_int_eq(aclrtValueWait(dev_a, 1, ACL_STREAM_WAIT_VALUE_EQ,
					stream), 0);
	ck_assert_int_eq(aclrtReduceAsync(doomed, dev_b, 16, SUM, ACL_INT32,
					  stream, NULL), 0);
	ck_assert_int_eq(aclrtFree(doomed), 0);
	*(uint64_t *)dev_a = 1;
	ck_assert_int_eq(aclrtSynchronizeStream(stream),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(contexts)
{
	aclrtContext def, other;

	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCreateContext(&other, 0), 0);
	/* stream belongs to the default context, not the current one. */
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4, SUM, ACL_INT32,
					  stream, NULL),
			 ACL_ERROR_RT_STREAM_CONTEXT);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	ck_assert_int_eq(aclrtDestroyContext(other), 0);
	ck_assert_int_eq(aclrtReduceAsync(dev_a, dev_b, 4, SUM, ACL_INT32,
					  (aclrtStream)dev_a, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

static void *no_context(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)aclrtReduceAsync(dev_a, dev_b, 4, SUM,
						  ACL_INT32, NULL, NULL);
}

START_TEST(thread_without_context)
{
	pthread_t th;
	void *ret;

	ck_assert_int_eq(pthread_create(&th, NULL, no_context, NULL), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_reduce");

	acltest_require_device();
	nm_add_fx(s, integers, 30, &fx);
	nm_add_fx(s, floats, 30, &fx);
	nm_add_fx(s, stream_order, 30, &fx);
	nm_add_fx(s, refusals, 30, &fx);
	nm_add_fx(s, contexts, 30, &fx);
	nm_add_fx(s, thread_without_context, 30, &fx);
	return acltest_run(s);
}
