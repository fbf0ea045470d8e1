// SPDX-License-Identifier: MIT
/*
 * Model run instances: work captured from a stream (or queued on streams
 * bound to an instance being built) does not run then, and runs again, in
 * order, each time the instance is executed, on any stream; labels switch
 * by an index read from device memory when the switch runs.  Every bad
 * argument gets CANN's code; so do calls that cannot be captured, the
 * synchronisation of a capturing stream, the end of a capture on another
 * thread, the destruction of an instance whose execution is queued, and
 * synchronous copies and fills that the capture modes forbid; aclFinalize
 * takes the instances the program left.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "acltest_device.h"
#include "acl/acl.h"

#define LOG_MAX 64

/* What the captured host functions saw, in the order they ran. */
struct trace {
	const unsigned char *buf;
	int n;
	int seen[LOG_MAX];
};

static struct trace trace;

static void note_buf(void *arg)
{
	(void)arg;
	if (trace.n < LOG_MAX)
		trace.seen[trace.n++] = trace.buf[0];
}

static void note_tag(void *arg)
{
	if (trace.n < LOG_MAX)
		trace.seen[trace.n++] = (int)(intptr_t)arg;
}

static aclrtStream new_stream(void)
{
	aclrtStream s;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	return s;
}

START_TEST(bad_arguments)
{
	aclmdlRICaptureStatus st;
	aclmdlRICaptureMode mode;
	aclrtLabel label, labels[2];
	aclrtLabelList list;
	aclrtStream s = new_stream(), ps, def;
	aclmdlRI m, b;
	uint32_t *idx;

	ck_assert_int_eq(aclrtMalloc((void **)&idx, 64, 2), 0);
	ck_assert_int_eq(aclrtCreateStreamWithConfig(&ps, 0,
						     ACL_STREAM_PERSISTENT), 0);
	ck_assert_int_eq(aclrtCtxGetCurrentDefaultStream(&def), 0);

	/* Capture. */
	ck_assert_int_eq(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRICaptureBegin(NULL,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT);
	ck_assert_int_eq(aclmdlRICaptureBegin(def,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT);
	ck_assert_int_eq(aclmdlRICaptureBegin((aclrtStream)&st,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m),
			 ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRICaptureEnd(NULL, &m),
			 ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT);
	ck_assert_int_eq(aclmdlRICaptureGetInfo(s, NULL, &m),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRICaptureGetInfo(s, &st, NULL),
			 ACL_ERROR_INVALID_PARAM);
	m = (aclmdlRI)&st;
	ck_assert_int_eq(aclmdlRICaptureGetInfo(s, &st, &m), 0);
	ck_assert_int_eq(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
	ck_assert_ptr_null(m);
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(NULL),
			 ACL_ERROR_INVALID_PARAM);
	mode = (aclmdlRICaptureMode)7;
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(&mode),
			 ACL_ERROR_INVALID_PARAM);
	mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(&mode), 0);
	ck_assert_int_eq(mode, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(&mode), 0);
	ck_assert_int_eq(mode, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);

	/* A stream captures into one model at a time. */
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 ACL_ERROR_RT_STREAM_CAPTURED);
	ck_assert_int_eq(aclmdlRICaptureGetInfo(s, &st, &m), 0);
	ck_assert_int_eq(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
	ck_assert_ptr_nonnull(m);
	/* Not executable, nor destroyed, while it captures. */
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, NULL),
			 ACL_ERROR_RT_MODEL_CAPTURED);
	ck_assert_int_eq(aclmdlRIDestroy(m), ACL_ERROR_RT_MODEL_CAPTURED);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &b), 0);
	ck_assert_ptr_eq(b, m);

	/* Execution and destruction. */
	ck_assert_int_eq(aclmdlRIExecuteAsync(NULL, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIExecuteAsync(&st, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, (aclrtStream)&st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclmdlRIExecute(m, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIExecute(m, -2), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIExecute(NULL, -1), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIExecute(m, -1), 0);
	ck_assert_int_eq(aclmdlRIDestroy(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), ACL_ERROR_INVALID_PARAM);

	/* Building. */
	ck_assert_int_eq(aclmdlRIBuildBegin(NULL, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBuildBegin(&b, 1), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBuildBegin(&b, 0), 0);
	ck_assert_int_eq(aclmdlRIBindStream(b, NULL, ACL_MODEL_STREAM_FLAG_HEAD),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBindStream(b, ps, 5), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBindStream(&st, ps, ACL_MODEL_STREAM_FLAG_HEAD),
			 ACL_ERROR_INVALID_PARAM);
	/* CANN binds only streams made ACL_STREAM_PERSISTENT. */
	ck_assert_int_eq(aclmdlRIBindStream(b, s, ACL_MODEL_STREAM_FLAG_HEAD),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIEndTask(b, ps), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBindStream(b, ps, ACL_MODEL_STREAM_FLAG_HEAD),
			 0);
	ck_assert_int_eq(aclmdlRIBindStream(b, ps,
					    ACL_MODEL_STREAM_FLAG_DEFAULT),
			 ACL_ERROR_RT_STREAM_CAPTURED);
	ck_assert_int_eq(aclmdlRICaptureBegin(ps,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 ACL_ERROR_RT_STREAM_CAPTURED);
	ck_assert_int_eq(aclmdlRIExecuteAsync(b, s),
			 ACL_ERROR_RT_MODEL_CAPTURED);
	ck_assert_int_eq(aclmdlRIEndTask(b, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIEndTask(NULL, ps), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIEndTask(b, ps), 0);
	ck_assert_int_eq(aclmdlRIBuildEnd(b, &st), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBuildEnd(NULL, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBuildEnd(b, NULL), 0);
	ck_assert_int_eq(aclmdlRIBuildEnd(b, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIBindStream(b, ps, ACL_MODEL_STREAM_FLAG_HEAD),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIUnbindStream(b, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIUnbindStream(b, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIUnbindStream(b, ps), 0);
	ck_assert_int_eq(aclmdlRIUnbindStream(b, ps), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIDestroy(b), 0);

	/* Labels. */
	ck_assert_int_eq(aclrtCreateLabel(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateLabel(&label), 0);
	ck_assert_int_eq(aclrtDestroyLabel(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyLabel(&st), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetLabel(NULL, s), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetLabel(label, (aclrtStream)&st),
			 ACL_ERROR_RT_PARAM_INVALID);
	labels[0] = label;
	labels[1] = &st;
	ck_assert_int_eq(aclrtCreateLabelList(NULL, 1, &list),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateLabelList(labels, 0, &list),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateLabelList(labels, 1, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateLabelList(labels, 2, &list),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateLabelList(labels, 1, &list), 0);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(NULL, 1, list, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(idx, 0, list, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(idx, 2, list, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(idx, 1, &st, s),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(idx, 1, list,
						 (aclrtStream)&st),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Outside a model a mark does nothing and a switch fails as it runs. */
	ck_assert_int_eq(aclrtSetLabel(label, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	*idx = 0;
	ck_assert_int_eq(aclrtSwitchLabelByIndex(idx, 1, list, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtDestroyLabelList(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyLabelList(list), 0);
	ck_assert_int_eq(aclrtDestroyLabelList(list), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyLabel(label), 0);
	ck_assert_int_eq(aclrtDestroyLabel(label), ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclrtDestroyStream(ps), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(idx), 0);
}
END_TEST

/*
 * Capture: a fill, a host function that sees it, a copy, a host function
 * that sees that, an event's record.  Returns the model.
 */
static aclmdlRI capture_work(aclrtStream s, unsigned char *buf,
			     const unsigned char *src, aclrtEvent ev)
{
	aclmdlRI m;

	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtMemsetAsync(buf, 64, 0, 64, s), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, note_buf, NULL), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(buf, 64, src, 64,
					  ACL_MEMCPY_DEVICE_TO_DEVICE, s), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, note_buf, NULL), 0);
	ck_assert_int_eq(aclrtRecordEvent(ev, s), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);
	return m;
}

START_TEST(replay_n_times_in_order)
{
	enum { N = 5 };
	aclrtEventRecordedStatus es;
	aclmdlRICaptureStatus st;
	unsigned char *buf, *src;
	aclrtStream s = new_stream();
	aclrtEvent ev;
	aclmdlRI m, got;
	int i;

	ck_assert_int_eq(aclrtMalloc((void **)&buf, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&src, 64, 2), 0);
	ck_assert_int_eq(aclrtCreateEvent(&ev), 0);
	memset(buf, 0x11, 64);
	memset(src, 0x7e, 64);
	memset(&trace, 0, sizeof(trace));
	trace.buf = buf;

	m = capture_work(s, buf, src, ev);
	/* Nothing ran; the stream and the event are not held up. */
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclrtSynchronizeEvent(ev), 0);
	ck_assert_int_eq(trace.n, 0);
	ck_assert_int_eq(buf[0], 0x11);
	ck_assert_int_eq(aclmdlRICaptureGetInfo(s, &st, &got), 0);
	ck_assert_int_eq(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);

	for (i = 0; i < N; i++)
		ck_assert_int_eq(aclmdlRIExecuteAsync(m, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(trace.n, 2 * N);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(trace.seen[2 * i], 0);
		ck_assert_int_eq(trace.seen[2 * i + 1], 0x7e);
	}
	ck_assert_int_eq(buf[63], 0x7e);
	ck_assert_int_eq(aclrtQueryEventStatus(ev, &es), 0);
	ck_assert_int_eq(es, ACL_EVENT_RECORDED_STATUS_COMPLETE);

	/* Each execution copies what the source holds then. */
	memset(src, 0x42, 64);
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(trace.n, 2 * N + 2);
	ck_assert_int_eq(trace.seen[2 * N + 1], 0x42);

	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclrtDestroyEvent(ev), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(buf), 0);
	ck_assert_int_eq(aclrtFree(src), 0);
}
END_TEST

START_TEST(replay_on_other_streams)
{
	unsigned char *buf, *src;
	aclrtStream s = new_stream(), t = new_stream();
	uint64_t *word;
	aclrtEvent ev;
	aclmdlRI m;

	ck_assert_int_eq(aclrtMalloc((void **)&buf, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&src, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&word, 64, 2), 0);
	ck_assert_int_eq(aclrtCreateEvent(&ev), 0);
	memset(src, 0x33, 64);
	memset(&trace, 0, sizeof(trace));
	trace.buf = buf;
	*word = 0;
	m = capture_work(s, buf, src, ev);

	/*
	 * On another stream, behind a wait there; a wait on the first
	 * stream for the event, queued after the execution, waits for the
	 * model's record.
	 */
	ck_assert_int_eq(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, t),
			 0);
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, t), 0);
	ck_assert_int_eq(aclrtStreamWaitEvent(s, ev), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, note_tag, (void *)99), 0);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, 100),
			 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
	ck_assert_int_eq(trace.n, 0);
	*word = 1;
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(trace.n, 3);
	ck_assert_int_eq(trace.seen[1], 0x33);
	ck_assert_int_eq(trace.seen[2], 99);
	ck_assert_int_eq(aclrtSynchronizeStream(t), 0);

	/* On the default stream, and synchronously. */
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	ck_assert_int_eq(trace.n, 5);
	ck_assert_int_eq(aclmdlRIExecute(m, -1), 0);
	ck_assert_int_eq(trace.n, 7);
	ck_assert_int_eq(aclmdlRIExecute(m, 10000), 0);
	ck_assert_int_eq(trace.n, 9);

	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclrtDestroyEvent(ev), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtDestroyStream(t), 0);
	ck_assert_int_eq(aclrtFree(buf), 0);
	ck_assert_int_eq(aclrtFree(src), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
}
END_TEST

/* A notify's record kept by a model releases a wait once per execution. */
START_TEST(notify_record_replayed)
{
	aclrtStream s = new_stream(), t = new_stream(), u = new_stream();
	aclrtNotify n;
	aclmdlRI m;
	int i;

	memset(&trace, 0, sizeof(trace));
	ck_assert_int_eq(aclrtCreateNotify(&n, 0), 0);
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtRecordNotify(n, s), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(aclrtWaitAndResetNotify(n, u, 0), 0);
		ck_assert_int_eq(aclrtLaunchHostFunc(u, note_tag,
						     (void *)(intptr_t)i), 0);
		ck_assert_int_eq(aclmdlRIExecuteAsync(m, t), 0);
		ck_assert_int_eq(aclrtSynchronizeStream(u), 0);
		ck_assert_int_eq(trace.n, i + 1);
	}
	ck_assert_int_eq(aclrtSynchronizeStream(t), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclrtDestroyNotify(n), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtDestroyStream(t), 0);
	ck_assert_int_eq(aclrtDestroyStream(u), 0);
}
END_TEST

START_TEST(destroy_while_queued)
{
	aclrtStream s = new_stream(), t = new_stream();
	uint64_t *word;
	aclmdlRI m;

	ck_assert_int_eq(aclrtMalloc((void **)&word, 64, 2), 0);
	*word = 0;
	memset(&trace, 0, sizeof(trace));
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
			 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, note_tag, (void *)1), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);

	/* The execution waits behind a value nobody has written yet. */
	ck_assert_int_eq(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, t),
			 0);
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, t), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), ACL_ERROR_RT_MODEL_RUNNING);
	*word = 1;
	ck_assert_int_eq(aclrtSynchronizeStream(t), 0);
	ck_assert_int_eq(trace.n, 1);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, t), ACL_ERROR_INVALID_PARAM);

	/* A forced destruction of the stream drops the execution. */
	*word = 0;
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, note_tag, (void *)2), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);
	ck_assert_int_eq(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, t),
			 0);
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, t), 0);
	ck_assert_int_eq(aclrtDestroyStreamForce(t), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(trace.n, 1);

	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(word), 0);
}
END_TEST

