// SPDX-License-Identifier: MIT
/*
 * Contexts and the stream calls around them, with CANN's model:
 * aclrtSetDevice makes the default context current; aclrtCreateContext makes
 * another and makes it current; a context can be made current on any
 * thread; each context has its own default stream; streams of one context
 * are refused from another (ACL_ERROR_RT_STREAM_CONTEXT); destroying a
 * context destroys its streams and leaves threads that used it without a
 * context (ACL_ERROR_RT_CONTEXT_NULL); the default context cannot be
 * destroyed that way and goes with the device's last reset.  Stream
 * failure mode, query, abort, priorities and ids are checked here too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acltest_gate.h"
#include "acl/acl.h"

START_TEST(set_device_makes_default_current)
{
	aclrtContext c1, c2;
	int32_t dev = -1, active = 0;
	uint32_t flags = 1;

	ck_assert_int_eq(aclrtGetCurrentContext(&c1), ACL_SUCCESS);
	ck_assert_ptr_nonnull(c1);
	ck_assert_int_eq(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
	/* A second SetDevice gives the same default context. */
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetCurrentContext(&c2), ACL_SUCCESS);
	ck_assert_ptr_eq(c1, c2);
	ck_assert_int_eq(aclrtGetDevice(&dev), ACL_SUCCESS);
	ck_assert_int_eq(dev, 0);
	ck_assert_int_eq(aclrtGetPrimaryCtxState(0, &flags, &active), 0);
	ck_assert_int_eq(active, 1);
	ck_assert_int_eq(flags, 0);
	ck_assert_int_eq(aclrtGetPrimaryCtxState((int32_t)acltest_device_count(),
						 &flags, &active),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	/* flags is reserved: CANN's callers pass NULL. */
	active = 0;
	ck_assert_int_eq(aclrtGetPrimaryCtxState(0, NULL, &active), 0);
	ck_assert_int_eq(active, 1);
	ck_assert_int_eq(aclrtGetPrimaryCtxState(0, &flags, NULL),
			 ACL_ERROR_INVALID_PARAM);
	/* The default context cannot be destroyed, only reset. */
	ck_assert_int_eq(aclrtDestroyContext(c1), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	/* Still referenced once: alive, but this thread lost it. */
	ck_assert_int_eq(aclrtGetPrimaryCtxState(0, &flags, &active), 0);
	ck_assert_int_eq(active, 1);
	ck_assert_int_eq(aclrtGetCurrentContext(&c2), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetCurrentContext(c1), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetPrimaryCtxState(0, &flags, &active), 0);
	ck_assert_int_eq(active, 0);
	/* Dead now: neither current nor settable. */
	ck_assert_int_eq(aclrtSetCurrentContext(c1), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetCurrentContext(&c2), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
}
END_TEST

START_TEST(create_destroy_switch)
{
	aclrtContext def, ctx, cur;
	void *p;

	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateContext(&ctx,
					    (int32_t)acltest_device_count()),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtCreateContext(&ctx, -1),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_ptr_ne(ctx, def);
	/* Creating made it current. */
	ck_assert_int_eq(aclrtGetCurrentContext(&cur), 0);
	ck_assert_ptr_eq(cur, ctx);
	/* Memory works in any context and outlives it. */
	ck_assert_int_eq(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	ck_assert_int_eq(aclrtGetCurrentContext(&cur), 0);
	ck_assert_ptr_eq(cur, def);
	ck_assert_int_eq(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetCurrentContext(&cur),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtSetCurrentContext(ctx), 0);
	ck_assert_int_eq(aclrtDestroyContext(ctx), ACL_SUCCESS);
	/* It was current here: no context now. */
	ck_assert_int_eq(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMalloc(&cur, 64, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtDestroyContext(ctx), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetCurrentContext(ctx), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	memset(p, 0x5a, 4096);
	ck_assert_int_eq(aclrtFree(p), 0);
}
END_TEST

/* A created context survives the device's reset; the default one not. */
START_TEST(created_context_survives_reset)
{
	aclrtContext ctx, cur;
	aclrtStream s;
	unsigned char *p, host[256];

	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtGetCurrentContext(&cur), 0);
	ck_assert_ptr_eq(cur, ctx);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&p, 256, 2), 0);
	ck_assert_int_eq(aclrtMemsetAsync(p, 256, 0x77, 256, s), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(host, 256, p, 256,
					  ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(host[0], 0x77);
	ck_assert_int_eq(host[255], 0x77);
	ck_assert_int_eq(aclrtFree(p), 0);
	/* Destroying the context destroys its stream too. */
	ck_assert_int_eq(aclrtDestroyContext(ctx), 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(streams_belong_to_their_context)
{
	aclrtContext def, ctx;
	aclrtStream s_def, s_ctx, dflt_def, dflt_ctx;
	int32_t id1 = -1, id2 = -1;

	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCreateStream(&s_def), 0);
	ck_assert_int_eq(aclrtCtxGetCurrentDefaultStream(&dflt_def), 0);
	ck_assert_ptr_nonnull(dflt_def);
	ck_assert_int_eq(aclrtCtxGetCurrentDefaultStream(NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), 0);
	ck_assert_int_eq(aclrtCreateStream(&s_ctx), 0);
	ck_assert_int_eq(aclrtCtxGetCurrentDefaultStream(&dflt_ctx), 0);
	/* Each context has a default stream of its own. */
	ck_assert_ptr_ne(dflt_def, dflt_ctx);
	ck_assert_int_eq(aclrtSynchronizeStream(dflt_ctx), 0);
	/* Another context's streams are refused. */
	ck_assert_int_eq(aclrtSynchronizeStream(s_def),
			 ACL_ERROR_RT_STREAM_CONTEXT);
	ck_assert_int_eq(aclrtSynchronizeStream(dflt_def),
			 ACL_ERROR_RT_STREAM_CONTEXT);
	ck_assert_int_eq(aclrtDestroyStream(s_def), ACL_ERROR_RT_STREAM_CONTEXT);
	ck_assert_int_eq(aclrtStreamGetId(s_ctx, &id1), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	ck_assert_int_eq(aclrtStreamGetId(s_def, &id2), 0);
	ck_assert_int_ne(id1, id2);
	ck_assert_int_eq(aclrtSynchronizeStream(s_ctx),
			 ACL_ERROR_RT_STREAM_CONTEXT);
	/* The default stream's handle cannot be destroyed. */
	ck_assert_int_eq(aclrtDestroyStream(dflt_def), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s_def), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(ctx), 0);
	ck_assert_int_eq(aclrtDestroyContext(ctx), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
}
END_TEST

/* One context shared by threads, each with its own stream. */
struct worker_arg {
	aclrtContext ctx;
	int index;
	int rounds;
	int err;
};

static void *ctx_worker(void *p)
{
	struct worker_arg *w = p;
	unsigned char *dev = NULL, host[4096];
	aclrtStream s = NULL;
	aclrtContext cur;
	int i, ret;

	ret = aclrtSetCurrentContext(w->ctx);
	if (!ret)
		ret = aclrtGetCurrentContext(&cur);
	if (!ret && cur != w->ctx)
		ret = -1;
	if (!ret)
		ret = aclrtCreateStream(&s);
	if (!ret)
		ret = aclrtMalloc((void **)&dev, sizeof(host), 2);
	for (i = 0; !ret && i < 50; i++) {
		int v = (w->index * 50 + i) & 0xff;

		ret = aclrtMemsetAsync(dev, sizeof(host), v, sizeof(host), s);
		if (!ret)
			ret = aclrtMemcpyAsync(host, sizeof(host), dev,
					       sizeof(host),
					       ACL_MEMCPY_DEVICE_TO_HOST, s);
		if (!ret)
			ret = aclrtSynchronizeStream(s);
		if (!ret && (host[0] != v || host[sizeof(host) - 1] != v))
			ret = -2;
		if (!ret)
			w->rounds++;
	}
	if (dev)
		aclrtFree(dev);
	if (s && aclrtDestroyStream(s) && !ret)
		ret = -3;
	w->err = ret;
	return NULL;
}

START_TEST(context_shared_by_threads)
{
	enum { N = 4 };
	struct worker_arg w[N];
	pthread_t t[N];
	aclrtContext ctx;
	int i;

	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), 0);
	for (i = 0; i < N; i++) {
		w[i] = (struct worker_arg){ .ctx = ctx, .index = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, ctx_worker, &w[i]),
				 0);
	}
	for (i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(w[i].err == 0, "thread %d: %d after %d rounds", i,
			      w[i].err, w[i].rounds);
		ck_assert_int_eq(w[i].rounds, 50);
	}
	ck_assert_int_eq(aclrtDestroyContext(ctx), 0);
}
END_TEST

/* A thread whose context another thread destroys loses it. */
struct gone_arg {
	aclrtContext ctx;
	pthread_barrier_t set, destroyed;
	int before, after, set_again;
};

static void *check_ctx_gone(void *p)
{
	struct gone_arg *g = p;
	aclrtContext cur;

	g->before = aclrtSetCurrentContext(g->ctx);
	if (!g->before)
		g->before = aclrtGetCurrentContext(&cur);
	pthread_barrier_wait(&g->set);
	pthread_barrier_wait(&g->destroyed);
	g->after = aclrtGetCurrentContext(&cur);
	/* g->ctx is dangling now: the library must only look it up. */
	g->set_again = aclrtSetCurrentContext(g->ctx);
	return NULL;
}

START_TEST(destroyed_elsewhere_means_no_context)
{
	struct gone_arg g = { 0 };
	aclrtContext def;
	aclrtStream s;
	pthread_t t;

	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCreateContext(&g.ctx, 0), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	pthread_barrier_init(&g.set, NULL, 2);
	pthread_barrier_init(&g.destroyed, NULL, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, check_ctx_gone, &g), 0);
	pthread_barrier_wait(&g.set);
	/* Destroyed from a thread where it is not current. */
	ck_assert_int_eq(aclrtDestroyContext(g.ctx), 0);
	pthread_barrier_wait(&g.destroyed);
	pthread_join(t, NULL);
	ck_assert_int_eq(g.before, 0);
	ck_assert_int_eq(g.after, ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(g.set_again, ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	pthread_barrier_destroy(&g.set);
	pthread_barrier_destroy(&g.destroyed);
}
END_TEST

START_TEST(stream_config_query_ids)
{
	aclrtStream s;
	aclrtStreamStatus st;
	int32_t least = -1, greatest = -1, id;
	uint32_t prio = 99, flags = 99;

	ck_assert_int_eq(aclrtDeviceGetStreamPriorityRange(&least, &greatest),
			 0);
	ck_assert_int_eq(least, 7);
	ck_assert_int_eq(greatest, 0);
	ck_assert_int_eq(aclrtDeviceGetStreamPriorityRange(NULL, &greatest),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateStreamWithConfig(&s, 3,
						     ACL_STREAM_FAST_LAUNCH), 0);
	ck_assert_int_eq(aclrtStreamGetPriority(s, &prio), 0);
	ck_assert_uint_eq(prio, 3);
	ck_assert_int_eq(aclrtStreamGetFlags(s, &flags), 0);
	ck_assert_uint_eq(flags, ACL_STREAM_FAST_LAUNCH);
	ck_assert_int_eq(aclrtStreamGetId(s, &id), 0);
	ck_assert_int_eq(aclrtStreamGetId(s, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtStreamQuery(s, &st), 0);
	ck_assert_int_eq(st, ACL_STREAM_STATUS_COMPLETE);
	ck_assert_int_eq(aclrtStreamQuery(s, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtStreamQuery(s, &st), ACL_ERROR_RT_PARAM_INVALID);
	/* A priority past the least is clamped, unknown flags refused. */
	ck_assert_int_eq(aclrtCreateStreamWithConfig(&s, 100, 0), 0);
	ck_assert_int_eq(aclrtStreamGetPriority(s, &prio), 0);
	ck_assert_uint_eq(prio, 7);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtCreateStreamWithConfig(&s, 0, 0x80000000U),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateStreamWithConfig(NULL, 0, 0),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

/*
 * Hold stream s with a wait on a device word nobody writes: unlike a host
 * function, it gives up when the stream is aborted, so the abort that
 * discards what is queued behind it needs no one to release it first.
 * *word is freed by the caller.
 */
static void hold_until_abort(aclrtStream s, uint64_t **word)
{
	ck_assert_int_eq(aclrtMalloc((void **)word, 8, 2), 0);
	**word = 0;
	ck_assert_int_eq(aclrtValueWait(*word, 1, ACL_STREAM_WAIT_VALUE_EQ, s),
			 0);
}

START_TEST(query_not_ready_then_timeout)
{
	struct acltest_gate gate;
	aclrtStream s;
	aclrtStreamStatus st;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	/* Work that lasts until the test lets it go. */
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtStreamQuery(s, &st), 0);
	ck_assert_int_eq(st, ACL_STREAM_STATUS_NOT_READY);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, 10),
			 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
	/* 0 only checks (CANN). */
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, 0),
			 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
	ck_assert_int_eq(aclrtSynchronizeDeviceWithTimeout(0),
			 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
	ck_assert_int_eq(aclrtSynchronizeDeviceWithTimeout(-5),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, -2),
			 ACL_ERROR_INVALID_PARAM);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, -1), 0);
	ck_assert_int_eq(aclrtStreamQuery(s, &st), 0);
	ck_assert_int_eq(st, ACL_STREAM_STATUS_COMPLETE);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, 0), 0);
	ck_assert_int_eq(aclrtSynchronizeDeviceWithTimeout(1000), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

START_TEST(failure_mode)
{
	struct acltest_gate gate;
	unsigned char *a, host[64];
	aclrtStream s;
	int mode;

	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	for (mode = 0; mode < 2; mode++) {
		ck_assert_int_eq(aclrtCreateStream(&s), 0);
		ck_assert_int_eq(aclrtSetStreamFailureMode(s, mode ?
					ACL_STOP_ON_FAILURE :
					ACL_CONTINUE_ON_FAILURE), 0);
		ck_assert_int_eq(aclrtMemsetAsync(a, 64, 1, 64, s), 0);
		ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
		/* Hold the stream, queue a copy from a buffer freed before
		 * it runs, then a fill that only a live stream performs. */
		acltest_gate_hold(&gate, s);
		{
			void *doomed;

			ck_assert_int_eq(aclrtMalloc(&doomed, 64, 2), 0);
			ck_assert_int_eq(aclrtMemcpyAsync(host, 64, doomed, 64,
					ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
			ck_assert_int_eq(aclrtFree(doomed), 0);
		}
		ck_assert_int_eq(aclrtMemsetAsync(a, 64, 2, 64, s), 0);
		acltest_gate_open(&gate);
		ck_assert_int_ne(aclrtSynchronizeStream(s), 0);
		/* Continue ran the fill; stop skipped it. */
		ck_assert_int_eq(a[0], mode ? 1 : 2);
		/* The error was collected: the stream works again. */
		ck_assert_int_eq(aclrtMemsetAsync(a, 64, 3, 64, s), 0);
		ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
		ck_assert_int_eq(a[63], 3);
		ck_assert_int_eq(aclrtDestroyStream(s), 0);
	}
	ck_assert_int_eq(aclrtSetStreamFailureMode(NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtSetStreamFailureMode(s, 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

START_TEST(abort_discards_queued_work)
{
	unsigned char *a;
	uint64_t *word;
	aclrtStream s;
	int i;

	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	ck_assert_int_eq(aclrtMemset(a, 64, 0, 64), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	hold_until_abort(s, &word);
	for (i = 1; i <= 100; i++)
		ck_assert_int_eq(aclrtMemsetAsync(a, 64, i, 64, s), 0);
	ck_assert_int_eq(aclrtStreamAbort(s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(a[0], 0);
	/* Usable afterwards. */
	ck_assert_int_eq(aclrtMemsetAsync(a, 64, 9, 64, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(a[0], 9);
	ck_assert_int_eq(aclrtStreamAbort(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

START_TEST(config_handles_and_attributes)
{
	aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
	aclrtStreamAttrValue v;
	uint32_t prio = 9, flags = 9, avail1, avail2, sw = 7;
	size_t flag = ACL_STREAM_FAST_SYNC;
	aclrtStream s;

	ck_assert_ptr_nonnull(h);
	prio = 5;
	ck_assert_int_eq(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY,
						 &prio, sizeof(prio)), 0);
	ck_assert_int_eq(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flag,
						 sizeof(flag)), 0);
	ck_assert_int_eq(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY,
						 &prio, 2), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetStreamConfigOpt(h, (aclrtStreamConfigAttr)9,
						 &prio, 4), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetStreamConfigOpt(NULL, ACL_RT_STREAM_PRIORITY,
						 &prio, 4), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetStreamAvailableNum(&avail1), 0);
	ck_assert_int_eq(aclrtCreateStreamV2(&s, h), 0);
	ck_assert_int_eq(aclrtGetStreamAvailableNum(&avail2), 0);
	ck_assert_uint_eq(avail2, avail1 - 1);
	ck_assert_int_eq(aclrtStreamGetPriority(s, &prio), 0);
	ck_assert_uint_eq(prio, 5);
	ck_assert_int_eq(aclrtStreamGetFlags(s, &flags), 0);
	ck_assert_uint_eq(flags, ACL_STREAM_FAST_SYNC);
	ck_assert_int_eq(aclrtDestroyStreamConfigHandle(h), 0);
	ck_assert_int_eq(aclrtDestroyStreamConfigHandle(NULL),
			 ACL_ERROR_INVALID_PARAM);

	/* Attributes: failure mode is the real one, the others are kept. */
	v.failureMode = ACL_STOP_ON_FAILURE;
	ck_assert_int_eq(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE,
						 &v), 0);
	v.failureMode = 99;
	ck_assert_int_eq(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE,
						 &v), 0);
	ck_assert_uint_eq(v.failureMode, ACL_STOP_ON_FAILURE);
	v.failureMode = 5;
	ck_assert_int_eq(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE,
						 &v), ACL_ERROR_INVALID_PARAM);
	v.userCustomTag = 1234;
	ck_assert_int_eq(aclrtSetStreamAttribute(s,
			ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v), 0);
	v.userCustomTag = 0;
	ck_assert_int_eq(aclrtGetStreamAttribute(s,
			ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v), 0);
	ck_assert_uint_eq(v.userCustomTag, 1234);
	v.streamPriority = 2;
	ck_assert_int_eq(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY,
						 &v), 0);
	ck_assert_int_eq(aclrtStreamGetPriority(s, &prio), 0);
	ck_assert_uint_eq(prio, 2);
	ck_assert_int_eq(aclrtGetStreamAttribute(s, (aclrtStreamAttr)77, &v),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY,
						 NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetStreamOverflowSwitch(s, 1), 0);
	ck_assert_int_eq(aclrtGetStreamOverflowSwitch(s, &sw), 0);
	ck_assert_uint_eq(sw, 1);
	ck_assert_int_eq(aclrtStreamStop(s), 0);
	ck_assert_int_eq(aclrtStreamStop(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtGetStreamAvailableNum(&avail2), 0);
	ck_assert_uint_eq(avail2, avail1);
	/* A NULL configuration is the defaults. */
	ck_assert_int_eq(aclrtCreateStreamV2(&s, NULL), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

struct seen {
	int n;
	int states[8];
	void *streams[8];
	int32_t devs[8];
};

static void stream_state_cb(aclrtStream stm, aclrtStreamState state,
			    void *args)
{
	struct seen *w = args;

	if (w->n < 8) {
		w->streams[w->n] = stm;
		w->states[w->n++] = state;
	}
}

static void device_state_cb(int32_t dev, aclrtDeviceState state, void *args)
{
	struct seen *w = args;

	if (w->n < 8) {
		w->devs[w->n] = dev;
		w->states[w->n++] = state;
	}
}

static int32_t abort_cb(int32_t dev, aclrtDeviceTaskAbortStage stage,
			uint32_t timeout, void *args)
{
	struct seen *w = args;

	(void)dev;
	(void)timeout;
	if (w->n < 8)
		w->states[w->n++] = stage;
	return 0;
}

static int32_t refuse_cb(int32_t dev, aclrtDeviceTaskAbortStage stage,
			 uint32_t timeout, void *args)
{
	(void)dev;
	(void)stage;
	(void)timeout;
	(void)args;
	return 1;
}

START_TEST(state_callbacks)
{
	struct seen st = { 0 }, dv = { 0 }, ab = { 0 };
	unsigned char *a;
	uint64_t *word;
	aclrtStream s;
	int i;

	ck_assert_int_eq(aclrtRegStreamStateCallback("t", stream_state_cb, &st),
			 0);
	ck_assert_int_eq(aclrtRegStreamStateCallback(NULL, stream_state_cb,
						     &st), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtRegStreamStateCallback("", stream_state_cb, &st),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(st.n, 2);
	ck_assert_int_eq(st.states[0], ACL_RT_STREAM_STATE_CREATE_POST);
	ck_assert_int_eq(st.states[1], ACL_RT_STREAM_STATE_DESTROY_PRE);
	ck_assert_ptr_eq(st.streams[0], s);
	ck_assert_ptr_eq(st.streams[1], s);
	/* NULL removes it. */
	ck_assert_int_eq(aclrtRegStreamStateCallback("t", NULL, NULL), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(st.n, 2);

	/* Device state: only when the device comes into and out of use. */
	ck_assert_int_eq(aclrtRegDeviceStateCallback("t", device_state_cb, &dv),
			 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);	/* a second reference */
	ck_assert_int_eq(dv.n, 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(dv.n, 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);	/* the last */
	ck_assert_int_eq(dv.n, 2);
	ck_assert_int_eq(dv.states[0], ACL_RT_DEVICE_STATE_RESET_PRE);
	ck_assert_int_eq(dv.states[1], ACL_RT_DEVICE_STATE_RESET_POST);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(dv.n, 4);
	ck_assert_int_eq(dv.states[2], ACL_RT_DEVICE_STATE_SET_PRE);
	ck_assert_int_eq(dv.states[3], ACL_RT_DEVICE_STATE_SET_POST);
	ck_assert_int_eq(dv.devs[3], 0);
	ck_assert_int_eq(aclrtRegDeviceStateCallback("t", NULL, NULL), 0);

	/* Task abort: queued work dropped, callbacks before and after. */
	ck_assert_int_eq(aclrtSetDeviceTaskAbortCallback("t", abort_cb, &ab), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	ck_assert_int_eq(aclrtMemset(a, 64, 0, 64), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	hold_until_abort(s, &word);
	for (i = 1; i <= 20; i++)
		ck_assert_int_eq(aclrtMemsetAsync(a, 64, i, 64, s), 0);
	ck_assert_int_eq(aclrtDeviceTaskAbort(0, 1000), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(a[0], 0);
	ck_assert_int_eq(ab.n, 2);
	ck_assert_int_eq(ab.states[0], ACL_RT_DEVICE_TASK_ABORT_PRE);
	ck_assert_int_eq(ab.states[1], ACL_RT_DEVICE_TASK_ABORT_POST);
	ck_assert_int_eq(aclrtDeviceTaskAbort((int32_t)acltest_device_count(),
					      1000),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtSetDeviceTaskAbortCallback("no", refuse_cb, NULL),
			 0);
	ck_assert_int_eq(aclrtDeviceTaskAbort(0, 1000),
			 ACL_ERROR_RT_TASK_ABORT_STOP);
	ck_assert_int_eq(aclrtSetDeviceTaskAbortCallback("no", NULL, NULL), 0);
	ck_assert_int_eq(aclrtSetDeviceTaskAbortCallback("t", NULL, NULL), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

static struct {
	int calls;
	uint32_t stream_id, code, task;
	uint32_t dev;
} exc;

static void exception_cb(aclrtExceptionInfo *info)
{
	exc.calls++;
	exc.stream_id = aclrtGetStreamIdFromExceptionInfo(info);
	exc.code = aclrtGetErrorCodeFromExceptionInfo(info);
	exc.dev = aclrtGetDeviceIdFromExceptionInfo(info);
	exc.task = aclrtGetTaskIdFromExceptionInfo(info);
}

/* A queued task that fails reaches the exception callbacks, once. */
START_TEST(failed_task_reports_exception)
{
	struct acltest_gate gate;
	unsigned char host[64];
	aclrtStream s;
	int32_t id;
	void *doomed;

	ck_assert_int_eq(aclrtExceptionInfoCallbackRegister(exception_cb), 0);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtStreamGetId(s, &id), 0);
	ck_assert_int_eq(aclrtMalloc(&doomed, 64, 2), 0);
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtMemcpyAsync(host, 64, doomed, 64,
					  ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
	ck_assert_int_eq(aclrtFree(doomed), 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(exc.calls, 1);
	ck_assert_uint_eq(exc.stream_id, (uint32_t)id);
	ck_assert_uint_eq(exc.code, ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_uint_eq(exc.dev, 0);
	ck_assert_uint_eq(exc.task, 1);	/* the second task of the stream */
	/* A wait given up because of an abort is not an exception. */
	ck_assert_int_eq(aclrtMalloc(&doomed, 64, 2), 0);
	*(uint64_t *)doomed = 0;
	ck_assert_int_eq(aclrtValueWait(doomed, 1, ACL_STREAM_WAIT_VALUE_EQ, s),
			 0);
	usleep(50000);
	ck_assert_int_eq(aclrtStreamAbort(s), 0);
	ck_assert_int_eq(exc.calls, 1);
	ck_assert_int_eq(aclrtFree(doomed), 0);
	ck_assert_int_eq(aclrtExceptionInfoCallbackUnregister(exception_cb), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_context");

	acltest_require_device();
	nm_add_fx(s, set_device_makes_default_current, 30, &acltest_device);
	nm_add_fx(s, create_destroy_switch, 30, &acltest_device);
	nm_add_fx(s, created_context_survives_reset, 30, &acltest_device);
	nm_add_fx(s, streams_belong_to_their_context, 30, &acltest_device);
	nm_add_fx(s, context_shared_by_threads, 120, &acltest_device);
	nm_add_fx(s, destroyed_elsewhere_means_no_context, 30, &acltest_device);
	nm_add_fx(s, stream_config_query_ids, 30, &acltest_device);
	nm_add_fx(s, query_not_ready_then_timeout, 30, &acltest_device);
	nm_add_fx(s, failure_mode, 60, &acltest_device);
	nm_add_fx(s, abort_discards_queued_work, 30, &acltest_device);
	nm_add_fx(s, config_handles_and_attributes, 30, &acltest_device);
	nm_add_fx(s, state_callbacks, 60, &acltest_device);
	nm_add_fx(s, failed_task_reports_exception, 30, &acltest_device);
	return acltest_run(s);
}
