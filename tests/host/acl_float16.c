// SPDX-License-Identifier: MIT
/*
 * libaclmem's pure logic of errors and numbers, on the host: aclFloat16
 * conversions (every half value, and floats against the compiler's own
 * IEEE _Float16 conversion), aclDataTypeSize, the per-thread last error and
 * recent messages, and the exception callbacks.  Linked with libaclmem.a.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"
#include "../../lib/errors.h"
#include "../../lib/log.h"

static uint32_t fbits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

static float bitsf(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

/* CANN's reading of a half with the all-ones exponent. */
static float saturated_value(uint16_t h)
{
	float v = (1.0f + (float)(h & 0x3FF) / 1024.0f) * 65536.0f;

	return (h & 0x8000) ? -v : v;
}

START_TEST(half_to_float_all)
{
	uint32_t h;

	for (h = 0; h <= 0xFFFF; h++) {
		float got = aclFloat16ToFloat((aclFloat16)h);
		float want;
		_Float16 ref;

		if (((h >> 10) & 0x1F) == 0x1F) {
			want = saturated_value((uint16_t)h);
		} else {
			uint16_t hb = (uint16_t)h;

			memcpy(&ref, &hb, sizeof(ref));
			want = (float)ref;
		}
		ck_assert_msg(fbits(got) == fbits(want),
			      "half %#06x -> %a, want %a", h, got, want);
	}
}
END_TEST

START_TEST(half_round_trip_all)
{
	uint32_t h;

	for (h = 0; h <= 0xFFFF; h++) {
		aclFloat16 back = aclFloatToFloat16(aclFloat16ToFloat((aclFloat16)h));
		uint16_t want = (uint16_t)h;

		/* Inf/NaN halves read as >= 65536, which saturates. */
		if (((h >> 10) & 0x1F) == 0x1F)
			want = (h & 0x8000) ? 0xFBFF : 0x7BFF;
		ck_assert_msg(back == want, "half %#06x -> %#06x, want %#06x",
			      h, back, want);
	}
}
END_TEST

/* The compiler's IEEE conversion, with overflow/Inf/NaN saturated as CANN. */
static uint16_t ref_to_half(float f)
{
	_Float16 r = (_Float16)f;
	uint16_t b;

	memcpy(&b, &r, sizeof(b));
	if (((b >> 10) & 0x1F) == 0x1F)
		b = (b & 0x8000) | 0x7BFF;
	return b;
}

static void check_float(uint32_t bits)
{
	float f = bitsf(bits);
	uint16_t got = aclFloatToFloat16(f), want = ref_to_half(f);

	if (isnan(f))
		want = (bits & 0x80000000U) ? 0xFBFF : 0x7BFF;
	ck_assert_msg(got == want, "float %#010x (%a) -> %#06x, want %#06x",
		      bits, f, got, want);
}

START_TEST(float_to_half_exponents)
{
	uint32_t e, m, s;
	/* Mantissas around every rounding boundary of a half. */
	static const uint32_t mans[] = {
		0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2FFF, 0x3000,
		0x3001, 0x7FE000, 0x7FEFFF, 0x7FF000, 0x7FF001, 0x7FFFFF,
		0x400000, 0x401000, 0x403000, 0x555555, 0x2AAAAA,
	};

	for (s = 0; s < 2; s++)
		for (e = 0; e < 256; e++)
			for (m = 0; m < sizeof(mans) / sizeof(mans[0]); m++)
				check_float(s << 31 | e << 23 | mans[m]);
}
END_TEST

START_TEST(float_to_half_sweep)
{
	uint64_t bits;
	/* Every float from 2^-26 to past 65536, stepping a prime. */
	for (bits = 0x32800000ULL; bits < 0x47900000ULL; bits += 4093)
		check_float((uint32_t)bits);
	/* Every float in the range of subnormal halves, exactly. */
	for (bits = 0x32000000ULL; bits < 0x38800000ULL; bits += 1)
		if ((bits & 0xFFF) == 0 || (bits & 0xFFF) == 0xFFF ||
		    (bits & 0x7F) == 0)
			check_float((uint32_t)bits);
}
END_TEST

