// SPDX-License-Identifier: MIT
/*
 * acl.rt: contexts, streams beyond create/destroy, events, host callbacks
 * and memset_async, under pyACL's names and return conventions:
 *
 *   context, ret = acl.rt.create_context(device_id)
 *   event, ret = acl.rt.create_event()
 *   ms, ret = acl.rt.event_elapsed_time(start, end)
 *   ret = acl.rt.launch_callback(func, user_data, block_type, stream)
 *   ret = acl.rt.process_report(timeout)
 *
 * Handles (contexts, streams, events) are ints, 0 where a call failed.
 * The GIL is released around every library call: several of them wait
 * (synchronisation, process_report, destroying a stream drains it), and
 * while they wait the library may run a Python callback on another thread,
 * which needs the GIL.
 *
 * Python callbacks.  The library calls a C trampoline on another thread (a
 * stream's worker, or the subscribed thread inside process_report or
 * process_host_func) with a small id as userData; the id names a record
 * holding references to the callable and its argument, in a registry of
 * callbacks not yet run.  The trampoline takes the record out of the
 * registry, takes the GIL, calls func(data), and drops the references.
 * The library never tells a caller that a callback it queued was thrown
 * away (a stream destroyed with DestroyStreamForce, aborted, stopped on
 * failure, or its context gone), so the records a dead stream or context
 * left are dropped when this module destroys it: destroy_stream(_force),
 * destroy_context, reset_device (the default context's callbacks, once
 * the default context is gone) and finalize (all).  A callback that a
 * report thread had already taken but not yet started when its stream is
 * destroyed is then dropped rather than run; callers destroy streams after
 * synchronising them and unsubscribing, so this window stays closed in
 * practice.  Looking records up by id rather than by pointer keeps a late
 * trampoline from touching a freed record: it finds nothing and returns.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclpy.h"

static PyObject *handle_ret(void *h, aclError ret)
{
	return Py_BuildValue("(Ki)",
			     ret ? 0ULL : (unsigned long long)(uintptr_t)h,
			     (int)ret);
}

/* ---- the registry of Python callbacks not yet run ---- */

struct pycb {
	struct pycb *next;
	uint64_t id;
	PyObject *func;
	PyObject *data;
	void *stream;		/* as the caller named it; NULL: default */
	void *ctx;		/* current when it was launched */
	bool primary;		/* ctx is the device's default context */
};

static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pycb *cb_head, **cb_tail = &cb_head;
static uint64_t cb_next_id = 1;

/* Contexts made by create_context and not destroyed: the others are the
 * device's default context. */
struct made_ctx {
	struct made_ctx *next;
	void *ctx;
};

static struct made_ctx *made_ctxs;	/* under cb_lock */

static bool made_ctx_locked(void *ctx)
{
	struct made_ctx *m;

	for (m = made_ctxs; m; m = m->next)
		if (m->ctx == ctx)
			return true;
	return false;
}

static void cb_insert(struct pycb *r)
{
	pthread_mutex_lock(&cb_lock);
	r->id = cb_next_id++;
	r->primary = !made_ctx_locked(r->ctx);
	r->next = NULL;
	*cb_tail = r;
	cb_tail = &r->next;
	pthread_mutex_unlock(&cb_lock);
}

static void cb_fix_tail_locked(void)
{
	struct pycb **pp;

	for (pp = &cb_head; *pp; pp = &(*pp)->next)
		;
	cb_tail = pp;
}

/* Unlink the record with this id; NULL if it is gone (run or dropped). */
static struct pycb *cb_take(uint64_t id)
{
	struct pycb **pp, *r;

	pthread_mutex_lock(&cb_lock);
	for (pp = &cb_head; (r = *pp); pp = &r->next) {
		if (r->id == id) {
			*pp = r->next;
			if (!r->next)
				cb_tail = pp;
			break;
		}
	}
	pthread_mutex_unlock(&cb_lock);
	return r;
}

/* With the GIL held. */
static void cb_free(struct pycb *r)
{
	Py_XDECREF(r->func);
	Py_XDECREF(r->data);
	PyMem_RawFree(r);
}

enum cb_match { BY_STREAM, BY_CTX, BY_PRIMARY, ALL };

