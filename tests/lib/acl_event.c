// SPDX-License-Identifier: MIT
/*
 * Events: a record completes when its stream reaches it, not when it is
 * queued; queries, synchronisation (with and without timeout), streams
 * waiting on events of other streams, reset, elapsed time measured when the
 * work actually ran, timestamps, flags, ids, and every error code.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acltest_gate.h"
#include "acl/acl.h"

static void sleep_fn(void *arg)
{
	usleep((useconds_t)(long)arg);
}

START_TEST(record_completes_when_reached)
{
	struct acltest_gate gate;
	aclrtStream s;
	aclrtEvent e;
	aclrtEventRecordedStatus st;
	aclrtEventStatus old;
	aclrtEventWaitStatus ws;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtCreateEvent(&e), 0);
	/* Never recorded: not ready, but synchronising returns at once. */
	ck_assert_int_eq(aclrtQueryEventStatus(e, &st), 0);
	ck_assert_int_eq(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
	ck_assert_int_eq(aclrtSynchronizeEvent(e), 0);
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtRecordEvent(e, s), 0);
	ck_assert_int_eq(aclrtQueryEventStatus(e, &st), 0);
	ck_assert_int_eq(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
	ck_assert_int_eq(aclrtQueryEvent(e, &old), 0);
	ck_assert_int_eq(old, ACL_EVENT_STATUS_NOT_READY);
	ck_assert_int_eq(aclrtQueryEventWaitStatus(e, &ws), 0);
	ck_assert_int_eq(ws, ACL_EVENT_WAIT_STATUS_NOT_READY);
	ck_assert_int_eq(aclrtSynchronizeEventWithTimeout(e, 10),
			 ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
	ck_assert_int_eq(aclrtSynchronizeEventWithTimeout(e, 0),
			 ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeEvent(e), 0);
	ck_assert_int_eq(aclrtQueryEventStatus(e, &st), 0);
	ck_assert_int_eq(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
	ck_assert_int_eq(aclrtQueryEvent(e, &old), 0);
	ck_assert_int_eq(old, ACL_EVENT_STATUS_COMPLETE);
	ck_assert_int_eq(aclrtQueryEventWaitStatus(e, &ws), 0);
	ck_assert_int_eq(ws, ACL_EVENT_WAIT_STATUS_COMPLETE);
	ck_assert_int_eq(aclrtSynchronizeEventWithTimeout(e, 0), 0);
	/* Reset (in stream order) makes it unrecorded again. */
	ck_assert_int_eq(aclrtResetEvent(e, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclrtQueryEventStatus(e, &st), 0);
	ck_assert_int_eq(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
	ck_assert_int_eq(aclrtDestroyEvent(e), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

START_TEST(stream_waits_for_event)
{
	struct acltest_gate gate;
	aclrtStream producer, consumer;
	aclrtEvent e;
	unsigned char *a, host[4096];

	ck_assert_int_eq(aclrtCreateStream(&producer), 0);
	ck_assert_int_eq(aclrtCreateStream(&consumer), 0);
	ck_assert_int_eq(aclrtCreateEvent(&e), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a, sizeof(host), 2), 0);
	ck_assert_int_eq(aclrtMemset(a, sizeof(host), 0, sizeof(host)), 0);
	/*
	 * The producer fills only once the consumer's copy is queued; the
	 * consumer copies after the event.
	 */
	acltest_gate_hold(&gate, producer);
	ck_assert_int_eq(aclrtMemsetAsync(a, sizeof(host), 0x6b, sizeof(host),
					  producer), 0);
	ck_assert_int_eq(aclrtRecordEvent(e, producer), 0);
	ck_assert_int_eq(aclrtStreamWaitEvent(consumer, e), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(host, sizeof(host), a, sizeof(host),
					  ACL_MEMCPY_DEVICE_TO_HOST, consumer),
			 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(consumer), 0);
	ck_assert_int_eq(host[0], 0x6b);
	ck_assert_int_eq(host[sizeof(host) - 1], 0x6b);
	/* The flag variants take only their documented flags. */
	ck_assert_int_eq(aclrtStreamWaitEventWithFlag(consumer, e, 0,
				ACL_EVENT_WAIT_DEFAULT), 0);
	ck_assert_int_eq(aclrtStreamWaitEventWithFlag(consumer, e, 0, 7),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtStreamWaitEventWithFlag(consumer, e, 5,
				ACL_EVENT_WAIT_EXTERNAL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtStreamWaitEventWithTimeout(consumer, e, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtRecordEventWithFlag(e, producer,
				ACL_EVENT_RECORD_DEFAULT), 0);
	ck_assert_int_eq(aclrtRecordEventWithFlag(e, producer, 7),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSynchronizeDevice(), 0);
	ck_assert_int_eq(aclrtDestroyEvent(e), 0);
	ck_assert_int_eq(aclrtDestroyStream(producer), 0);
	ck_assert_int_eq(aclrtDestroyStream(consumer), 0);
	ck_assert_int_eq(aclrtFree(a), 0);
}
END_TEST

START_TEST(elapsed_time_is_when_work_ran)
{
	struct acltest_gate gate;
	aclrtStream s;
	aclrtEvent start, end, sync_only;
	uint64_t t0, t1;
	float ms = -1;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtCreateEvent(&start), 0);
	ck_assert_int_eq(aclrtCreateEventWithFlag(&end, ACL_EVENT_TIME_LINE), 0);
	ck_assert_int_eq(aclrtEventElapsedTime(&ms, start, end),
			 ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
	/*
	 * Both records queued at once; 250 ms of work between them, held
	 * until the incomplete end has been seen.  The upper bound only
	 * catches nonsense: a stalled guest stretches the time.
	 */
	ck_assert_int_eq(aclrtRecordEvent(start, s), 0);
	acltest_gate_hold(&gate, s);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, sleep_fn, (void *)250000L), 0);
	ck_assert_int_eq(aclrtRecordEvent(end, s), 0);
	ck_assert_int_eq(aclrtEventElapsedTime(&ms, start, end),
			 ACL_ERROR_RT_EVENT_NOT_COMPLETE);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeEvent(end), 0);
	ck_assert_int_eq(aclrtEventElapsedTime(&ms, start, end), 0);
	ck_assert_msg(ms >= 250.0f && ms < 600000.0f, "elapsed %f ms", ms);
	ck_assert_int_eq(aclrtEventElapsedTime(&ms, end, start),
			 ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL);
	ck_assert_int_eq(aclrtEventElapsedTime(NULL, start, end),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtEventGetTimestamp(start, &t0), 0);
	ck_assert_int_eq(aclrtEventGetTimestamp(end, &t1), 0);
	ck_assert_uint_ge(t1 - t0, 250000000ULL);
	ck_assert_int_eq(aclrtEventGetTimestamp(end, NULL),
			 ACL_ERROR_INVALID_PARAM);
	/* An event made without a time line takes no time. */
	ck_assert_int_eq(aclrtCreateEventWithFlag(&sync_only, ACL_EVENT_SYNC), 0);
	ck_assert_int_eq(aclrtRecordEvent(sync_only, s), 0);
	ck_assert_int_eq(aclrtSynchronizeEvent(sync_only), 0);
	ck_assert_int_eq(aclrtEventGetTimestamp(sync_only, &t0),
			 ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
	ck_assert_int_eq(aclrtDestroyEvent(sync_only), 0);
	ck_assert_int_eq(aclrtDestroyEvent(start), 0);
	ck_assert_int_eq(aclrtDestroyEvent(end), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

START_TEST(bad_arguments)
{
	aclrtEvent e;
	aclrtEventRecordedStatus st;
	uint32_t id, n1, n2;
	int dummy;

	ck_assert_int_eq(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateEventWithFlag(&e, 0x4), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateEventExWithFlag(&e, 0x100),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyEvent(&dummy), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtRecordEvent(&dummy, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtQueryEventStatus(&dummy, &st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtSynchronizeEvent(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetEventAvailNum(&n1), 0);
	ck_assert_int_eq(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC), 0);
	ck_assert_int_eq(aclrtGetEventAvailNum(&n2), 0);
	ck_assert_uint_eq(n2, n1 - 1);
	ck_assert_int_eq(aclrtGetEventId(e, &id), 0);
	ck_assert_int_eq(aclrtGetEventId(e, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtQueryEventStatus(e, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSynchronizeEventWithTimeout(e, -2),
			 ACL_ERROR_INVALID_PARAM);
	/* Recording on a destroyed stream fails and leaves no waiter hung. */
	{
		aclrtStream s;

		ck_assert_int_eq(aclrtCreateStream(&s), 0);
		ck_assert_int_eq(aclrtDestroyStream(s), 0);
		ck_assert_int_eq(aclrtRecordEvent(e, s),
				 ACL_ERROR_RT_PARAM_INVALID);
		ck_assert_int_eq(aclrtSynchronizeEventWithTimeout(e, 1000), 0);
	}
	ck_assert_int_eq(aclrtDestroyEvent(e), 0);
	ck_assert_int_eq(aclrtDestroyEvent(e), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtCreateEvent(&e), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
}
END_TEST

/* A stream wait with a timeout fails the stream's synchronisation. */
START_TEST(stream_wait_times_out)
{
	struct acltest_gate gate;
	aclrtStream a, b;
	aclrtEvent e;

	ck_assert_int_eq(aclrtCreateStream(&a), 0);
	ck_assert_int_eq(aclrtCreateStream(&b), 0);
	ck_assert_int_eq(aclrtCreateEvent(&e), 0);
	/* a records only after b's wait has given up. */
	acltest_gate_hold(&gate, a);
	ck_assert_int_eq(aclrtRecordEvent(e, a), 0);
	ck_assert_int_eq(aclrtStreamWaitEventWithTimeout(b, e, 50), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), ACL_ERROR_RT_WAIT_TIMEOUT);
	acltest_gate_open(&gate);
	/* Long enough: no error. */
	ck_assert_int_eq(aclrtRecordEvent(e, a), 0);
	ck_assert_int_eq(aclrtStreamWaitEventWithFlag(b, e, 20000,
			ACL_EVENT_WAIT_DEFAULT), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), 0);
	ck_assert_int_eq(aclrtDestroyEvent(e), 0);
	ck_assert_int_eq(aclrtDestroyStream(a), 0);
	ck_assert_int_eq(aclrtDestroyStream(b), 0);
}
END_TEST

/* Destroying an event that a queued wait needs does not hang the stream. */
START_TEST(destroy_with_waiters)
{
	struct acltest_gate gate;
	aclrtStream a, b;
	aclrtEvent e;

	ck_assert_int_eq(aclrtCreateStream(&a), 0);
	ck_assert_int_eq(aclrtCreateStream(&b), 0);
	ck_assert_int_eq(aclrtCreateEvent(&e), 0);
	/*
	 * a's record stays held until b is done: b finishing at all, in
	 * however long a stalled guest takes, shows it did not wait for it.
	 */
	acltest_gate_hold(&gate, a);
	ck_assert_int_eq(aclrtRecordEvent(e, a), 0);
	ck_assert_int_eq(aclrtStreamWaitEvent(b, e), 0);
	ck_assert_int_eq(aclrtDestroyEvent(e), 0);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(b, 20000), 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtDestroyStreamForce(a), 0);
	ck_assert_int_eq(aclrtDestroyStream(b), 0);
}
END_TEST

/* A context's events die with it. */
START_TEST(events_die_with_context)
{
	aclrtContext def, ctx;
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), 0);
	ck_assert_int_eq(aclrtCreateEvent(&e), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	ck_assert_int_eq(aclrtQueryEventStatus(e, &st), 0);
	ck_assert_int_eq(aclrtDestroyContext(ctx), 0);
	ck_assert_int_eq(aclrtQueryEventStatus(e, &st),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

/*
 * An IPC event: the child opens it by handle and makes its stream wait for
 * it; the parent records it only after setting a flag in shared memory,
 * so the child seeing the flag after its wait proves the wait waited.
 */
static void set_flag(void *p)
{
	*(volatile int *)p = 1;
}

static int ipc_child(aclrtIpcEventHandle h, volatile int *flag)
{
	aclrtEvent e;
	aclrtStream s;
	aclrtEventRecordedStatus st;

	if (aclrtSetDevice(0) || aclrtCreateStream(&s))
		return 90;
	if (aclrtIpcOpenEventHandle(h, &e))
		return 91;
	if (aclrtStreamWaitEvent(s, e) || aclrtSynchronizeStream(s))
		return 92;
	if (!*flag)
		return 93;
	if (aclrtQueryEventStatus(e, &st) ||
	    st != ACL_EVENT_RECORDED_STATUS_COMPLETE)
		return 94;
	if (aclrtSynchronizeEvent(e))
		return 95;
	if (aclrtDestroyEvent(e) || aclrtDestroyStream(s))
		return 96;
	return 0;
}

struct ipc_arg {
	aclrtIpcEventHandle h;
	volatile int *flag;
};

/* ipc_child once the parent says go (89: it never did). */
static int ipc_child_on_go(int rfd, void *arg)
{
	struct ipc_arg *a = arg;
	char c;

	return read(rfd, &c, 1) == 1 ? ipc_child(a->h, a->flag) : 89;
}

START_TEST(ipc_event_between_processes)
{
	volatile int *flag;
	aclrtIpcEventHandle h;
	aclrtEvent e, bad;
	aclrtStream s;
	uint32_t id;
	uint64_t ts;
	float ms;
	struct ipc_arg arg;
	pid_t pid;
	int go;

	flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne((void *)flag, MAP_FAILED);
	ck_assert_int_eq(aclrtCreateEventExWithFlag(&bad, ACL_EVENT_IPC |
						    ACL_EVENT_SYNC),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateEvent(&bad), 0);
	ck_assert_int_eq(aclrtIpcGetEventHandle(bad, &h),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyEvent(bad), 0);
	ck_assert_int_eq(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC), 0);
	ck_assert_int_eq(aclrtIpcGetEventHandle(e, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcGetEventHandle(e, &h), 0);
	ck_assert_int_eq(aclrtIpcOpenEventHandle(h, NULL), ACL_ERROR_INVALID_PARAM);
	/* What CANN refuses on IPC events. */
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtResetEvent(e, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtGetEventId(e, &id), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtEventGetTimestamp(e, &ts),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtEventElapsedTime(&ms, e, e),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);

	/*
	 * Fork before queuing anything (a child inherits no queued work),
	 * then let it open the handle once the record is queued: the record
	 * runs after 300 ms and after the flag is set.
	 */
	arg.h = h;
	arg.flag = flag;
	pid = acltest_spawn(ipc_child_on_go, &arg, &go);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, sleep_fn, (void *)300000L), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, set_flag, (void *)flag), 0);
	ck_assert_int_eq(aclrtRecordEvent(e, s), 0);
	ck_assert_int_eq(write(go, "g", 1), 1);
	close(go);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(acltest_reap(pid), 0);
	/* A garbled handle opens nothing. */
	h.reserved[8] ^= 1;
	ck_assert_int_ne(aclrtIpcOpenEventHandle(h, &bad), 0);
	ck_assert_int_eq(aclrtDestroyEvent(e), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	munmap((void *)flag, 4096);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_event");

	acltest_require_device();
	nm_add_fx(s, record_completes_when_reached, 30, &acltest_device);
	nm_add_fx(s, stream_waits_for_event, 30, &acltest_device);
	nm_add_fx(s, elapsed_time_is_when_work_ran, 30, &acltest_device);
	nm_add_fx(s, bad_arguments, 30, &acltest_device);
	nm_add_fx(s, destroy_with_waiters, 30, &acltest_device);
	nm_add_fx(s, stream_wait_times_out, 30, &acltest_device);
	nm_add_fx(s, events_die_with_context, 30, &acltest_device);
	nm_add_fx(s, ipc_event_between_processes, 60, &acltest_device);
	return acltest_run(s);
}