START_TEST(float_to_half_documented)
{
	/* CANN's documented values of the saturation mode. */
	ck_assert_uint_eq(aclFloatToFloat16(INFINITY), 0x7BFF);
	ck_assert_uint_eq(aclFloatToFloat16(-INFINITY), 0xFBFF);
	ck_assert_uint_eq(aclFloatToFloat16(NAN), 0x7BFF);
	ck_assert_uint_eq(aclFloatToFloat16(65504.0f), 0x7BFF);
	ck_assert_uint_eq(aclFloatToFloat16(65520.0f), 0x7BFF);
	ck_assert_uint_eq(aclFloatToFloat16(1e10f), 0x7BFF);
	ck_assert_uint_eq(aclFloatToFloat16(1.0f), 0x3C00);
	ck_assert_uint_eq(aclFloatToFloat16(-2.0f), 0xC000);
	ck_assert_uint_eq(aclFloatToFloat16(0.0f), 0x0000);
	ck_assert_uint_eq(aclFloatToFloat16(-0.0f), 0x8000);
	/* Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10. */
	ck_assert_uint_eq(aclFloatToFloat16(1.0f + 0x1p-11f), 0x3C00);
	ck_assert_uint_eq(aclFloatToFloat16(1.0f + 0x3p-11f), 0x3C02);
	/* Smallest subnormal, and half of it (a tie to even: zero). */
	ck_assert_uint_eq(aclFloatToFloat16(0x1p-24f), 0x0001);
	ck_assert_uint_eq(aclFloatToFloat16(0x1p-25f), 0x0000);
	ck_assert_uint_eq(aclFloatToFloat16(0x1.0001p-25f), 0x0001);
	ck_assert_float_eq(aclFloat16ToFloat(0x7C00), 65536.0f);
	ck_assert_float_eq(aclFloat16ToFloat(0xFC00), -65536.0f);
	ck_assert_float_eq(aclFloat16ToFloat(0x7E00), 98304.0f);
	ck_assert_float_eq(aclFloat16ToFloat(0x0001), 0x1p-24f);
	ck_assert_float_eq(aclFloat16ToFloat(0x3555), 0x1.554p-2f);
}
END_TEST

