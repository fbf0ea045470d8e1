// SPDX-License-Identifier: MIT
/*
 * Every failing runtime call leaves its code as the calling thread's last
 * error (aclrtGetLastError, aclrtPeekAtLastError) and a message naming the
 * call (aclGetRecentErrMsg): failures of contexts, streams, callbacks,
 * notifies, memory, copies, memory information, allocators and aclInit,
 * both those a call finds itself and those a helper finds for it.  A
 * later success keeps the last error; peeking keeps it, getting clears
 * it; another thread's failures are not seen.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

static void clear_errors(void)
{
	aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	aclGetRecentErrMsg();
}

/* What a failing call left on the thread that made it. */
struct rec {
	const char *what, *fn;
	int ret, peek, peek2, get, get2;
	char msg[512];
	bool has_msg;
};

/* On any thread: gather what the call left, then clear it. */
static void gather(struct rec *r, const char *what, int ret, const char *fn)
{
	const char *m;

	r->what = what;
	r->fn = fn;
	r->ret = ret;
	r->peek = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	r->peek2 = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	m = aclGetRecentErrMsg();
	r->has_msg = m != NULL;
	snprintf(r->msg, sizeof(r->msg), "%s", m ? m : "");
	r->get = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	r->get2 = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
}

/*
 * The call returned code; peeking (twice) and getting saw code, a second
 * get success; it left one message (one failure, recorded once), which
 * begins with the call's name.
 */
static void verify(const struct rec *r, int code)
{
	size_t n = strlen(r->fn);

	ck_assert_msg(r->ret == code, "%s = %d, want %d", r->what, r->ret,
		      code);
	ck_assert_msg(r->peek == code && r->peek2 == code,
		      "%s: peeked %d then %d, want %d", r->what, r->peek,
		      r->peek2, code);
	ck_assert_msg(r->get == code, "%s: got %d, want %d", r->what, r->get,
		      code);
	ck_assert_msg(r->get2 == ACL_SUCCESS, "%s: got %d after a get",
		      r->what, r->get2);
	ck_assert_msg(r->has_msg, "%s left no message", r->what);
	ck_assert_msg(!strncmp(r->msg, r->fn, n) &&
		      (r->msg[n] == ':' || r->msg[n] == '('),
		      "%s: message \"%s\" does not name %s", r->what, r->msg,
		      r->fn);
	ck_assert_msg(!strchr(r->msg, '\n'), "%s: more than one message: %s",
		      r->what, r->msg);
}

#define ck_rec(call, code, fn) do {					\
	struct rec r_;							\
	clear_errors();							\
	gather(&r_, #call, (call), (fn));				\
	verify(&r_, (code));						\
} while (0)

/* ... and what a helper found is what the message says. */
#define ck_rec_why(call, code, fn, why) do {				\
	struct rec r_;							\
	clear_errors();							\
	gather(&r_, #call, (call), (fn));				\
	verify(&r_, (code));						\
	ck_assert_msg(strstr(r_.msg, (why)), "%s: \"%s\" lacks \"%s\"",	\
		      #call, r_.msg, (why));				\
} while (0)

static void setup(void)
{
	clear_errors();
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
}

static void teardown(void)
{
	aclrtResetDeviceForce(0);
	clear_errors();
}

/* A thread of its own, without a current context, runs fn(arg). */
static void on_bare_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, fn, arg), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}

static int bogus;			/* an address no handle has */