/* Drop the records a dead stream or context left; with the GIL held. */
static void cb_drop(enum cb_match how, void *stream, void *ctx)
{
	struct pycb **pp, *r, *dead = NULL;
	bool m;

	pthread_mutex_lock(&cb_lock);
	for (pp = &cb_head; (r = *pp);) {
		switch (how) {
		case BY_STREAM:
			m = r->stream == stream && r->ctx == ctx;
			break;
		case BY_CTX:
			m = r->ctx == ctx;
			break;
		case BY_PRIMARY:
			m = r->primary;
			break;
		default:
			m = true;
		}
		if (m) {
			*pp = r->next;
			r->next = dead;
			dead = r;
		} else {
			pp = &r->next;
		}
	}
	cb_fix_tail_locked();
	pthread_mutex_unlock(&cb_lock);
	while ((r = dead)) {
		dead = r->next;
		cb_free(r);
	}
}

static void *current_ctx(void)
{
	aclrtContext c = NULL;

	if (aclrtGetCurrentContext(&c))
		return NULL;
	return c;
}

/* Hooks for aclmodule.c's destroy_stream, reset_device and finalize. */
void aclpy_rt_stream_gone(void *stream)
{
	cb_drop(BY_STREAM, stream, current_ctx());
}

void aclpy_rt_device_reset(int32_t device_id)
{
	uint32_t flags = 0;
	int32_t active = 1;

	if (aclrtGetPrimaryCtxState(device_id, &flags, &active) == ACL_SUCCESS &&
	    !active)
		cb_drop(BY_PRIMARY, NULL, NULL);
}

void aclpy_rt_finalized(void)
{
	struct made_ctx *m;

	cb_drop(ALL, NULL, NULL);
	pthread_mutex_lock(&cb_lock);
	while ((m = made_ctxs)) {
		made_ctxs = m->next;
		PyMem_RawFree(m);
	}
	pthread_mutex_unlock(&cb_lock);
}