START_TEST(data_type_sizes)
{
	static const struct {
		aclDataType t;
		size_t size;
	} cases[] = {
		{ ACL_DT_UNDEFINED, 0 }, { ACL_FLOAT, 4 }, { ACL_FLOAT16, 2 },
		{ ACL_INT8, 1 }, { ACL_INT32, 4 }, { ACL_UINT8, 1 },
		{ ACL_INT16, 2 }, { ACL_UINT16, 2 }, { ACL_UINT32, 4 },
		{ ACL_INT64, 8 }, { ACL_UINT64, 8 }, { ACL_DOUBLE, 8 },
		{ ACL_BOOL, 1 }, { ACL_STRING, 0 }, { ACL_COMPLEX64, 8 },
		{ ACL_COMPLEX128, 16 }, { ACL_BF16, 2 }, { ACL_INT4, 1 },
		{ ACL_UINT1, 1 }, { ACL_COMPLEX32, 4 }, { ACL_HIFLOAT8, 1 },
		{ ACL_FLOAT8_E5M2, 1 }, { ACL_FLOAT8_E4M3FN, 1 },
		{ ACL_FLOAT8_E8M0, 1 }, { ACL_FLOAT6_E3M2, 1 },
		{ ACL_FLOAT6_E2M3, 1 }, { ACL_FLOAT4_E2M1, 1 },
		{ ACL_FLOAT4_E1M2, 1 }, { ACL_HIFLOAT4, 1 },
		{ ACL_HIFLOAT4_SCALE, 1 }, { (aclDataType)5, 0 },
		{ (aclDataType)14, 0 }, { (aclDataType)44, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(aclDataTypeSize(cases[i].t) == cases[i].size,
			      "type %d: %zu, want %zu", cases[i].t,
			      aclDataTypeSize(cases[i].t), cases[i].size);
}
END_TEST

START_TEST(enum_values)
{
	/* CANN's values: ABI shared with programs built against CANN. */
	ck_assert_int_eq(ACL_BF16, 27);
	ck_assert_int_eq(ACL_HIFLOAT4_SCALE, 43);
	ck_assert_int_eq(ACL_COMPLEX32, 33);
	ck_assert_int_eq(ACL_CANN_ATTR_JIT_COMPILE, 2);
	ck_assert_int_eq(ACL_DEVICE_INFO_L2_SIZE, 2);
	ck_assert_int_eq(ACL_RT_THREAD_LEVEL, 0);
	ck_assert_int_eq(ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, 301);
	ck_assert_int_eq(ACL_DEV_ATTR_NPU_ARCH, 601);
	ck_assert_int_eq(ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE, 204);
	ck_assert_int_eq(ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, 21);
	ck_assert_int_eq(ACL_RT_DEV_RES_VECTOR_CORE, 1);
	ck_assert_int_eq(ACL_RT_DEVICE_STATUS_END, 0xFFFF);
	ck_assert_int_eq(ACL_RT_ERROR_OTHERS, 0xFFFF);
	ck_assert_uint_eq(sizeof(aclFloat16), 2);
	ck_assert_uint_eq(sizeof(aclrtUuid), 16);
	ck_assert_uint_eq(sizeof(aclrtUtilizationInfo), 24);
	ck_assert_uint_eq(sizeof(aclrtMemUceInfo), 128);
	ck_assert_uint_eq(sizeof(aclrtErrorInfo), 8 + 8 + 20 * 128);
}
END_TEST

/* ---- last error and recent messages ---- */

START_TEST(last_error_get_clears_peek_keeps)
{
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
	ck_assert_int_eq(aclmem_fail(ACL_ERROR_RT_PARAM_INVALID, "first"),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclmem_fail(ACL_ERROR_INVALID_PARAM, "second %d", 2),
			 ACL_ERROR_INVALID_PARAM);
	/* The last failure wins. */
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
	/* A level CANN does not have. */
	ck_assert_int_eq(aclrtGetLastError((aclrtLastErrLevel)1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtPeekAtLastError((aclrtLastErrLevel)-1),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(recent_msg_newest_first_then_cleared)
{
	const char *m;

	ck_assert_ptr_null(aclGetRecentErrMsg());
	aclmem_fail(ACL_ERROR_INVALID_PARAM, "older %s", "one");
	aclmem_err("newer %d", 2);		/* logging also records */
	m = aclGetRecentErrMsg();
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m, "newer 2\nolder one");
	ck_assert_ptr_null(aclGetRecentErrMsg());
	/* Warnings are not failures. */
	aclmem_warn("just a warning");
	ck_assert_ptr_null(aclGetRecentErrMsg());
	/* aclmem_err does not set the code: only aclmem_fail does. */
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(recent_msg_bounded)
{
	const char *m;
	char big[600];
	int i;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 100; i++)
		aclmem_fail(ACL_ERROR_INVALID_PARAM, "msg %d %s", i, big);
	m = aclGetRecentErrMsg();
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_lt(strlen(m), 4096);
	/* Newest first, each line cut to 511 bytes, whole lines kept. */
	ck_assert_int_eq(strncmp(m, "msg 99 x", 8), 0);
	ck_assert_ptr_nonnull(strstr(m, "\nmsg 98 x"));
	ck_assert_ptr_null(strstr(m, "msg 80 "));
	ck_assert_ptr_null(strstr(m, "\n\n"));
	ck_assert_int_ne(m[strlen(m) - 1], '\n');
	aclrtGetLastError(ACL_RT_THREAD_LEVEL);
}
END_TEST

struct thr {
	pthread_barrier_t *bar;
	int code;
	int seen_code;
	char seen_msg[64];
};

static void *thr_fail(void *arg)
{
	struct thr *t = arg;
	const char *m;

	aclmem_fail(t->code, "thread %d", t->code);
	pthread_barrier_wait(t->bar);	/* both have failed before reading */
	t->seen_code = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	m = aclGetRecentErrMsg();
	snprintf(t->seen_msg, sizeof(t->seen_msg), "%s", m ? m : "(null)");
	return NULL;
}

START_TEST(errors_are_per_thread)
{
	pthread_barrier_t bar;
	struct thr t[2] = {
		{ &bar, ACL_ERROR_INVALID_PARAM, 0, "" },
		{ &bar, ACL_ERROR_RT_INVALID_DEVICEID, 0, "" },
	};
	pthread_t th[2];
	int i;

	pthread_barrier_init(&bar, NULL, 2);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, thr_fail, &t[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	ck_assert_int_eq(t[0].seen_code, ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(t[1].seen_code, ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_str_eq(t[0].seen_msg, "thread 100000");
	ck_assert_str_eq(t[1].seen_msg, "thread 107001");
	/* Nothing leaked into this thread. */
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
	ck_assert_ptr_null(aclGetRecentErrMsg());
}
END_TEST

/* ---- exception callbacks ---- */

static int calls_a, calls_b;
static uint32_t seen[5];

static void cb_a(aclrtExceptionInfo *info)
{
	calls_a++;
	seen[0] = aclrtGetTaskIdFromExceptionInfo(info);
	seen[1] = aclrtGetStreamIdFromExceptionInfo(info);
	seen[2] = aclrtGetThreadIdFromExceptionInfo(info);
	seen[3] = aclrtGetDeviceIdFromExceptionInfo(info);
	seen[4] = aclrtGetErrorCodeFromExceptionInfo(info);
}

static void cb_b(aclrtExceptionInfo *info)
{
	(void)info;
	calls_b++;
}

/* Unregisters itself from inside a report: must not deadlock. */
static void cb_self(aclrtExceptionInfo *info)
{
	(void)info;
	calls_b += 100;
	aclrtExceptionInfoCallbackUnregister(cb_self);
}

/* What the kernel getters gave in a report. */
static aclError k_func_ret, k_args_ret;
static void *k_func, *k_args;
static uint32_t k_len;

static void cb_kernel(aclrtExceptionInfo *info)
{
	k_func = k_args = NULL;
	k_len = 0;
	k_func_ret = aclrtGetFuncHandleFromExceptionInfo(info, &k_func);
	k_args_ret = aclrtGetArgsFromExceptionInfo(info, &k_args, &k_len);
}

START_TEST(exception_kernel_details)
{
	static char args[24] = "packed arguments";
	struct aclmem_exception_kernel handle = { &handle, args, sizeof(args) };
	struct aclmem_exception_kernel bare = { NULL, NULL, 0 };

	ck_assert_int_eq(aclrtSetExceptionInfoCallback(cb_kernel), ACL_SUCCESS);
	/* A kernel launched through a handle: both come back. */
	aclmem_exception_report(1, 2, 0, ACL_ERROR_RT_AICORE_TRAP_EXCEPTION, &handle);
	ck_assert_int_eq(k_func_ret, ACL_SUCCESS);
	ck_assert_ptr_eq(k_func, &handle);
	ck_assert_int_eq(k_args_ret, ACL_SUCCESS);
	ck_assert_ptr_eq(k_args, args);
	ck_assert_uint_eq(k_len, sizeof(args));
	/* Without a handle (<<<>>>), and no kernel at all: refused. */
	aclmem_exception_report(1, 3, 0, ACL_ERROR_RT_AICORE_TRAP_EXCEPTION, &bare);
	ck_assert_int_eq(k_func_ret, ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(k_args_ret, (aclError)0xFFFFFFFFU);
	ck_assert_ptr_null(k_func);
	ck_assert_uint_eq(k_len, 0);
	aclmem_exception_report(1, 4, 0, ACL_ERROR_RT_PARAM_INVALID, NULL);
	ck_assert_int_eq(k_func_ret, ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(k_args_ret, (aclError)0xFFFFFFFFU);
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(NULL), ACL_SUCCESS);
	aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	aclGetRecentErrMsg();
}
END_TEST

START_TEST(exception_callbacks)
{
	calls_a = calls_b = 0;
	/* Nothing registered: a report is a no-op. */
	aclmem_exception_report(1, 2, 0, 507011, NULL);
	ck_assert_int_eq(calls_a + calls_b, 0);

	ck_assert_int_eq(aclrtSetExceptionInfoCallback(cb_a), ACL_SUCCESS);
	aclmem_exception_report(7, 42, 0, ACL_ERROR_RT_PARAM_INVALID, NULL);
	ck_assert_int_eq(calls_a, 1);
	ck_assert_uint_eq(seen[0], 42);
	ck_assert_uint_eq(seen[1], 7);
	ck_assert_uint_eq(seen[2], (uint32_t)syscall(SYS_gettid));
	ck_assert_uint_eq(seen[3], 0);
	ck_assert_uint_eq(seen[4], ACL_ERROR_RT_PARAM_INVALID);

	/* Set replaces; NULL clears. */
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(cb_b), ACL_SUCCESS);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	ck_assert_int_eq(calls_a, 1);
	ck_assert_int_eq(calls_b, 1);
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(NULL), ACL_SUCCESS);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	ck_assert_int_eq(calls_b, 1);

	/* Register: several, no duplicates, unknown unregister succeeds. */
	ck_assert_int_eq(aclrtExceptionInfoCallbackRegister(cb_a), ACL_SUCCESS);
	ck_assert_int_eq(aclrtExceptionInfoCallbackRegister(cb_a), ACL_SUCCESS);
	ck_assert_int_eq(aclrtExceptionInfoCallbackRegister(cb_b), ACL_SUCCESS);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	ck_assert_int_eq(calls_a, 2);
	ck_assert_int_eq(calls_b, 2);
	ck_assert_int_eq(aclrtExceptionInfoCallbackUnregister(cb_a), ACL_SUCCESS);
	ck_assert_int_eq(aclrtExceptionInfoCallbackUnregister(cb_a), ACL_SUCCESS);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	ck_assert_int_eq(calls_a, 2);
	ck_assert_int_eq(calls_b, 3);
	/* Set and registered, the same function: called once. */
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(cb_b), ACL_SUCCESS);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	ck_assert_int_eq(calls_b, 4);
	aclrtSetExceptionInfoCallback(NULL);
	ck_assert_int_eq(aclrtExceptionInfoCallbackUnregister(cb_b), ACL_SUCCESS);

	ck_assert_int_eq(aclrtExceptionInfoCallbackRegister(cb_self), ACL_SUCCESS);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	aclmem_exception_report(1, 1, 0, 1, NULL);
	ck_assert_int_eq(calls_b, 104);

	ck_assert_int_eq(aclrtExceptionInfoCallbackRegister(NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtExceptionInfoCallbackUnregister(NULL),
			 ACL_ERROR_INVALID_PARAM);
	aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	aclGetRecentErrMsg();

	/* CANN: 0xFFFFFFFF for a NULL info. */
	ck_assert_uint_eq(aclrtGetTaskIdFromExceptionInfo(NULL), 0xFFFFFFFFU);
	ck_assert_uint_eq(aclrtGetStreamIdFromExceptionInfo(NULL), 0xFFFFFFFFU);
	ck_assert_uint_eq(aclrtGetThreadIdFromExceptionInfo(NULL), 0xFFFFFFFFU);
	ck_assert_uint_eq(aclrtGetDeviceIdFromExceptionInfo(NULL), 0xFFFFFFFFU);
	ck_assert_uint_eq(aclrtGetErrorCodeFromExceptionInfo(NULL), 0xFFFFFFFFU);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_float16");

	nm_add(s, half_to_float_all, 60);
	nm_add(s, half_round_trip_all, 60);
	nm_add(s, float_to_half_exponents, 60);
	nm_add(s, float_to_half_sweep, 120);
	nm_add(s, float_to_half_documented, 10);
	nm_add(s, data_type_sizes, 10);
	nm_add(s, enum_values, 10);
	nm_add(s, last_error_get_clears_peek_keeps, 10);
	nm_add(s, recent_msg_newest_first_then_cleared, 10);
	nm_add(s, recent_msg_bounded, 10);
	nm_add(s, errors_are_per_thread, 30);
	nm_add(s, exception_callbacks, 10);
	nm_add(s, exception_kernel_details, 10);
	return acltest_run(s);
}