/*
 * aclFinalize with models still there (one executing behind a wait, one
 * built on a bound stream, one capturing) releases them all.
 */
START_TEST(finalize_takes_models)
{
	aclrtStream s = new_stream(), t = new_stream(), ps;
	aclmdlRI done, built;
	uint64_t *word;

	ck_assert_int_eq(aclrtMalloc((void **)&word, 64, 2), 0);
	*word = 0;
	ck_assert_int_eq(aclrtCreateStreamWithConfig(&ps, 0,
						     ACL_STREAM_PERSISTENT), 0);
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtMemsetAsync(word, 8, 0, 8, s), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &done), 0);
	ck_assert_int_eq(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, t),
			 0);
	ck_assert_int_eq(aclmdlRIExecuteAsync(done, t), 0);
	ck_assert_int_eq(aclmdlRIBuildBegin(&built, 0), 0);
	ck_assert_int_eq(aclmdlRIBindStream(built, ps,
					    ACL_MODEL_STREAM_FLAG_HEAD), 0);
	ck_assert_int_eq(aclrtMemsetAsync(word, 8, 0, 8, ps), 0);
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtMemsetAsync(word, 8, 0, 8, s), 0);
	ck_assert_int_eq(aclFinalize(), 0);
	ck_assert_int_eq(aclmdlRIDestroy(done), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmdlRIDestroy(built), ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(capture_refusals)
{
	aclmdlRICaptureStatus st;
	aclrtStream s = new_stream();
	unsigned char *buf;
	aclmdlRI m, got;

	ck_assert_int_eq(aclrtMalloc((void **)&buf, 4096, 2), 0);
	memset(buf, 0, 4096);
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	/* A capturing stream is not synchronised: its work has not run. */
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
	ck_assert_int_eq(aclrtSynchronizeStreamWithTimeout(s, 100),
			 ACL_ERROR_RT_STREAM_CAPTURED);
	ck_assert_int_eq(aclrtMemsetAsync(buf, 64, 9, 64, s), 0);
	/* Cache maintenance cannot run twice: refused, capture invalidated. */
	ck_assert_int_eq(aclrtCmoAsync(buf, 64, ACL_RT_CMO_TYPE_WRITEBACK, s),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclmdlRICaptureGetInfo(s, &st, &got), 0);
	ck_assert_int_eq(st, ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
	m = NULL;
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m),
			 ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
	ck_assert_ptr_null(m);
	ck_assert_int_eq(aclmdlRIDestroy(got), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(buf[0], 0);
	/* The stream runs its work again. */
	ck_assert_int_eq(aclrtMemsetAsync(buf, 64, 5, 64, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(buf[0], 5);

	/* A capturing stream destroyed takes its capture with it. */
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtMemsetAsync(buf, 64, 6, 64, s), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(buf[0], 5);
	ck_assert_int_eq(aclrtFree(buf), 0);
}
END_TEST

struct end_args {
	aclrtContext ctx;
	aclrtStream s;
	aclmdlRI m;
	int ret;
};

static void *end_elsewhere(void *arg)
{
	struct end_args *a = arg;

	ck_assert_int_eq(aclrtSetCurrentContext(a->ctx), 0);
	a->ret = aclmdlRICaptureEnd(a->s, &a->m);
	return NULL;
}

static int end_on_thread(struct end_args *a)
{
	pthread_t th;

	ck_assert_int_eq(pthread_create(&th, NULL, end_elsewhere, a), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	return a->ret;
}

START_TEST(end_on_another_thread)
{
	struct end_args a = { 0 };

	ck_assert_int_eq(aclrtGetCurrentContext(&a.ctx), 0);
	a.s = new_stream();
	ck_assert_int_eq(aclmdlRICaptureBegin(a.s,
					      ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL),
			 0);
	ck_assert_int_eq(end_on_thread(&a),
			 ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
	ck_assert_int_eq(aclmdlRICaptureEnd(a.s, &a.m), 0);
	ck_assert_int_eq(aclmdlRIDestroy(a.m), 0);
	/* RELAXED: any thread ends it. */
	ck_assert_int_eq(aclmdlRICaptureBegin(a.s,
					      ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
			 0);
	ck_assert_int_eq(end_on_thread(&a), 0);
	ck_assert_int_eq(aclmdlRIDestroy(a.m), 0);
	ck_assert_int_eq(aclrtDestroyStream(a.s), 0);
}
END_TEST

struct unsafe_args {
	aclrtContext ctx;
	aclmdlRICaptureMode mode;
	unsigned char *buf;
	int ret;
};

static void *memset_elsewhere(void *arg)
{
	struct unsafe_args *a = arg;
	aclmdlRICaptureMode mode = a->mode;

	ck_assert_int_eq(aclrtSetCurrentContext(a->ctx), 0);
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(&mode), 0);
	a->ret = aclrtMemset(a->buf, 64, 1, 64);
	return NULL;
}

/* aclrtMemset on another thread in mode: its code. */
static int memset_on_thread(unsigned char *buf, aclmdlRICaptureMode mode)
{
	struct unsafe_args a = { NULL, mode, buf, -1 };
	pthread_t th;

	ck_assert_int_eq(aclrtGetCurrentContext(&a.ctx), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, memset_elsewhere, &a), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	return a.ret;
}

/* Synchronous copies and fills while captures are under way, by mode. */
START_TEST(unsafe_calls_by_mode)
{
	enum { NO = ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT };
	aclmdlRICaptureMode mode;
	aclrtStream s = new_stream();
	unsigned char *buf, *src;
	aclmdlRI m;

	ck_assert_int_eq(aclrtMalloc((void **)&buf, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&src, 64, 2), 0);

	/* GLOBAL: no thread in GLOBAL mode; this one once RELAXED. */
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
			 0);
	ck_assert_int_eq(aclrtMemset(buf, 64, 1, 64), NO);
	ck_assert_int_eq(aclrtMemcpy(buf, 64, src, 64,
				     ACL_MEMCPY_DEVICE_TO_DEVICE), NO);
	ck_assert_int_eq(aclrtMemcpy2d(buf, 8, src, 8, 8, 8,
				       ACL_MEMCPY_DEFAULT), NO);
	ck_assert_int_eq(memset_on_thread(buf,
					  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), NO);
	ck_assert_int_eq(memset_on_thread(buf,
					  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL),
			 0);
	mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(&mode), 0);
	ck_assert_int_eq(aclrtMemset(buf, 64, 1, 64), 0);
	ck_assert_int_eq(aclmdlRICaptureThreadExchangeMode(&mode), 0);
	ck_assert_int_eq(mode, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclrtMemset(buf, 64, 1, 64), 0);

	/* THREAD_LOCAL: only this thread is held back. */
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL),
			 0);
	ck_assert_int_eq(aclrtMemset(buf, 64, 1, 64), NO);
	ck_assert_int_eq(memset_on_thread(buf,
					  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);

	/* RELAXED: nobody is. */
	ck_assert_int_eq(aclmdlRICaptureBegin(s,
					      ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
			 0);
	ck_assert_int_eq(aclrtMemset(buf, 64, 1, 64), 0);
	ck_assert_int_eq(memset_on_thread(buf,
					  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), 0);
	ck_assert_int_eq(aclmdlRICaptureEnd(s, &m), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);

	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(buf), 0);
	ck_assert_int_eq(aclrtFree(src), 0);
}
END_TEST

/*
 * A model built on a persistent stream:
 *   A; switch(*idx: L1, L2); L1: B; switch(*zero: L3); L2: C; L3: D
 * runs A B D with *idx 0 and A C D with *idx 1, read as each runs.
 */
START_TEST(labels_switch_by_device_index)
{
	aclrtLabel l1, l2, l3, pair[2];
	aclrtLabelList both, end;
	aclrtStream ps, s = new_stream();
	uint32_t *idx, *zero;
	aclmdlRI m;
	int i;

	ck_assert_int_eq(aclrtMalloc((void **)&idx, 64, 2), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&zero, 64, 2), 0);
	*zero = 0;
	ck_assert_int_eq(aclrtCreateStreamWithConfig(&ps, 0,
						     ACL_STREAM_PERSISTENT), 0);
	ck_assert_int_eq(aclrtCreateLabel(&l1), 0);
	ck_assert_int_eq(aclrtCreateLabel(&l2), 0);
	ck_assert_int_eq(aclrtCreateLabel(&l3), 0);
	pair[0] = l1;
	pair[1] = l2;
	ck_assert_int_eq(aclrtCreateLabelList(pair, 2, &both), 0);
	ck_assert_int_eq(aclrtCreateLabelList(&l3, 1, &end), 0);

	ck_assert_int_eq(aclmdlRIBuildBegin(&m, 0), 0);
	ck_assert_int_eq(aclmdlRIBindStream(m, ps, ACL_MODEL_STREAM_FLAG_HEAD),
			 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(ps, note_tag, (void *)'A'), 0);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(idx, 2, both, ps), 0);
	ck_assert_int_eq(aclrtSetLabel(l1, ps), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(ps, note_tag, (void *)'B'), 0);
	ck_assert_int_eq(aclrtSwitchLabelByIndex(zero, 1, end, ps), 0);
	ck_assert_int_eq(aclrtSetLabel(l2, ps), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(ps, note_tag, (void *)'C'), 0);
	ck_assert_int_eq(aclrtSetLabel(l3, ps), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(ps, note_tag, (void *)'D'), 0);
	ck_assert_int_eq(aclmdlRIEndTask(m, ps), 0);
	ck_assert_int_eq(aclmdlRIBuildEnd(m, NULL), 0);
	/* The lists were copied by the switches. */
	ck_assert_int_eq(aclrtDestroyLabelList(both), 0);
	ck_assert_int_eq(aclrtDestroyLabelList(end), 0);

	memset(&trace, 0, sizeof(trace));
	for (i = 0; i < 4; i++) {
		*idx = (uint32_t)(i & 1);
		ck_assert_int_eq(aclmdlRIExecuteAsync(m, s), 0);
		ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	}
	ck_assert_int_eq(trace.n, 12);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(trace.seen[3 * i], 'A');
		ck_assert_int_eq(trace.seen[3 * i + 1], (i & 1) ? 'C' : 'B');
		ck_assert_int_eq(trace.seen[3 * i + 2], 'D');
	}
	/* An index past maxValue fails the execution where it switches. */
	*idx = 2;
	ck_assert_int_eq(aclmdlRIExecuteAsync(m, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(trace.n, 13);

	ck_assert_int_eq(aclmdlRIUnbindStream(m, ps), 0);
	ck_assert_int_eq(aclmdlRIDestroy(m), 0);
	ck_assert_int_eq(aclrtDestroyLabel(l1), 0);
	ck_assert_int_eq(aclrtDestroyLabel(l2), 0);
	ck_assert_int_eq(aclrtDestroyLabel(l3), 0);
	ck_assert_int_eq(aclrtDestroyStream(ps), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(idx), 0);
	ck_assert_int_eq(aclrtFree(zero), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_capture");

	acltest_require_device();
	nm_add_fx(s, bad_arguments, 30, &acltest_device);
	nm_add_fx(s, replay_n_times_in_order, 30, &acltest_device);
	nm_add_fx(s, replay_on_other_streams, 30, &acltest_device);
	nm_add_fx(s, notify_record_replayed, 30, &acltest_device);
	nm_add_fx(s, destroy_while_queued, 30, &acltest_device);
	nm_add_fx(s, finalize_takes_models, 30, &acltest_device);
	nm_add_fx(s, capture_refusals, 30, &acltest_device);
	nm_add_fx(s, end_on_another_thread, 30, &acltest_device);
	nm_add_fx(s, unsafe_calls_by_mode, 30, &acltest_device);
	nm_add_fx(s, labels_switch_by_device_index, 30, &acltest_device);
	return acltest_run(s);
}