static int interpreter_gone(void)
{
#if PY_VERSION_HEX >= 0x030D0000
	return !Py_IsInitialized() || Py_IsFinalizing();
#else
	return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

/* Called by the library on a thread of its own or a subscribed one. */
static void trampoline(void *arg)
{
	struct pycb *r = cb_take((uint64_t)(uintptr_t)arg);
	PyGILState_STATE g;
	PyObject *res;

	if (!r)
		return;
	/* Taking the GIL during interpreter shutdown would end this
	 * thread inside the library: leave the references, the process is
	 * exiting. */
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

static struct pycb *cb_new(PyObject *func, PyObject *data, void *stream)
{
	struct pycb *r;

	if (!PyCallable_Check(func)) {
		PyErr_Format(PyExc_TypeError, "callback must be callable, not %.200s",
			     Py_TYPE(func)->tp_name);
		return NULL;
	}
	r = PyMem_RawCalloc(1, sizeof(*r));
	if (!r) {
		PyErr_NoMemory();
		return NULL;
	}
	Py_INCREF(func);
	Py_INCREF(data);
	r->func = func;
	r->data = data;
	r->stream = stream;
	r->ctx = current_ctx();
	cb_insert(r);
	return r;
}

/* The launch failed: the library will never call the trampoline. */
static void cb_unlaunch(uint64_t id)
{
	struct pycb *r = cb_take(id);

	if (r)
		cb_free(r);
}

/* ---- contexts ---- */

static PyObject *py_create_context(PyObject *self, PyObject *args)
{
	aclrtContext c = NULL;
	struct made_ctx *m;
	int32_t dev;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:create_context", conv_i32, &dev))
		return NULL;
	m = PyMem_RawMalloc(sizeof(*m));
	if (!m)
		return PyErr_NoMemory();
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtCreateContext(&c, dev);
	Py_END_ALLOW_THREADS
	if (ret) {
		PyMem_RawFree(m);
	} else {
		pthread_mutex_lock(&cb_lock);
		m->ctx = c;
		m->next = made_ctxs;
		made_ctxs = m;
		pthread_mutex_unlock(&cb_lock);
	}
	return handle_ret(c, ret);
}

static PyObject *py_destroy_context(PyObject *self, PyObject *args)
{
	struct made_ctx **pm, *m = NULL;
	void *c;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:destroy_context", conv_ptr, &c))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtDestroyContext(c);
	Py_END_ALLOW_THREADS
	if (ret == ACL_SUCCESS) {
		pthread_mutex_lock(&cb_lock);
		for (pm = &made_ctxs; (m = *pm); pm = &m->next) {
			if (m->ctx == c) {
				*pm = m->next;
				break;
			}
		}
		pthread_mutex_unlock(&cb_lock);
		PyMem_RawFree(m);
		cb_drop(BY_CTX, NULL, c);
	}
	return PyLong_FromLong(ret);
}

static PyObject *py_set_context(PyObject *self, PyObject *args)
{
	void *c;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:set_context", conv_ptr, &c))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetCurrentContext(c);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_context(PyObject *self, PyObject *args)
{
	aclrtContext c = NULL;
	aclError ret;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetCurrentContext(&c);
	Py_END_ALLOW_THREADS
	return handle_ret(c, ret);
}

static PyObject *py_ctx_get_current_default_stream(PyObject *self,
						   PyObject *args)
{
	aclrtStream s = NULL;
	aclError ret;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtCtxGetCurrentDefaultStream(&s);
	Py_END_ALLOW_THREADS
	return handle_ret(s, ret);
}

/* pyACL: active, flags, ret = get_primary_ctx_state(device_id) */
static PyObject *py_get_primary_ctx_state(PyObject *self, PyObject *args)
{
	uint32_t flags = 0;
	int32_t dev, active = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:get_primary_ctx_state", conv_i32, &dev))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetPrimaryCtxState(dev, &flags, &active);
	Py_END_ALLOW_THREADS
	if (ret)
		flags = 0, active = 0;
	return Py_BuildValue("(iIi)", (int)active, (unsigned int)flags,
			     (int)ret);
}

/* ---- streams ---- */

static PyObject *py_create_stream_with_config(PyObject *self, PyObject *args)
{
	aclrtStream s = NULL;
	uint32_t prio, flag;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:create_stream_with_config",
			      conv_u32, &prio, conv_u32, &flag))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtCreateStreamWithConfig(&s, prio, flag);
	Py_END_ALLOW_THREADS
	return handle_ret(s, ret);
}

static PyObject *py_device_get_stream_priority_range(PyObject *self,
						     PyObject *args)
{
	int32_t least = 0, greatest = 0;
	aclError ret;

	(void)self;
	(void)args;
	ret = aclrtDeviceGetStreamPriorityRange(&least, &greatest);
	return Py_BuildValue("(iii)", (int)least, (int)greatest, (int)ret);
}

static PyObject *py_synchronize_stream_with_timeout(PyObject *self,
						    PyObject *args)
{
	int32_t timeout;
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:synchronize_stream_with_timeout",
			      conv_ptr, &s, conv_i32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSynchronizeStreamWithTimeout(s, timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_stream_query(PyObject *self, PyObject *args)
{
	aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:stream_query", conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtStreamQuery(s, &st);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", (int)st, (int)ret);
}

static PyObject *py_set_stream_failure_mode(PyObject *self, PyObject *args)
{
	uint64_t mode;
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:set_stream_failure_mode",
			      conv_ptr, &s, conv_u64, &mode))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetStreamFailureMode(s, mode);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_stream_get_id(PyObject *self, PyObject *args)
{
	int32_t id = 0;
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:stream_get_id", conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtStreamGetId(s, &id);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", ret ? 0 : (int)id, (int)ret);
}

typedef aclError (*stream_u32_fn)(aclrtStream, uint32_t *);

static PyObject *do_stream_u32(PyObject *args, const char *fmt,
			       stream_u32_fn fn)
{
	uint32_t v = 0;
	void *s;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(s, &v);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)v, (int)ret);
}

static PyObject *py_stream_get_priority(PyObject *self, PyObject *args)
{
	(void)self;
	return do_stream_u32(args, "O&:stream_get_priority",
			     aclrtStreamGetPriority);
}

static PyObject *py_stream_get_flags(PyObject *self, PyObject *args)
{
	(void)self;
	return do_stream_u32(args, "O&:stream_get_flags", aclrtStreamGetFlags);
}

static PyObject *py_stream_abort(PyObject *self, PyObject *args)
{
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:stream_abort", conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtStreamAbort(s);
	Py_END_ALLOW_THREADS
	/* Callbacks already handed to a report thread still run: keep them. */
	return PyLong_FromLong(ret);
}

static PyObject *py_destroy_stream_force(PyObject *self, PyObject *args)
{
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:destroy_stream_force", conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtDestroyStreamForce(s);
	Py_END_ALLOW_THREADS
	if (ret == ACL_SUCCESS)
		aclpy_rt_stream_gone(s);
	return PyLong_FromLong(ret);
}

