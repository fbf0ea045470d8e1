// SPDX-License-Identifier: MIT
/*
 * acl.rt: contexts, streams beyond create/destroy, events, host callbacks
 * and memset_async (lib/README.md).  The GIL is released around every
 * library call: while one waits, the library may run a Python callback
 * on another thread, which needs the GIL.
 *
 * The library calls a callback's trampoline with a small id as userData,
 * naming a record in a registry of callbacks not yet run: looked up by id,
 * a record already freed is simply not found.  The library never says
 * that a queued callback was thrown away, so the records a dead stream or
 * context left are dropped when this module destroys it.  The registry
 * also holds a record without func for each context create_context made:
 * the others are the device's default context.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclpy.h"

struct pycb {
	struct pycb *next;
	uint64_t id;
	PyObject *func;
	PyObject *data;
	void *stream;		/* as the caller named it; NULL: default */
	void *ctx;		/* current when it was launched, or made */
	bool primary;		/* ctx is the device's default context */
};

static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pycb *cb_head;	/* newest first */
static uint64_t cb_next_id = 1;

static bool made_ctx_locked(void *ctx)
{
	struct pycb *r;

	for (r = cb_head; r; r = r->next)
		if (!r->func && r->ctx == ctx)
			return true;
	return false;
}

static void cb_insert(struct pycb *r)
{
	pthread_mutex_lock(&cb_lock);
	r->id = cb_next_id++;
	r->primary = r->func && !made_ctx_locked(r->ctx);
	r->next = cb_head;
	cb_head = r;
	pthread_mutex_unlock(&cb_lock);
}

/* NULL if it is gone (run or dropped). */
static struct pycb *cb_take(uint64_t id)
{
	struct pycb **pp, *r;

