// SPDX-License-Identifier: MIT
/*
 * aclrtRandomNumAsync: uniform numbers of every type stay in [min, max)
 * and cover it, normal ones have their mean and spread, truncated ones
 * stay within two standard deviations, dropout masks keep the right share
 * of bits; a seed and counter give the same numbers again and the counter
 * moves on; parameters may be read from device memory; every refusal has
 * its code (taskInfo NULL or a type never generated 100000; the rest of a
 * bad task 107000, at the call or at the stream's synchronisation; no
 * context 107002; another context's stream 107003).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "acltest_device.h"
#include "acl/acl.h"

#define N 4096

static aclrtStream stream;
static unsigned char *out, *ctr, *par;

static void setup(void)
{
	acltest_set_device();
	ck_assert_int_eq(aclrtCreateStream(&stream), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&out, N * 8, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&ctr, 16, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&par, 64, 2), 0);
	memset(ctr, 0, 16);
}

static void teardown(void)
{
	acltest_reset_device();
}

static const struct nm_fixture fx = { .setup = setup, .teardown = teardown };

static void val(aclrtRandomParaInfo *p, const void *v, uint8_t size)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->valueOrAddr, v, size);
	p->size = size;
}

static void addr(aclrtRandomParaInfo *p, const void *a)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->valueOrAddr, &a, sizeof(a));
	p->size = sizeof(a);
	p->isAddr = 1;
}

static aclrtRandomNumTaskInfo task(aclrtRandomNumFuncType func,
				   aclDataType type, uint64_t seed,
				   uint64_t num)
{
	aclrtRandomNumTaskInfo t;

	memset(&t, 0, sizeof(t));
	t.dataType = type;
	t.randomNumFuncParaInfo.funcType = func;
	t.randomResultAddr = out;
	t.randomCounterAddr = ctr;
	val(&t.randomSeed, &seed, 8);
	val(&t.randomNum, &num, 8);
	return t;
}

static void go(const aclrtRandomNumTaskInfo *t)
{
	ck_assert_int_eq(aclrtRandomNumAsync(t, stream, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(stream), 0);
}

START_TEST(uniform_float_repeatable)
{
	aclrtRandomNumTaskInfo t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
					ACL_FLOAT, 42, N);
	static float first[N];
	float lo = -2.0f, hi = 3.0f, *f = (float *)out;
	unsigned char c1[16], zero[16] = { 0 };
	int buckets[5] = { 0 };
	size_t i;

	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
	go(&t);
	for (i = 0; i < N; i++) {
		ck_assert(f[i] >= lo && f[i] < hi);
		buckets[(int)(f[i] - lo)]++;
	}
	for (i = 0; i < 5; i++)
		ck_assert_int_gt(buckets[i], N / 5 - N / 20);
	memcpy(first, f, sizeof(first));
	memcpy(c1, ctr, 16);
	ck_assert_mem_ne(c1, zero, 16);
	/* The counter moved on: new numbers. */
	go(&t);
	ck_assert_mem_ne(first, f, sizeof(first));
	/* Same seed and counter: the same numbers. */
	memset(ctr, 0, 16);
	go(&t);
	ck_assert_mem_eq(first, f, sizeof(first));
	ck_assert_mem_eq(c1, ctr, 16);
	/* Another seed: others. */
	memset(ctr, 0, 16);
	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_FLOAT, 43, N);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
	go(&t);
	ck_assert_mem_ne(first, f, sizeof(first));
}
END_TEST

START_TEST(uniform_integers)
{
	aclrtRandomNumTaskInfo t;
	int32_t lo = -5, hi = 5, *v = (int32_t *)out;
	uint64_t ulo = 1ULL << 63, uhi = (1ULL << 63) + 3, *u = (uint64_t *)out;
	int64_t same = -7, *s = (int64_t *)out;
	uint32_t seed32 = 9;
	int seen[10] = { 0 };
	size_t i;

	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_INT32, 1, 1000);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
	val(&t.randomSeed, &seed32, 4);		/* a 4-byte seed is taken */
	go(&t);
	for (i = 0; i < 1000; i++) {
		ck_assert(v[i] >= lo && v[i] < hi);
		seen[v[i] - lo]++;
	}
	for (i = 0; i < 10; i++)
		ck_assert_int_gt(seen[i], 0);

	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_UINT64, 2, 500);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &ulo, 8);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &uhi, 8);
	go(&t);
	for (i = 0; i < 500; i++)
		ck_assert(u[i] >= ulo && u[i] < uhi);

	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_INT64, 3, 10);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &same, 8);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &same, 8);
	go(&t);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(s[i], -7);
}
END_TEST

START_TEST(half_types)
{
	aclrtRandomNumTaskInfo t;
	uint16_t lo = 0x3c00, hi = 0x4000;	/* fp16 1.0, 2.0 */
	uint16_t blo = 0xc000, bhi = 0xbf80;	/* bf16 -2.0, -1.0 */
	uint16_t *h = (uint16_t *)out;
	size_t i;

	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_FLOAT16, 5, N);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 2);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 2);
	go(&t);
	for (i = 0; i < N; i++)
		ck_assert(h[i] >= 0x3c00 && h[i] <= 0x4000);
	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_BF16, 5, N);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &blo, 2);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &bhi, 2);
	go(&t);
	/* Negative bf16 in [-2, -1]: bits 0xbf80..0xc000. */
	for (i = 0; i < N; i++)
		ck_assert(h[i] >= 0xbf80 && h[i] <= 0xc000);
}
END_TEST