START_TEST(context_failures)
{
	aclrtContext primary, ctx;
	int32_t dev;

	ck_rec(aclrtSetDevice((int32_t)acltest_device_count() + 4),
	       ACL_ERROR_RT_INVALID_DEVICEID,
	       "aclrtSetDevice");
	ck_rec(aclrtResetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID,
	       "aclrtResetDevice");
	ck_rec(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtGetDevice");
	ck_rec(aclrtSetCurrentContext(&bogus), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtSetCurrentContext");
	ck_assert_int_eq(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
	ck_rec(aclrtDestroyContext(primary), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtDestroyContext");
	ck_rec(aclrtCreateContext(&ctx, (int32_t)acltest_device_count() + 2),
	       ACL_ERROR_RT_INVALID_DEVICEID,
	       "aclrtCreateContext");
	ck_rec(aclrtGetPrimaryCtxState(0, NULL, NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtGetPrimaryCtxState");
	ck_rec(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtGetDeviceCount");
	ck_rec(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtGetRunMode");

	/* No context on this thread any more: a helper's code, recorded. */
	ck_assert_int_eq(aclrtResetDeviceForce(0), ACL_SUCCESS);
	ck_rec(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL,
	       "aclrtGetDevice");
	ck_rec(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL,
	       "aclrtSynchronizeDevice");
}
END_TEST

START_TEST(init_failures)
{
	char path[] = "/tmp/acl_last_error_XXXXXX";
	int fd;

	ck_rec_why(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE,
		   "aclInit", "No such file");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "{ not json", 10), 10);
	close(fd);
	ck_rec(aclInit(path), ACL_ERROR_PARSE_FILE, "aclInit");
	unlink(path);
	ck_assert_int_eq(aclInit(NULL), ACL_SUCCESS);
	ck_rec(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
	ck_assert_int_eq(aclFinalize(), ACL_SUCCESS);
	ck_rec(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
}
END_TEST

START_TEST(stream_failures)
{
	aclrtStreamStatus st;
	aclrtContext ctx;
	aclrtStream s, s2;
	int32_t id;
	char a[8], b[8];

	ck_rec(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtCreateStream");
	ck_rec(aclrtCreateStreamWithConfig(&s, 0, 0x80000000u),
	       ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamWithConfig");
	ck_rec(aclrtStreamQuery(&bogus, &st), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtStreamQuery");
	ck_rec(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtDestroyStream");
	ck_rec(aclrtDestroyStreamForce(&bogus), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtDestroyStreamForce");
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_rec(aclrtSynchronizeStreamWithTimeout(s, -5),
	       ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStreamWithTimeout");
	ck_rec(aclrtSetStreamFailureMode(s, 99), ACL_ERROR_INVALID_PARAM,
	       "aclrtSetStreamFailureMode");
	ck_rec(aclrtStreamGetId(s, NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtStreamGetId");
	ck_rec(aclrtStreamAbort(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtStreamAbort");
	ck_rec(aclrtDeviceGetStreamPriorityRange(NULL, NULL),
	       ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetStreamPriorityRange");
	ck_rec(aclrtCtxGetCurrentDefaultStream(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtCtxGetCurrentDefaultStream");
	/* Found by the copy's checks, a helper of the call. */
	ck_rec_why(aclrtMemcpyAsync(a, sizeof(a), b, sizeof(b),
				    ACL_MEMCPY_HOST_TO_HOST, s),
		   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyAsync",
		   "within the host");
	ck_rec(aclrtMemsetAsync(NULL, 8, 0, 8, s), ACL_ERROR_INVALID_PARAM,
	       "aclrtMemsetAsync");

	/* A stream of another context, found by the stream lookup. */
	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
	ck_rec(aclrtStreamGetId(s, &id), ACL_ERROR_RT_STREAM_CONTEXT,
	       "aclrtStreamGetId");
	ck_rec(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CONTEXT,
	       "aclrtDestroyStream");
	ck_assert_int_eq(aclrtCreateStream(&s2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(s2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyContext(ctx), ACL_SUCCESS);
	ck_rec(aclrtSynchronizeStream(s), ACL_ERROR_RT_CONTEXT_NULL,
	       "aclrtSynchronizeStream");
}
END_TEST

static void nop(void *arg)
{
	(void)arg;
}

START_TEST(callback_failures)
{
	uint64_t me = (uint64_t)pthread_self();
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_rec(aclrtLaunchCallback(nop, NULL, ACL_CALLBACK_BLOCK, s),
	       ACL_ERROR_RT_STREAM_NO_CB_REG, "aclrtLaunchCallback");
	ck_rec(aclrtLaunchCallback(nop, NULL, (aclrtCallbackBlockType)7, s),
	       ACL_ERROR_INVALID_PARAM, "aclrtLaunchCallback");
	ck_rec(aclrtProcessReport(5), ACL_ERROR_RT_THREAD_SUBSCRIBE,
	       "aclrtProcessReport");
	ck_rec(aclrtProcessHostFunc(-2), ACL_ERROR_INVALID_PARAM,
	       "aclrtProcessHostFunc");
	ck_rec(aclrtUnSubscribeReport(me, s), ACL_ERROR_RT_STREAM_SUBSCRIBE,
	       "aclrtUnSubscribeReport");
	ck_assert_int_eq(aclrtSubscribeReport(me, s), ACL_SUCCESS);
	ck_rec(aclrtSubscribeReport(me, s), ACL_ERROR_RT_STREAM_SUBSCRIBE,
	       "aclrtSubscribeReport");
	ck_rec(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT,
	       "aclrtProcessReport");
	ck_assert_int_eq(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
	ck_rec(aclrtLaunchHostFunc(s, NULL, NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtLaunchHostFunc");
	ck_rec(aclrtSubscribeHostFunc(me, &bogus), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtSubscribeHostFunc");
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
}
END_TEST

START_TEST(notify_failures)
{
	aclrtNotify n;
	uint32_t id;
	char key[128];

	ck_rec(aclrtCreateNotify(NULL, 0), ACL_ERROR_INVALID_PARAM,
	       "aclrtCreateNotify");
	ck_rec(aclrtCreateNotify(&n, 0x40), ACL_ERROR_INVALID_PARAM,
	       "aclrtCreateNotify");
	ck_rec(aclrtDestroyNotify(&bogus), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtDestroyNotify");
	/* Found by the notify lookup, a helper of the call. */
	ck_rec_why(aclrtGetNotifyId(NULL, &id), ACL_ERROR_INVALID_PARAM,
		   "aclrtGetNotifyId", "notify is NULL");
	ck_rec_why(aclrtRecordNotify(&bogus, NULL), ACL_ERROR_RT_PARAM_INVALID,
		   "aclrtRecordNotify", "not a live notify");
	ck_rec(aclrtWaitAndResetNotify(&bogus, NULL, 0),
	       ACL_ERROR_RT_PARAM_INVALID, "aclrtWaitAndResetNotify");
	ck_rec(aclrtNotifyGetExportKey(&bogus, key, sizeof(key), 0),
	       ACL_ERROR_RT_PARAM_INVALID, "aclrtNotifyGetExportKey");
	/* Found by the IPC code, a helper of the call. */
	ck_rec_why(aclrtNotifyImportByKey(&n, "no such key", 0),
		   ACL_ERROR_RT_PARAM_INVALID, "aclrtNotifyImportByKey",
		   "not a key this library made");
}
END_TEST

START_TEST(memory_failures)
{
	aclrtMallocAttribute attr;
	aclrtMallocConfig cfg = { &attr, 1 };
	aclrtMemUsageInfo info[2];
	void *p, *base;
	size_t n, len;
	int local;

	ck_rec(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST),
	       ACL_ERROR_INVALID_PARAM, "aclrtMalloc");
	ck_rec_why(aclrtMallocHost(NULL, 64), ACL_ERROR_INVALID_PARAM,
		   "aclrtMallocHost", "NULL");
	ck_rec_why(aclrtFree(&local), ACL_ERROR_RT_PARAM_INVALID, "aclrtFree",
		   "not the start of a live device buffer");
	ck_rec(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost");
	ck_rec(aclrtFreeWithDevSync(&local), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtFreeWithDevSync");
	ck_rec(aclrtMemFlush(NULL, 64), ACL_ERROR_INVALID_PARAM,
	       "aclrtMemFlush");
	ck_rec(aclrtMemInvalidate(&local, sizeof(local)),
	       ACL_ERROR_RT_PARAM_INVALID, "aclrtMemInvalidate");
	ck_rec(aclrtMemGetAddressRange(&local, &base, &len),
	       ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAddressRange");
	ck_rec(aclrtGetMemUsageInfo((int32_t)acltest_device_count(), info, 2,
				    &n),
	       ACL_ERROR_RT_INVALID_DEVICEID, "aclrtGetMemUsageInfo");
	memset(&attr, 0, sizeof(attr));
	attr.attr = ACL_RT_MEM_ATTR_DEVICE_ID;
	attr.value.deviceId = 4;
	ck_rec(aclrtMallocWithCfg(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST, &cfg),
	       ACL_ERROR_RT_INVALID_DEVICEID, "aclrtMallocWithCfg");
	ck_rec(aclrtPointerGetAttributes(NULL, NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtPointerGetAttributes");
	ck_rec(aclrtMemGetAllocationGranularity(NULL, 0, &n),
	       ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationGranularity");
}
END_TEST

START_TEST(copy_failures)
{
	size_t free_b, total_b;
	void *d;
	char h[64];

	ck_assert_int_eq(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	ck_rec(aclrtMemcpy(NULL, 8, h, 8, ACL_MEMCPY_HOST_TO_DEVICE),
	       ACL_ERROR_INVALID_PARAM, "aclrtMemcpy");
	ck_rec_why(aclrtMemcpy(d, 16, h, 32, ACL_MEMCPY_HOST_TO_DEVICE),
		   ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpy", "above destMax");
	ck_rec(aclrtMemset(d, 16, 0, 32), ACL_ERROR_RT_PARAM_INVALID,
	       "aclrtMemset");
	ck_rec(aclrtMemsetD32((char *)d + 1, 16, 0, 2),
	       ACL_ERROR_INVALID_PARAM, "aclrtMemsetD32");
	ck_rec(aclrtMemsetD32Async(d, 64, 0, 1000, NULL),
	       ACL_ERROR_INVALID_PARAM, "aclrtMemsetD32Async");
	ck_rec(aclrtMemcpy2d(d, 8, h, 8, 16, 2, ACL_MEMCPY_HOST_TO_DEVICE),
	       ACL_ERROR_INVALID_PARAM, "aclrtMemcpy2d");
	ck_rec(aclrtMemcpy2dAsync(d, 16, h, 16, 16, 8,
				  ACL_MEMCPY_HOST_TO_DEVICE, NULL),
	       ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpy2dAsync");

	/* aclrtGetMemInfo (meminfo.c) while here. */
	ck_rec(aclrtGetMemInfo(ACL_DDR_MEM, NULL, &total_b),
	       ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo");
	ck_rec(aclrtGetMemInfo((aclrtMemAttr)999, &free_b, &total_b),
	       ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo");
	ck_assert_int_eq(aclrtFree(d), ACL_SUCCESS);
}
END_TEST

START_TEST(allocator_failures)
{
	aclrtAllocatorDesc desc;
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	desc = aclrtAllocatorCreateDesc();
	ck_assert_ptr_nonnull(desc);
	ck_rec(aclrtAllocatorDestroyDesc(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtAllocatorDestroyDesc");
	ck_rec(aclrtAllocatorSetObjToDesc(desc, NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtAllocatorSetObjToDesc");
	ck_rec(aclrtAllocatorRegister(s, desc), ACL_ERROR_INVALID_PARAM,
	       "aclrtAllocatorRegister");
	ck_rec(aclrtAllocatorGetByStream(s, &desc, NULL, NULL, NULL, NULL,
					 NULL),
	       ACL_ERROR_INVALID_PARAM, "aclrtAllocatorGetByStream");
	ck_rec(aclrtAllocatorUnregister(NULL), ACL_ERROR_INVALID_PARAM,
	       "aclrtAllocatorUnregister");
	ck_assert_int_eq(aclrtAllocatorDestroyDesc(desc), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
}
END_TEST

/* Failures of calls that need a context, on a thread without one. */
#define NO_CTX_CALLS	4

#define gather_on(r, call, fn) do {					\
	clear_errors();							\
	gather((r), #call, (call), (fn));				\
} while (0)

static void *no_context(void *arg)
{
	struct rec *r = arg;
	size_t f, t;
	void *p;
	aclrtNotify n;

	gather_on(&r[0], aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST),
		  "aclrtMalloc");
	/* No explanation from a helper: the code's words. */
	gather_on(&r[1], aclrtGetMemInfo(ACL_DDR_MEM, &f, &t),
		  "aclrtGetMemInfo");
	gather_on(&r[2], aclrtCreateNotify(&n, 0), "aclrtCreateNotify");
	gather_on(&r[3], aclrtLaunchHostFunc(NULL, nop, NULL),
		  "aclrtLaunchHostFunc");
	return NULL;
}

START_TEST(helper_codes_without_context)
{
	struct rec r[NO_CTX_CALLS];
	int i;

	/* Checked here: Check's assertions belong on the test's thread. */
	on_bare_thread(no_context, r);
	for (i = 0; i < NO_CTX_CALLS; i++) {
		verify(&r[i], ACL_ERROR_RT_CONTEXT_NULL);
		ck_assert_msg(strstr(r[i].msg, "no current context"), "%s",
			      r[i].msg);
	}
}
END_TEST

START_TEST(success_keeps_last_error)
{
	aclrtStreamStatus st;
	aclrtNotify n;
	aclrtStream s;
	void *d;
	char h[32];
	const char *m;

	clear_errors();
	ck_assert_int_eq(aclrtStreamQuery(&bogus, &st),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Successes of every kind: none clears the code or the message. */
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&d, 32, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_SUCCESS);
	memset(h, 7, sizeof(h));
	ck_assert_int_eq(aclrtMemcpy(d, 32, h, 32, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemsetAsync(d, 32, 0, 32, s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateNotify(&n, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyNotify(n), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(d), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_PARAM_INVALID);
	m = aclGetRecentErrMsg();
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strncmp(m, "aclrtStreamQuery: ", 18), "message: %s", m);
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_PARAM_INVALID);

	/* The newest failure is the one kept. */
	ck_assert_int_eq(aclrtFree(h), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_INVALID_PARAM);
	m = aclGetRecentErrMsg();
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strncmp(m, "aclrtCreateStream: ", 19) &&
		      strstr(m, "\naclrtFree: "), "messages: %s", m);
}
END_TEST

/* ---- per thread ---- */

struct other {
	int ret, peek;
	char msg[256];
};

static void *fail_on_other(void *arg)
{
	struct other *o = arg;
	const char *m;

	clear_errors();
	o->ret = aclrtSetDevice(7);
	o->peek = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	m = aclGetRecentErrMsg();
	snprintf(o->msg, sizeof(o->msg), "%s", m ? m : "(null)");
	return NULL;
}

START_TEST(per_thread)
{
	struct other o;
	aclrtStream s;
	const char *m;

	/* B fails while A has no error: A still has none. */
	clear_errors();
	on_bare_thread(fail_on_other, &o);
	ck_assert_int_eq(o.ret, ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(o.peek, ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_msg(!strncmp(o.msg, "aclrtSetDevice(7): ", 19), "%s", o.msg);
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL),
			 ACL_SUCCESS);
	ck_assert_ptr_null(aclGetRecentErrMsg());

	/* A's own failure is not replaced by B's. */
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtStreamAbort(NULL), ACL_ERROR_INVALID_PARAM);
	on_bare_thread(fail_on_other, &o);
	ck_assert_int_eq(o.peek, ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_INVALID_PARAM);
	m = aclGetRecentErrMsg();
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(!strncmp(m, "aclrtStreamAbort: ", 18), "%s", m);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
}
END_TEST

static const struct nm_fixture fixture = {
	.setup = setup, .teardown = teardown,
};

int main(void)
{
	Suite *s = suite_create("acl_last_error");
	const TTest *tests[] = {
		context_failures, stream_failures, callback_failures,
		notify_failures, memory_failures, copy_failures,
		allocator_failures, helper_codes_without_context,
		success_keeps_last_error, per_thread,
	};

	acltest_require_device();
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		nm_add_fx(s, tests[i], 60, &fixture);
	/* aclInit/aclFinalize: no device set around them. */
	nm_add(s, init_failures, 30);
	return acltest_run(s);
}