	pthread_mutex_lock(&cb_lock);
	for (pp = &cb_head; (r = *pp); pp = &r->next) {
		if (r->id == id) {
			*pp = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&cb_lock);
	return r;
}

static void cb_free(struct pycb *r)
{
	Py_XDECREF(r->func);
	Py_XDECREF(r->data);
	PyMem_RawFree(r);
}

enum cb_match { BY_STREAM, BY_CTX, BY_PRIMARY, ALL };

/* With the GIL held, for cb_free. */
static void cb_drop(enum cb_match how, void *stream, void *ctx)
{
	struct pycb **pp, *r, *dead = NULL;
	bool m;

	pthread_mutex_lock(&cb_lock);
	for (pp = &cb_head; (r = *pp);) {
		m = how == ALL || (how == BY_PRIMARY && r->primary) ||
		    (how == BY_CTX && r->ctx == ctx) ||
		    (how == BY_STREAM && r->func && r->stream == stream &&
		     r->ctx == ctx);
		if (m) {
			*pp = r->next;
			r->next = dead;
			dead = r;
		} else {
			pp = &r->next;
		}
	}
	pthread_mutex_unlock(&cb_lock);
	while ((r = dead)) {
		dead = r->next;
		cb_free(r);
	}
}

static void *current_ctx(void)
{
	aclrtContext c = NULL;

	return aclrtGetCurrentContext(&c) ? NULL : c;
}

/* The .after of destroy_stream(_force), reset_device and finalize. */
void aclpy_rt_stream_gone(const union aclpy_val *args)
{
	cb_drop(BY_STREAM, args[0].p, current_ctx());
}

void aclpy_rt_device_reset(const union aclpy_val *args)
{
	uint32_t flags = 0;
	int32_t active = 1;

	if (aclrtGetPrimaryCtxState(args[0].i32, &flags, &active) ==
	    ACL_SUCCESS && !active)
		cb_drop(BY_PRIMARY, NULL, NULL);
}

void aclpy_rt_finalized(const union aclpy_val *Py_UNUSED(args))
{
	cb_drop(ALL, NULL, NULL);
}

static int interpreter_gone(void)
{
#if PY_VERSION_HEX >= 0x030D0000
	return !Py_IsInitialized() || Py_IsFinalizing();
#else
	return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

static void trampoline(void *arg)
{
	struct pycb *r = cb_take((uint64_t)(uintptr_t)arg);
	PyGILState_STATE g;
	PyObject *res;

	if (!r)
		return;
	/* The GIL taken at shutdown would end the thread in the library. */
	if (interpreter_gone())
		return;
	g = PyGILState_Ensure();
	res = PyObject_CallOneArg(r->func, r->data);
	if (res)
		Py_DECREF(res);
	else
		PyErr_WriteUnraisable(r->func);
	cb_free(r);
	PyGILState_Release(g);
}

/*
 * A kind of this file (calls.h): cb(j), a callable and its argument, on
 * the stream v[j]; a failed call will never run it: the record goes then.
 */
#define ACLPY_K_cb(j)	(cb, "OO", "", , j, )
#define ACLPY_C_cb(i, c, m, x)						\
	(, &v[i].a.o, &v[i].a.p), (),					\
	(, trampoline, (void *)(uintptr_t)v[i].a.n), (),		\
	(&& cb_new(&v[i], v[m].p)), (cb_end(&v[i], ret);)

static int cb_new(union aclpy_val *slot, void *stream)
{
	PyObject *func = slot->a.o, *data = slot->a.p;
	struct pycb *r;

	if (!PyCallable_Check(func)) {
		PyErr_Format(PyExc_TypeError, "callback must be callable, not %.200s",
			     Py_TYPE(func)->tp_name);
		return 0;
	}
	r = PyMem_RawCalloc(1, sizeof(*r));
	if (!r) {
		PyErr_NoMemory();
		return 0;
	}
	Py_INCREF(func);
	Py_INCREF(data);
	r->func = func;
	r->data = data;
	r->stream = stream;
	r->ctx = current_ctx();
	cb_insert(r);
	slot->a.n = r->id;	/* r may be run and freed once launched */
	return 1;
}

static void cb_end(const union aclpy_val *slot, aclError ret)
{
	struct pycb *r = ret && slot->a.n ? cb_take(slot->a.n) : NULL;

	if (r)
		cb_free(r);
}

/* A kind of this file: made(j), the record of the context v[j] made. */
#define ACLPY_K_made(j)	(made, "", "", , j, )
#define ACLPY_C_made(i, c, m, x)					\
	(), (), (), (), (&& made_new(&v[i])), (made_end(&v[i], v[m].p, ret);)

static int made_new(union aclpy_val *slot)
{
	slot->a.p = PyMem_RawCalloc(1, sizeof(struct pycb));
	if (!slot->a.p)
		PyErr_NoMemory();
	return slot->a.p != NULL;
}

static void made_end(const union aclpy_val *slot, void *ctx, aclError ret)
{
	struct pycb *r = slot->a.p;

	if (ret) {
		PyMem_RawFree(r);
		return;
	}
	r->ctx = ctx;
	cb_insert(r);
}

/* The .after of destroy_context: its record and callbacks go. */
static void ctx_destroyed(const union aclpy_val *args)
{
	cb_drop(BY_CTX, NULL, args[0].p);
}

/* get_primary_ctx_state's outputs in pyACL's order: active, flags. */
static aclError primary_ctx_state(int32_t dev, int32_t *active,
				  uint32_t *flags)
{
	return aclrtGetPrimaryCtxState(dev, flags, active);
}

#define RUNTIME_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	CALL(create_context, aclrtCreateContext, (out_p, i32, made(0)), (), \
	     "context, ret = create_context(device_id)")		\
	AUTO(aclrtDestroyContext, .after = ctx_destroyed)		\
	CALL(set_context, aclrtSetCurrentContext, (p), (),		\
	     "ret = set_context(context)")				\
	CALL(get_context, aclrtGetCurrentContext, (out_p), (),		\
	     "context, ret = get_context()")				\
	AUTO(aclrtCtxGetCurrentDefaultStream)				\
	CALL(get_primary_ctx_state, primary_ctx_state,			\
	     (i32, out_i32, out_u32), (),				\
	     "active, flags, ret = get_primary_ctx_state(device_id)")	\
	AUTO(aclrtCreateStreamWithConfig)				\
	DOC(aclrtDeviceGetStreamPriorityRange,				\
	    "least, greatest, ret = device_get_stream_priority_range()", \
	    .hold_gil = true, .raw = true)				\
	AUTO(aclrtSynchronizeStreamWithTimeout)				\
	CALL(stream_query, aclrtStreamQuery, (p, out_init),		\
	     (.raw = true, .init = ACL_STREAM_STATUS_RESERVED),		\
	     "status, ret = stream_query(stream)")			\
	AUTO(aclrtSetStreamFailureMode)					\
	AUTO(aclrtStreamGetId)						\
	AUTO(aclrtStreamGetPriority)					\
	AUTO(aclrtStreamGetFlags)					\
	/* Callbacks handed to a report thread still run: keep them. */	\
	AUTO(aclrtStreamAbort)						\
	AUTO(aclrtDestroyStreamForce, .after = aclpy_rt_stream_gone)	\
	AUTO(aclrtMemsetAsync)						\
	AUTO(aclrtCreateEvent)						\
	AUTO(aclrtCreateEventWithFlag)					\
	AUTO(aclrtCreateEventExWithFlag)				\
	AUTO(aclrtDestroyEvent)						\
	AUTO(aclrtRecordEvent)						\
	AUTO(aclrtResetEvent)						\
	CALL(query_event, aclrtQueryEvent, (p, out_init),		\
	     (.raw = true, .init = ACL_EVENT_STATUS_RESERVED),		\
	     "status, ret = query_event(event)")			\
	CALL(query_event_status, aclrtQueryEventStatus, (p, out_init),	\
	     (.raw = true,						\
	      .init = ACL_EVENT_RECORDED_STATUS_NOT_READY),		\
	     "status, ret = query_event_status(event)")			\
	CALL(query_event_wait_status, aclrtQueryEventWaitStatus,	\
	     (p, out_init),						\
	     (.raw = true, .init = ACL_EVENT_WAIT_STATUS_RESERVED),	\
	     "status, ret = query_event_wait_status(event)")		\
	AUTO(aclrtSynchronizeEvent)					\
	AUTO(aclrtSynchronizeEventWithTimeout)				\
	DOC(aclrtEventElapsedTime, "ms, ret = event_elapsed_time(start, end)") \
	AUTO(aclrtEventGetTimestamp)					\
	AUTO(aclrtStreamWaitEvent)					\
	AUTO(aclrtGetEventId)						\
	DOC(aclrtGetEventAvailNum, "count, ret = get_event_avail_num()") \
	/* Unsubscribing runs the callbacks still queued for the thread. */ \
	AUTO(aclrtSubscribeReport)					\
	CALL(unsubscribe_report, aclrtUnSubscribeReport, (u64, p), (),	\
	     "ret = unsubscribe_report(thread_id, stream)")		\
	CALL(launch_callback, aclrtLaunchCallback, (cb(2), i32, p), (),	\
	     "ret = launch_callback(func, user_data, block_type, stream): " \
	     "func(user_data) runs on the thread subscribed to the stream") \
	DOC(aclrtProcessReport, "ret = process_report(timeout_ms)")	\
	CALL(launch_host_func, aclrtLaunchHostFunc, (p, cb(0)), (),	\
	     "ret = launch_host_func(stream, func, args): func(args) in stream order") \
	DOC(aclrtSubscribeHostFunc,					\
	    "ret = subscribe_host_func(thread_id, stream)")		\
	DOC(aclrtProcessHostFunc, "ret = process_host_func(timeout_ms)") \
	CALL(unsubscribe_host_func, aclrtUnSubscribeHostFunc, (u64, p), (), \
	     "ret = unsubscribe_host_func(thread_id, stream)")

ACLPY_TABLE(aclpy_rt_runtime_methods, RUNTIME_CALLS)