static PyObject *py_memset_async(PyObject *self, PyObject *args)
{
	void *p, *s;
	size_t max, count;
	int32_t value;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&O&O&:memset_async", conv_ptr, &p,
			      conv_size, &max, conv_i32, &value,
			      conv_size, &count, conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtMemsetAsync(p, max, value, count, s);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

/* ---- events ---- */

static PyObject *py_create_event(PyObject *self, PyObject *args)
{
	aclrtEvent e = NULL;
	aclError ret;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtCreateEvent(&e);
	Py_END_ALLOW_THREADS
	return handle_ret(e, ret);
}

static PyObject *do_create_event_flag(PyObject *args, const char *fmt,
				      aclError (*fn)(aclrtEvent *, uint32_t))
{
	aclrtEvent e = NULL;
	uint32_t flag;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_u32, &flag))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(&e, flag);
	Py_END_ALLOW_THREADS
	return handle_ret(e, ret);
}

static PyObject *py_create_event_with_flag(PyObject *self, PyObject *args)
{
	(void)self;
	return do_create_event_flag(args, "O&:create_event_with_flag",
				    aclrtCreateEventWithFlag);
}

static PyObject *py_create_event_ex_with_flag(PyObject *self, PyObject *args)
{
	(void)self;
	return do_create_event_flag(args, "O&:create_event_ex_with_flag",
				    aclrtCreateEventExWithFlag);
}

static PyObject *do_event_call(PyObject *args, const char *fmt,
			       aclError (*fn)(aclrtEvent))
{
	void *e;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(e);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_destroy_event(PyObject *self, PyObject *args)
{
	(void)self;
	return do_event_call(args, "O&:destroy_event", aclrtDestroyEvent);
}

static PyObject *py_synchronize_event(PyObject *self, PyObject *args)
{
	(void)self;
	return do_event_call(args, "O&:synchronize_event",
			     aclrtSynchronizeEvent);
}

static PyObject *do_event_stream(PyObject *args, const char *fmt,
				 aclError (*fn)(aclrtEvent, aclrtStream))
{
	void *e, *s;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_ptr, &e, conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(e, s);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_record_event(PyObject *self, PyObject *args)
{
	(void)self;
	return do_event_stream(args, "O&O&:record_event", aclrtRecordEvent);
}

static PyObject *py_reset_event(PyObject *self, PyObject *args)
{
	(void)self;
	return do_event_stream(args, "O&O&:reset_event", aclrtResetEvent);
}

static PyObject *py_stream_wait_event(PyObject *self, PyObject *args)
{
	void *s, *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:stream_wait_event", conv_ptr, &s,
			      conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtStreamWaitEvent(s, e);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_query_event(PyObject *self, PyObject *args)
{
	aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:query_event", conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtQueryEvent(e, &st);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", (int)st, (int)ret);
}

static PyObject *py_query_event_status(PyObject *self, PyObject *args)
{
	aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:query_event_status", conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtQueryEventStatus(e, &st);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", (int)st, (int)ret);
}

static PyObject *py_query_event_wait_status(PyObject *self, PyObject *args)
{
	aclrtEventWaitStatus st = ACL_EVENT_WAIT_STATUS_RESERVED;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:query_event_wait_status", conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtQueryEventWaitStatus(e, &st);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", (int)st, (int)ret);
}

static PyObject *py_synchronize_event_with_timeout(PyObject *self,
						   PyObject *args)
{
	int32_t timeout;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:synchronize_event_with_timeout",
			      conv_ptr, &e, conv_i32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSynchronizeEventWithTimeout(e, timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_event_elapsed_time(PyObject *self, PyObject *args)
{
	float ms = 0.0f;
	void *start, *end;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:event_elapsed_time", conv_ptr, &start,
			      conv_ptr, &end))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtEventElapsedTime(&ms, start, end);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(fi)", ret ? 0.0 : (double)ms, (int)ret);
}

static PyObject *py_event_get_timestamp(PyObject *self, PyObject *args)
{
	uint64_t ts = 0;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:event_get_timestamp", conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtEventGetTimestamp(e, &ts);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ki)", ret ? 0ULL : (unsigned long long)ts,
			     (int)ret);
}

static PyObject *py_get_event_id(PyObject *self, PyObject *args)
{
	uint32_t id = 0;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:get_event_id", conv_ptr, &e))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetEventId(e, &id);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)id, (int)ret);
}

static PyObject *py_get_event_avail_num(PyObject *self, PyObject *args)
{
	uint32_t n = 0;
	aclError ret;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetEventAvailNum(&n);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)n, (int)ret);
}

/* ---- host callbacks ---- */