START_TEST(normal)
{
	aclrtRandomNumTaskInfo t;
	float mean = 10.0f, sd = 2.0f, *f = (float *)out;
	double sum = 0, sq = 0, m, var;
	size_t i;

	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ACL_FLOAT, 7, N);
	val(&t.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, &mean, 4);
	val(&t.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev, &sd, 4);
	go(&t);
	for (i = 0; i < N; i++) {
		sum += f[i];
		sq += (double)f[i] * f[i];
	}
	m = sum / N;
	var = sq / N - m * m;
	ck_assert_msg(fabs(m - 10.0) < 0.2, "mean %f", m);
	ck_assert_msg(fabs(sqrt(var) - 2.0) < 0.2, "stddev %f", sqrt(var));

	t.randomNumFuncParaInfo.funcType =
		ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS;
	go(&t);
	for (i = 0; i < N; i++)
		ck_assert(f[i] >= 6.0f && f[i] <= 14.0f);
}
END_TEST

START_TEST(dropout)
{
	aclrtRandomNumTaskInfo t;
	float ratio = 0.25f, none = 0.0f, all = 1.0f;
	size_t i, ones = 0;

	memset(out, 0xee, 1024);
	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ACL_FLOAT, 8,
		 8001);
	val(&t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation,
	    &ratio, 4);
	go(&t);
	for (i = 0; i < 1000; i++)
		ones += __builtin_popcount(out[i]);
	ones += out[1000] & 1;
	ck_assert_msg(ones > 5700 && ones < 6300, "%zu of 8001 kept", ones);
	ck_assert_int_eq(out[1000] & 0xfe, 0);	/* past bit 8000: zero */
	ck_assert_int_eq(out[1001], 0xee);	/* past the mask: untouched */

	val(&t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation,
	    &none, 4);
	go(&t);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(out[i], 0xff);
	val(&t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation,
	    &all, 4);
	go(&t);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(out[i], 0);
}
END_TEST

/* Seed, count and max read from device memory when the task runs. */
START_TEST(parameters_in_device_memory)
{
	aclrtRandomNumTaskInfo t;
	uint64_t *seed = (uint64_t *)par, *num = (uint64_t *)(par + 8);
	int32_t *hi = (int32_t *)(par + 16), lo = 0, *v = (int32_t *)out;
	size_t i;

	*seed = 11;
	*num = 100;
	*hi = 1;
	memset(out, 0x7f, 404);
	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_INT32, 0, 0);
	addr(&t.randomSeed, seed);
	addr(&t.randomNum, num);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
	addr(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, hi);
	go(&t);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(v[i], 0);
	ck_assert_int_eq(v[100], 0x7f7f7f7f);
	/* A bad value found only when the task runs: the stream's error. */
	*hi = -1;
	ck_assert_int_eq(aclrtRandomNumAsync(&t, stream, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(stream),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(refusals)
{
	aclrtRandomNumTaskInfo t, bad;
	float lo = 0, hi = 1;
	int32_t host[16];

	t = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_FLOAT, 1, 16);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
	val(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
	ck_assert_int_eq(aclrtRandomNumAsync(NULL, stream, NULL),
			 ACL_ERROR_INVALID_PARAM);
	bad = t;
	bad.dataType = ACL_INT8;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_INVALID_PARAM);
	bad.dataType = ACL_DOUBLE;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtRandomNumAsync(&t, stream, out),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	bad.randomNumFuncParaInfo.funcType = (aclrtRandomNumFuncType)4;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	bad.dataType = ACL_INT32;	/* normal numbers are floats */
	bad.randomNumFuncParaInfo.funcType =
		ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	bad.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.size = 2;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	bad.randomSeed.isAddr = 2;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	val(&bad.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &hi, 4);
	val(&bad.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &lo, 4);
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ACL_FLOAT, 1, 16);
	val(&bad.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, &lo, 4);
	val(&bad.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev,
	    &(float){ -1.0f }, 4);
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ACL_FLOAT, 1,
		   16);
	val(&bad.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation,
	    &(float){ 1.5f }, 4);
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad.dataType = ACL_INT32;	/* the ratio is a float */
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	bad.randomResultAddr = host;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad.randomResultAddr = NULL;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	bad.randomCounterAddr = NULL;
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad.randomCounterAddr = ctr + 56;	/* runs past the 64 reserved */
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	val(&bad.randomNum, &(uint64_t){ N * 8 / 4 + 16 }, 8);	/* > +32 */
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	bad = t;
	addr(&bad.randomSeed, host);	/* a pointer into host memory */
	ck_assert_int_eq(aclrtRandomNumAsync(&bad, stream, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(stream),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtRandomNumAsync(&t, stream, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(stream), 0);
}
END_TEST

static aclrtRandomNumTaskInfo shared;

static void *no_context(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)aclrtRandomNumAsync(&shared, NULL, NULL);
}

START_TEST(contexts)
{
	aclrtContext def, other;
	float lo = 0, hi = 1;
	pthread_t th;
	void *ret;

	shared = task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_FLOAT, 1, 4);
	val(&shared.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
	val(&shared.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCreateContext(&other, 0), 0);
	ck_assert_int_eq(aclrtRandomNumAsync(&shared, stream, NULL),
			 ACL_ERROR_RT_STREAM_CONTEXT);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	ck_assert_int_eq(aclrtDestroyContext(other), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, no_context, NULL), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_random");

	acltest_require_device();
	nm_add_fx(s, uniform_float_repeatable, 30, &fx);
	nm_add_fx(s, uniform_integers, 30, &fx);
	nm_add_fx(s, half_types, 30, &fx);
	nm_add_fx(s, normal, 30, &fx);
	nm_add_fx(s, dropout, 30, &fx);
	nm_add_fx(s, parameters_in_device_memory, 30, &fx);
	nm_add_fx(s, refusals, 30, &fx);
	nm_add_fx(s, contexts, 30, &fx);
	return acltest_run(s);
}
