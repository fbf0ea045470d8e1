// SPDX-License-Identifier: MIT
/*
 * Callbacks as CANN's samples use them: a thread of the program's own,
 * subscribed to a stream with aclrtSubscribeReport, runs aclrtProcessReport
 * in a loop; callbacks launched on the stream run on that thread, in stream
 * order; ACL_CALLBACK_BLOCK holds the stream until the callback returned.
 * Also: the errors for unsubscribed streams and threads, timeouts, double
 * subscriptions, host functions, and callbacks under load from several
 * streams served by one thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest_device.h"
#include "nmtest_sys.h"
#include "acl/acl.h"

/*
 * How long a test waits for the stream's worker to hand over a report or
 * a host function: the wait ends when it does, and a loaded TCG guest
 * (or valgrind) can keep the worker from running for many seconds.
 */
#define REPORT_WAIT_S	120

struct reporter {
	pthread_t thread;
	aclrtContext ctx;
	atomic_bool stop;
	atomic_int processed;
	atomic_int timeouts;
	int other_error;
};

static void *report_loop(void *p)
{
	struct reporter *r = p;
	int ret;

	aclrtSetCurrentContext(r->ctx);
	while (!atomic_load(&r->stop)) {
		ret = aclrtProcessReport(100);
		if (ret == ACL_SUCCESS)
			atomic_fetch_add(&r->processed, 1);
		else if (ret == ACL_ERROR_RT_REPORT_TIMEOUT)
			atomic_fetch_add(&r->timeouts, 1);
		else if (ret != ACL_ERROR_RT_THREAD_SUBSCRIBE)
			r->other_error = ret;
		if (ret == ACL_ERROR_RT_THREAD_SUBSCRIBE)
			usleep(1000);
	}
	return NULL;
}

static void reporter_start(struct reporter *r)
{
	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(aclrtGetCurrentContext(&r->ctx), 0);
	ck_assert_int_eq(pthread_create(&r->thread, NULL, report_loop, r), 0);
}

static void reporter_stop(struct reporter *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	ck_assert_int_eq(r->other_error, 0);
}

struct cb_rec {
	pthread_t ran_on;
	int order;
	atomic_int *counter;
	useconds_t sleep_us;
};

static void record_cb(void *p)
{
	struct cb_rec *c = p;

	if (c->sleep_us)
		usleep(c->sleep_us);
	c->ran_on = pthread_self();
	c->order = atomic_fetch_add(c->counter, 1);
}

START_TEST(callbacks_run_on_subscribed_thread_in_order)
{
	struct reporter r;
	struct cb_rec rec[8];
	atomic_int counter = 0;
	unsigned char *a;
	aclrtStream s;
	int i;

	reporter_start(&r);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	ck_assert_int_eq(aclrtSubscribeReport((uint64_t)r.thread, s), 0);
	ck_assert_int_eq(aclrtSubscribeReport((uint64_t)r.thread, s),
			 ACL_ERROR_RT_STREAM_SUBSCRIBE);
	for (i = 0; i < 8; i++) {
		rec[i] = (struct cb_rec){ .counter = &counter, .order = -1,
					  .sleep_us = i == 0 ? 100000 : 0 };
		ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec[i],
				i % 2 ? ACL_CALLBACK_NO_BLOCK :
					ACL_CALLBACK_BLOCK, s), 0);
	}
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	/*
	 * The last one may be NO_BLOCK: wait until the thread ran it, for as
	 * long as a stalled guest may keep it from running.
	 */
	{
		double end = nm_now() + REPORT_WAIT_S;

		while (atomic_load(&counter) < 8 && nm_now() < end)
			usleep(10000);
	}
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(rec[i].order, i);
		ck_assert_msg(pthread_equal(rec[i].ran_on, r.thread),
			      "callback %d ran on another thread", i);
	}
	/* BLOCK holds the stream: work after it sees the callback done. */
	rec[0] = (struct cb_rec){ .counter = &counter, .order = -1,
				  .sleep_us = 200000 };
	ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec[0],
					     ACL_CALLBACK_BLOCK, s), 0);
	ck_assert_int_eq(aclrtMemsetAsync(a, 64, 0x42, 64, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(rec[0].order, 8);
	ck_assert_int_eq(a[0], 0x42);
	ck_assert_int_eq(aclrtUnSubscribeReport((uint64_t)r.thread, s), 0);
	ck_assert_int_eq(aclrtUnSubscribeReport((uint64_t)r.thread, s),
			 ACL_ERROR_RT_STREAM_SUBSCRIBE);
	ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec[0],
					     ACL_CALLBACK_BLOCK, s),
			 ACL_ERROR_RT_STREAM_NO_CB_REG);
	reporter_stop(&r);
	ck_assert_int_ge(atomic_load(&r.processed), 9);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