static PyObject *do_subscribe(PyObject *args, const char *fmt,
			      aclError (*fn)(uint64_t, aclrtStream))
{
	uint64_t tid;
	void *s;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_u64, &tid, conv_ptr, &s))
		return NULL;
	/* Unsubscribing runs the callbacks still queued for the thread. */
	Py_BEGIN_ALLOW_THREADS
	ret = fn(tid, s);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_subscribe_report(PyObject *self, PyObject *args)
{
	(void)self;
	return do_subscribe(args, "O&O&:subscribe_report",
			    aclrtSubscribeReport);
}

static PyObject *py_unsubscribe_report(PyObject *self, PyObject *args)
{
	(void)self;
	return do_subscribe(args, "O&O&:unsubscribe_report",
			    aclrtUnSubscribeReport);
}

static PyObject *py_subscribe_host_func(PyObject *self, PyObject *args)
{
	(void)self;
	return do_subscribe(args, "O&O&:subscribe_host_func",
			    aclrtSubscribeHostFunc);
}

static PyObject *py_unsubscribe_host_func(PyObject *self, PyObject *args)
{
	(void)self;
	return do_subscribe(args, "O&O&:unsubscribe_host_func",
			    aclrtUnSubscribeHostFunc);
}

static PyObject *do_process(PyObject *args, const char *fmt,
			    aclError (*fn)(int32_t))
{
	int32_t timeout;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_i32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_process_report(PyObject *self, PyObject *args)
{
	(void)self;
	return do_process(args, "O&:process_report", aclrtProcessReport);
}

static PyObject *py_process_host_func(PyObject *self, PyObject *args)
{
	(void)self;
	return do_process(args, "O&:process_host_func", aclrtProcessHostFunc);
}

/* ret = launch_callback(func, user_data, block_type, stream) */
static PyObject *py_launch_callback(PyObject *self, PyObject *args)
{
	PyObject *func, *data;
	struct pycb *r;
	int32_t block;
	uint64_t id;
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "OOO&O&:launch_callback", &func, &data,
			      conv_i32, &block, conv_ptr, &s))
		return NULL;
	r = cb_new(func, data, s);
	if (!r)
		return NULL;
	id = r->id;	/* r may be run and freed once launched */
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtLaunchCallback(trampoline, (void *)(uintptr_t)id,
				  (aclrtCallbackBlockType)block, s);
	Py_END_ALLOW_THREADS
	if (ret)
		cb_unlaunch(id);
	return PyLong_FromLong(ret);
}

/* ret = launch_host_func(stream, func, args): the C call's order */
static PyObject *py_launch_host_func(PyObject *self, PyObject *args)
{
	PyObject *func, *data;
	struct pycb *r;
	uint64_t id;
	void *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&OO:launch_host_func", conv_ptr, &s,
			      &func, &data))
		return NULL;
	r = cb_new(func, data, s);
	if (!r)
		return NULL;
	id = r->id;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtLaunchHostFunc(s, trampoline, (void *)(uintptr_t)id);
	Py_END_ALLOW_THREADS
	if (ret)
		cb_unlaunch(id);
	return PyLong_FromLong(ret);
}

/* ---- table ---- */

PyMethodDef aclpy_rt_runtime_methods[] = {
	{ "create_context", py_create_context, METH_VARARGS,
	  "context, ret = create_context(device_id)" },
	{ "destroy_context", py_destroy_context, METH_VARARGS,
	  "ret = destroy_context(context)" },
	{ "set_context", py_set_context, METH_VARARGS,
	  "ret = set_context(context)" },
	{ "get_context", py_get_context, METH_NOARGS,
	  "context, ret = get_context()" },
	{ "ctx_get_current_default_stream", py_ctx_get_current_default_stream,
	  METH_NOARGS, "stream, ret = ctx_get_current_default_stream()" },
	{ "get_primary_ctx_state", py_get_primary_ctx_state, METH_VARARGS,
	  "active, flags, ret = get_primary_ctx_state(device_id)" },
	{ "create_stream_with_config", py_create_stream_with_config,
	  METH_VARARGS, "stream, ret = create_stream_with_config(priority, flag)" },
	{ "device_get_stream_priority_range",
	  py_device_get_stream_priority_range, METH_NOARGS,
	  "least, greatest, ret = device_get_stream_priority_range()" },
	{ "synchronize_stream_with_timeout", py_synchronize_stream_with_timeout,
	  METH_VARARGS, "ret = synchronize_stream_with_timeout(stream, timeout)" },
	{ "stream_query", py_stream_query, METH_VARARGS,
	  "status, ret = stream_query(stream)" },
	{ "set_stream_failure_mode", py_set_stream_failure_mode, METH_VARARGS,
	  "ret = set_stream_failure_mode(stream, mode)" },
	{ "stream_get_id", py_stream_get_id, METH_VARARGS,
	  "stream_id, ret = stream_get_id(stream)" },
	{ "stream_get_priority", py_stream_get_priority, METH_VARARGS,
	  "priority, ret = stream_get_priority(stream)" },
	{ "stream_get_flags", py_stream_get_flags, METH_VARARGS,
	  "flags, ret = stream_get_flags(stream)" },
	{ "stream_abort", py_stream_abort, METH_VARARGS,
	  "ret = stream_abort(stream)" },
	{ "destroy_stream_force", py_destroy_stream_force, METH_VARARGS,
	  "ret = destroy_stream_force(stream)" },
	{ "memset_async", py_memset_async, METH_VARARGS,
	  "ret = memset_async(dev_ptr, max_count, value, count, stream)" },
	{ "create_event", py_create_event, METH_NOARGS,
	  "event, ret = create_event()" },
	{ "create_event_with_flag", py_create_event_with_flag, METH_VARARGS,
	  "event, ret = create_event_with_flag(flag)" },
	{ "create_event_ex_with_flag", py_create_event_ex_with_flag,
	  METH_VARARGS, "event, ret = create_event_ex_with_flag(flag)" },
	{ "destroy_event", py_destroy_event, METH_VARARGS,
	  "ret = destroy_event(event)" },
	{ "record_event", py_record_event, METH_VARARGS,
	  "ret = record_event(event, stream)" },
	{ "reset_event", py_reset_event, METH_VARARGS,
	  "ret = reset_event(event, stream)" },
	{ "query_event", py_query_event, METH_VARARGS,
	  "status, ret = query_event(event)" },
	{ "query_event_status", py_query_event_status, METH_VARARGS,
	  "status, ret = query_event_status(event)" },
	{ "query_event_wait_status", py_query_event_wait_status, METH_VARARGS,
	  "status, ret = query_event_wait_status(event)" },
	{ "synchronize_event", py_synchronize_event, METH_VARARGS,
	  "ret = synchronize_event(event)" },
	{ "synchronize_event_with_timeout", py_synchronize_event_with_timeout,
	  METH_VARARGS, "ret = synchronize_event_with_timeout(event, timeout)" },
	{ "event_elapsed_time", py_event_elapsed_time, METH_VARARGS,
	  "ms, ret = event_elapsed_time(start, end)" },
	{ "event_get_timestamp", py_event_get_timestamp, METH_VARARGS,
	  "timestamp, ret = event_get_timestamp(event)" },
	{ "stream_wait_event", py_stream_wait_event, METH_VARARGS,
	  "ret = stream_wait_event(stream, event)" },
	{ "get_event_id", py_get_event_id, METH_VARARGS,
	  "event_id, ret = get_event_id(event)" },
	{ "get_event_avail_num", py_get_event_avail_num, METH_NOARGS,
	  "count, ret = get_event_avail_num()" },
	{ "subscribe_report", py_subscribe_report, METH_VARARGS,
	  "ret = subscribe_report(thread_id, stream)" },
	{ "unsubscribe_report", py_unsubscribe_report, METH_VARARGS,
	  "ret = unsubscribe_report(thread_id, stream)" },
	{ "launch_callback", py_launch_callback, METH_VARARGS,
	  "ret = launch_callback(func, user_data, block_type, stream): "
	  "func(user_data) runs on the thread subscribed to the stream" },
	{ "process_report", py_process_report, METH_VARARGS,
	  "ret = process_report(timeout_ms)" },
	{ "launch_host_func", py_launch_host_func, METH_VARARGS,
	  "ret = launch_host_func(stream, func, args): func(args) in stream order" },
	{ "subscribe_host_func", py_subscribe_host_func, METH_VARARGS,
	  "ret = subscribe_host_func(thread_id, stream)" },
	{ "process_host_func", py_process_host_func, METH_VARARGS,
	  "ret = process_host_func(timeout_ms)" },
	{ "unsubscribe_host_func", py_unsubscribe_host_func, METH_VARARGS,
	  "ret = unsubscribe_host_func(thread_id, stream)" },
	{ NULL, NULL, 0, NULL },
};