START_TEST(process_report_errors)
{
	aclrtStream s;
	static atomic_int counter;
	struct cb_rec rec = { .counter = &counter };

	/* Not subscribed to anything. */
	ck_assert_int_eq(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
	ck_assert_int_eq(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec,
					     ACL_CALLBACK_BLOCK, s),
			 ACL_ERROR_RT_STREAM_NO_CB_REG);
	/* Subscribed (this thread, by kernel tid too): timeouts. */
	ck_assert_int_eq(aclrtSubscribeReport((uint64_t)pthread_self(), s), 0);
	ck_assert_int_eq(aclrtProcessReport(20), ACL_ERROR_RT_REPORT_TIMEOUT);
	ck_assert_int_eq(aclrtProcessReport(0), ACL_ERROR_RT_REPORT_TIMEOUT);
	ck_assert_int_eq(aclrtLaunchCallback(NULL, &rec, ACL_CALLBACK_BLOCK, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec, 2, s),
			 ACL_ERROR_INVALID_PARAM);
	/* NO_BLOCK: this thread runs it in its own ProcessReport. */
	ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec,
					     ACL_CALLBACK_NO_BLOCK, s), 0);
	ck_assert_int_eq(aclrtProcessReport(REPORT_WAIT_S * 1000), 0);
	ck_assert_msg(pthread_equal(rec.ran_on, pthread_self()), "wrong thread");
	ck_assert_int_eq(aclrtUnSubscribeReport((uint64_t)pthread_self(), s), 0);
	ck_assert_int_eq(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

/* Callbacks still queued when the thread unsubscribes are not lost. */
START_TEST(unsubscribe_runs_leftovers)
{
	aclrtStream s;
	atomic_int counter = 0;
	struct cb_rec rec[3];
	int i;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtSubscribeReport((uint64_t)pthread_self(), s), 0);
	for (i = 0; i < 3; i++) {
		rec[i] = (struct cb_rec){ .counter = &counter, .order = -1 };
		ck_assert_int_eq(aclrtLaunchCallback(record_cb, &rec[i],
				ACL_CALLBACK_NO_BLOCK, s), 0);
	}
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(atomic_load(&counter), 0);
	ck_assert_int_eq(aclrtUnSubscribeReport((uint64_t)pthread_self(), s), 0);
	ck_assert_int_eq(atomic_load(&counter), 3);
	ck_assert_int_eq(rec[2].order, 2);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

static void bump(void *p)
{
	atomic_fetch_add((atomic_int *)p, 1);
}

/* One report thread serving four streams under load. */
START_TEST(callbacks_under_load)
{
	enum { STREAMS = 4, PER = 200 };
	struct reporter r;
	aclrtStream s[STREAMS];
	atomic_int count = 0;
	int i, j;

	reporter_start(&r);
	for (i = 0; i < STREAMS; i++) {
		ck_assert_int_eq(aclrtCreateStream(&s[i]), 0);
		ck_assert_int_eq(aclrtSubscribeReport((uint64_t)r.thread, s[i]),
				 0);
	}
	for (j = 0; j < PER; j++)
		for (i = 0; i < STREAMS; i++)
			ck_assert_int_eq(aclrtLaunchCallback(bump, &count,
					j % 3 ? ACL_CALLBACK_NO_BLOCK :
						ACL_CALLBACK_BLOCK, s[i]), 0);
	for (i = 0; i < STREAMS; i++)
		ck_assert_int_eq(aclrtSynchronizeStream(s[i]), 0);
	for (i = 0; i < STREAMS; i++) {
		ck_assert_int_eq(aclrtUnSubscribeReport((uint64_t)r.thread,
							s[i]), 0);
		ck_assert_int_eq(aclrtDestroyStream(s[i]), 0);
	}
	/* Unsubscribing ran whatever the thread had not reached. */
	ck_assert_int_eq(atomic_load(&count), STREAMS * PER);
	reporter_stop(&r);
}
END_TEST

START_TEST(host_func_in_order)
{
	aclrtStream s;
	atomic_int counter = 0;
	struct cb_rec rec = { .counter = &counter, .order = -1 };
	unsigned char *a;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a, 64, 2), 0);
	ck_assert_int_eq(aclrtMemsetAsync(a, 64, 0x11, 64, s), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, record_cb, &rec), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(rec.order, 0);
	ck_assert_msg(!pthread_equal(rec.ran_on, pthread_self()),
		      "host function ran on the caller");
	ck_assert_int_eq(aclrtLaunchHostFunc(s, NULL, &rec),
			 ACL_ERROR_INVALID_PARAM);
	/* With a host-function thread subscribed, it runs there. */
	ck_assert_int_eq(aclrtSubscribeHostFunc((uint64_t)pthread_self(), s), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, record_cb, &rec), 0);
	ck_assert_int_eq(aclrtProcessHostFunc(REPORT_WAIT_S * 1000), 0);
	ck_assert_msg(pthread_equal(rec.ran_on, pthread_self()),
		      "host function not on the subscribed thread");
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclrtUnSubscribeHostFunc((uint64_t)pthread_self(), s),
			 0);
	ck_assert_int_eq(aclrtProcessHostFunc(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_callback");

	acltest_require_device();
	nm_add_fx(s, callbacks_run_on_subscribed_thread_in_order,
		  REPORT_WAIT_S + 60, &acltest_device);
	nm_add_fx(s, process_report_errors, REPORT_WAIT_S + 30,
		  &acltest_device);
	nm_add_fx(s, unsubscribe_runs_leftovers, 30, &acltest_device);
	nm_add_fx(s, callbacks_under_load, 120, &acltest_device);
	nm_add_fx(s, host_func_in_order, REPORT_WAIT_S + 30, &acltest_device);
	return acltest_run(s);
}
