// SPDX-License-Identifier: MIT
/*
 * acl.rt: notifies, IPC events, timed stream waits, 64-bit value
 * write/wait, runtime settings, device id mappings, and the device and
 * stream controls (timed device synchronisation, task abort, stream stop,
 * attributes, V2 creation, core limits), under pyACL's names and return
 * conventions where pyACL has them:
 *
 *   notify, ret = acl.rt.create_notify(flag)
 *   key, ret = acl.rt.notify_get_export_key(notify, len, flags)   (str)
 *   ret = acl.rt.notify_set_import_pid(notify, [pid, ...])
 *   notify, ret = acl.rt.notify_import_by_key(key, flags)
 *   value, ret = acl.rt.get_sys_param_opt(opt)
 *   value, ret = acl.rt.get_devices_topo(device_id, other_device_id)
 *
 * pyACL has no binding for aclrtIpcGetEventHandle/aclrtIpcOpenEventHandle,
 * aclrtStreamWaitEventWithTimeout, two of the id mappings,
 * aclrtStreamStop and aclrtCreateStreamV2; ours take the C name's words
 * (lib/README.md).  Nor for the stream and device state callbacks and the
 * task abort callback, which have no binding here.  The IPC event handle is the C
 * struct's 64 bytes as a bytes object: opaque, it goes to the other
 * process as it is (e.g. as handle.hex()).
 *
 * Handles (notifies, events, streams) are ints, 0 where a call failed.
 * The GIL is released around every library call, as in runtime.c.
 */
#include <string.h>

#include "acl/acl.h"
#include "aclpy.h"

/* Key buffers: CANN's keys fit 65 bytes; a larger len asks for this. */
#define KEY_LEN_MAX	1024

static PyObject *handle_ret(void *h, aclError ret)
{
	return Py_BuildValue("(Ki)",
			     ret ? 0ULL : (unsigned long long)(uintptr_t)h,
			     (int)ret);
}

/* ---- notifies ---- */

static PyObject *py_create_notify(PyObject *self, PyObject *args)
{
	aclrtNotify n = NULL;
	uint64_t flag;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:create_notify", conv_u64, &flag))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtCreateNotify(&n, flag);
	Py_END_ALLOW_THREADS
	return handle_ret(n, ret);
}

static PyObject *py_destroy_notify(PyObject *self, PyObject *args)
{
	void *n;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:destroy_notify", conv_ptr, &n))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtDestroyNotify(n);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_record_notify(PyObject *self, PyObject *args)
{
	void *n, *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:record_notify", conv_ptr, &n,
			      conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtRecordNotify(n, s);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_wait_and_reset_notify(PyObject *self, PyObject *args)
{
	uint32_t timeout;
	void *n, *s;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&:wait_and_reset_notify", conv_ptr,
			      &n, conv_ptr, &s, conv_u32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtWaitAndResetNotify(n, s, timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_notify_id(PyObject *self, PyObject *args)
{
	uint32_t id = 0;
	void *n;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:get_notify_id", conv_ptr, &n))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetNotifyId(n, &id);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)id, (int)ret);
}

/* key, ret = notify_get_export_key(notify, len, flags): key is a str. */
static PyObject *py_notify_get_export_key(PyObject *self, PyObject *args)
{
	uint64_t flags;
	size_t len;
	char *key;
	void *n;
	aclError ret;
	PyObject *res;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&:notify_get_export_key", conv_ptr,
			      &n, conv_size, &len, conv_u64, &flags))
		return NULL;
	if (len > KEY_LEN_MAX)
		len = KEY_LEN_MAX;
	/* One byte more than the library may write: always terminated. */
	key = PyMem_RawCalloc(1, len + 1);
	if (!key)
		return PyErr_NoMemory();
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtNotifyGetExportKey(n, key, len, flags);
	Py_END_ALLOW_THREADS
	res = Py_BuildValue("(si)", ret ? "" : key, (int)ret);
	PyMem_RawFree(key);
	return res;
}

/* ret = notify_set_import_pid(notify, pids): a list (or tuple) of ints. */
static PyObject *py_notify_set_import_pid(PyObject *self, PyObject *args)
{
	PyObject *list;
	size_t num;
	int32_t *pids;
	void *n;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O:notify_set_import_pid", conv_ptr, &n,
			      &list))
		return NULL;
	pids = aclpy_pid_list(list, &num);
	if (!pids)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtNotifySetImportPid(n, pids, num);
	Py_END_ALLOW_THREADS
	PyMem_Free(pids);
	return PyLong_FromLong(ret);
}

static PyObject *py_notify_import_by_key(PyObject *self, PyObject *args)
{
	aclrtNotify n = NULL;
	const char *key;
	uint64_t flags;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "sO&:notify_import_by_key", &key,
			      conv_u64, &flags))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtNotifyImportByKey(&n, key, flags);
	Py_END_ALLOW_THREADS
	return handle_ret(n, ret);
}

/* ---- IPC events ---- */

/* handle, ret = ipc_get_event_handle(event): 64 bytes, b"" on failure. */
static PyObject *py_ipc_get_event_handle(PyObject *self, PyObject *args)
{
	aclrtIpcEventHandle h;
	void *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:ipc_get_event_handle", conv_ptr, &e))
		return NULL;
	memset(&h, 0, sizeof(h));
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcGetEventHandle(e, &h);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(y#i)", h.reserved,
			     ret ? (Py_ssize_t)0 : (Py_ssize_t)sizeof(h.reserved),
			     (int)ret);
}

/*
 * event, ret = ipc_open_event_handle(handle): any bytes-like object of at
 * most ACL_IPC_EVENT_HANDLE_SIZE bytes, zero-padded to the struct, so a
 * handle whose trailing zero bytes were lost in transit still opens.
 */
static PyObject *py_ipc_open_event_handle(PyObject *self, PyObject *args)
{
	aclrtIpcEventHandle h;
	aclrtEvent e = NULL;
	Py_buffer view;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "y*:ipc_open_event_handle", &view))
		return NULL;
	if (view.len > (Py_ssize_t)sizeof(h.reserved)) {
		PyBuffer_Release(&view);
		PyErr_Format(PyExc_ValueError,
			     "handle is %zd bytes, at most %u", view.len,
			     (unsigned int)sizeof(h.reserved));
		return NULL;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.reserved, view.buf, (size_t)view.len);
	PyBuffer_Release(&view);
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcOpenEventHandle(h, &e);
	Py_END_ALLOW_THREADS
	return handle_ret(e, ret);
}

/* ret = stream_wait_event_with_timeout(stream, event, timeout): C order */
static PyObject *py_stream_wait_event_with_timeout(PyObject *self,
						   PyObject *args)
{
	int32_t timeout;
	void *s, *e;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&:stream_wait_event_with_timeout",
			      conv_ptr, &s, conv_ptr, &e, conv_i32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtStreamWaitEventWithTimeout(s, e, timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

/* ---- 64-bit values in stream order ---- */

static PyObject *do_value(PyObject *args, const char *fmt,
			  aclError (*fn)(void *, uint64_t, uint32_t,
					 aclrtStream))
{
	uint64_t value;
	uint32_t flag;
	void *p, *s;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_ptr, &p, conv_u64, &value,
			      conv_u32, &flag, conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(p, value, flag, s);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_value_write(PyObject *self, PyObject *args)
{
	(void)self;
	return do_value(args, "O&O&O&O&:value_write", aclrtValueWrite);
}

static PyObject *py_value_wait(PyObject *self, PyObject *args)
{
	(void)self;
	return do_value(args, "O&O&O&O&:value_wait", aclrtValueWait);
}

/* ---- settings ---- */

static PyObject *do_set_opt(PyObject *args, const char *fmt,
			    aclError (*fn)(aclSysParamOpt, int64_t))
{
	int32_t opt;
	int64_t value;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_i32, &opt, conv_i64, &value))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn((aclSysParamOpt)opt, value);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *do_get_opt(PyObject *args, const char *fmt,
			    aclError (*fn)(aclSysParamOpt, int64_t *))
{
	int64_t value = 0;
	int32_t opt;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_i32, &opt))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn((aclSysParamOpt)opt, &value);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Li)", ret ? 0LL : (long long)value, (int)ret);
}

static PyObject *py_set_sys_param_opt(PyObject *self, PyObject *args)
{
	(void)self;
	return do_set_opt(args, "O&O&:set_sys_param_opt", aclrtSetSysParamOpt);
}

static PyObject *py_get_sys_param_opt(PyObject *self, PyObject *args)
{
	(void)self;
	return do_get_opt(args, "O&:get_sys_param_opt", aclrtGetSysParamOpt);
}

static PyObject *py_ctx_set_sys_param_opt(PyObject *self, PyObject *args)
{
	(void)self;
	return do_set_opt(args, "O&O&:ctx_set_sys_param_opt",
			  aclrtCtxSetSysParamOpt);
}

static PyObject *py_ctx_get_sys_param_opt(PyObject *self, PyObject *args)
{
	(void)self;
	return do_get_opt(args, "O&:ctx_get_sys_param_opt",
			  aclrtCtxGetSysParamOpt);
}

static PyObject *py_set_device_sat_mode(PyObject *self, PyObject *args)
{
	int32_t mode;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:set_device_sat_mode", conv_i32, &mode))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetDeviceSatMode((aclrtFloatOverflowMode)mode);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_device_sat_mode(PyObject *self, PyObject *args)
{
	aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_SATURATION;
	aclError ret;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetDeviceSatMode(&mode);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", ret ? 0 : (int)mode, (int)ret);
}

static PyObject *py_set_ts_device(PyObject *self, PyObject *args)
{
	int32_t ts;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:set_ts_device", conv_i32, &ts))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetTsDevice((aclrtTsId)ts);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_device_set_limit(PyObject *self, PyObject *args)
{
	int32_t limit;
	size_t value;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:device_set_limit", conv_i32, &limit,
			      conv_size, &value))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtDeviceSetLimit((aclrtDeviceLimit)limit, value);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_device_get_limit(PyObject *self, PyObject *args)
{
	int32_t limit;
	size_t value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:device_get_limit", conv_i32, &limit))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtDeviceGetLimit((aclrtDeviceLimit)limit, &value);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ni)", ret ? (Py_ssize_t)0 : (Py_ssize_t)value,
			     (int)ret);
}

/* ---- device ids ---- */

typedef aclError (*map_fn)(const int32_t, int32_t *const);

static PyObject *do_map(PyObject *args, const char *fmt, map_fn fn)
{
	int32_t from, to = 0;
	aclError ret;

	if (!PyArg_ParseTuple(args, fmt, conv_i32, &from))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(from, &to);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", ret ? 0 : (int)to, (int)ret);
}

#define MAP(pyname, cname)						\
static PyObject *py_##pyname(PyObject *self, PyObject *args)		\
{									\
	(void)self;							\
	return do_map(args, "O&:" #pyname, cname);			\
}

MAP(get_logic_dev_id_by_phy_dev_id, aclrtGetLogicDevIdByPhyDevId)
MAP(get_phy_dev_id_by_logic_dev_id, aclrtGetPhyDevIdByLogicDevId)
MAP(get_user_dev_id_by_phy_dev_id, aclrtGetUserDevIdByPhyDevId)
MAP(get_phy_dev_id_by_user_dev_id, aclrtGetPhyDevIdByUserDevId)
MAP(get_logic_dev_id_by_user_dev_id, aclrtGetLogicDevIdByUserDevId)
MAP(get_user_dev_id_by_logic_dev_id, aclrtGetUserDevIdByLogicDevId)

static PyObject *py_get_devices_topo(PyObject *self, PyObject *args)
{
	uint32_t dev, other;
	uint64_t value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_devices_topo", conv_u32, &dev,
			      conv_u32, &other))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetDevicesTopo(dev, other, &value);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ki)", ret ? 0ULL : (unsigned long long)value,
			     (int)ret);
}

/* ---- device and stream control ---- */

/* One handle, no other argument, only ret: stream_stop and the res calls. */
static PyObject *do_stream(PyObject *args, const char *fmt,
			   aclError (*fn)(aclrtStream))
{
	aclError ret;
	void *s;

	if (!PyArg_ParseTuple(args, fmt, conv_ptr, &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = fn(s);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

#define STREAM_ONLY(pyname, cname)					\
static PyObject *py_##pyname(PyObject *self, PyObject *args)		\
{									\
	(void)self;							\
	return do_stream(args, "O&:" #pyname, cname);			\
}

STREAM_ONLY(stream_stop, aclrtStreamStop)
STREAM_ONLY(reset_stream_res_limit, aclrtResetStreamResLimit)
STREAM_ONLY(use_stream_res_in_current_thread,
	    aclrtUseStreamResInCurrentThread)
STREAM_ONLY(unuse_stream_res_in_current_thread,
	    aclrtUnuseStreamResInCurrentThread)

static PyObject *py_synchronize_device_with_timeout(PyObject *self,
						    PyObject *args)
{
	int32_t timeout;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:synchronize_device_with_timeout",
			      conv_i32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSynchronizeDeviceWithTimeout(timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_device_task_abort(PyObject *self, PyObject *args)
{
	uint32_t timeout;
	int32_t dev;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:device_task_abort", conv_i32, &dev,
			      conv_u32, &timeout))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtDeviceTaskAbort(dev, timeout);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_stream_available_num(PyObject *self, PyObject *args)
{
	uint32_t count = 0;
	aclError ret;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetStreamAvailableNum(&count);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)count, (int)ret);
}

static PyObject *py_set_stream_overflow_switch(PyObject *self, PyObject *args)
{
	uint32_t flag;
	aclError ret;
	void *s;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:set_stream_overflow_switch", conv_ptr,
			      &s, conv_u32, &flag))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetStreamOverflowSwitch(s, flag);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_stream_overflow_switch(PyObject *self, PyObject *args)
{
	uint32_t flag = 0;
	aclError ret;
	void *s;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:get_stream_overflow_switch", conv_ptr,
			      &s))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetStreamOverflowSwitch(s, &flag);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)flag, (int)ret);
}

/*
 * Stream attributes.  pyACL documents the value as a dict of
 * aclrtStreamAttrValue's members: get gives {member: value} with the one
 * member the attribute names ({} on failure); set reads that member from
 * a dict (other keys ignored, so a dict from get goes back as it is) or
 * takes a plain int for it.  An attribute CANN does not name has no
 * member: the union goes as zeros and the library refuses it.
 */
static const char *attr_member(int32_t attr)
{
	switch (attr) {
	case ACL_STREAM_ATTR_FAILURE_MODE:
		return "failureMode";
	case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
		return "overflowSwitch";
	case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
		return "userCustomTag";
	case ACL_STREAM_ATTR_CACHE_OP_INFO:
		return "cacheOpInfoSwitch";
	case ACL_STREAM_ATTR_PRIORITY:
		return "streamPriority";
	}
	return NULL;
}

static int attr_value_in(int32_t attr, PyObject *o, aclrtStreamAttrValue *v)
{
	const char *member = attr_member(attr);
	PyObject *item = o;

	memset(v, 0, sizeof(*v));
	if (PyDict_Check(o)) {
		if (!member)
			return 1;
		item = PyDict_GetItemString(o, member);	/* borrowed */
		if (!item) {
			PyErr_Format(PyExc_KeyError,
				     "value has no \"%s\" for attribute %d",
				     member, (int)attr);
			return 0;
		}
	} else if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError,
			     "value must be a dict or an int, not %.200s",
			     Py_TYPE(o)->tp_name);
		return 0;
	}
	if (!member)
		return need_int(item, "value");
	if (attr == ACL_STREAM_ATTR_FAILURE_MODE)
		return conv_u64(item, &v->failureMode);
	/* The other members are all uint32_t at the union's start. */
	return conv_u32(item, &v->overflowSwitch);
}

static PyObject *py_set_stream_attribute(PyObject *self, PyObject *args)
{
	aclrtStreamAttrValue v;
	PyObject *value;
	int32_t attr;
	aclError ret;
	void *s;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O:set_stream_attribute", conv_ptr, &s,
			      conv_i32, &attr, &value))
		return NULL;
	if (!attr_value_in(attr, value, &v))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetStreamAttribute(s, (aclrtStreamAttr)attr, &v);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_stream_attribute(PyObject *self, PyObject *args)
{
	aclrtStreamAttrValue v;
	const char *member;
	int32_t attr;
	aclError ret;
	void *s;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_stream_attribute", conv_ptr, &s,
			      conv_i32, &attr))
		return NULL;
	memset(&v, 0, sizeof(v));
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetStreamAttribute(s, (aclrtStreamAttr)attr, &v);
	Py_END_ALLOW_THREADS
	member = attr_member(attr);
	if (ret || !member)
		return Py_BuildValue("({}i)", (int)ret);
	if (attr == ACL_STREAM_ATTR_FAILURE_MODE)
		return Py_BuildValue("({s:K}i)", member,
				     (unsigned long long)v.failureMode, (int)ret);
	return Py_BuildValue("({s:I}i)", member,
			     (unsigned int)v.overflowSwitch, (int)ret);
}

/*
 * stream, ret = create_stream_v2(config): pyACL has no binding for
 * aclrtCreateStreamV2 nor for the configuration handle, so the handle is
 * made here from a dict {"priority": p, "flag": f} (either key may be left
 * out: 0) and freed after the call; None is the NULL handle (the
 * library's defaults).  The work memory a handle may name is for model
 * tasks, which never run here, and has no key.
 */
static int set_opt(aclrtStreamConfigHandle *h, PyObject *config,
		   const char *key, aclrtStreamConfigAttr attr, aclError *ret)
{
	PyObject *item = PyDict_GetItemString(config, key);	/* borrowed */
	uint32_t prio;
	size_t flag;

	if (!item || *ret)
		return 1;
	if (attr == ACL_RT_STREAM_PRIORITY) {
		if (!conv_u32(item, &prio))
			return 0;
		*ret = aclrtSetStreamConfigOpt(h, attr, &prio, sizeof(prio));
	} else {
		if (!conv_size(item, &flag))
			return 0;
		*ret = aclrtSetStreamConfigOpt(h, attr, &flag, sizeof(flag));
	}
	return 1;
}

static PyObject *py_create_stream_v2(PyObject *self, PyObject *args)
{
	aclrtStreamConfigHandle *h = NULL;
	PyObject *config, *key;
	aclrtStream s = NULL;
	aclError ret = ACL_SUCCESS;
	Py_ssize_t pos = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "O:create_stream_v2", &config))
		return NULL;
	if (config != Py_None) {
		if (!PyDict_Check(config)) {
			PyErr_Format(PyExc_TypeError,
				     "config must be a dict or None, not %.200s",
				     Py_TYPE(config)->tp_name);
			return NULL;
		}
		while (PyDict_Next(config, &pos, &key, NULL)) {
			if (!PyUnicode_Check(key) ||
			    (PyUnicode_CompareWithASCIIString(key, "priority") &&
			     PyUnicode_CompareWithASCIIString(key, "flag"))) {
				PyErr_Format(PyExc_ValueError,
					     "config: unknown key %R", key);
				return NULL;
			}
		}
		/* Plain calloc in the library: no need to drop the GIL. */
		h = aclrtCreateStreamConfigHandle();
		if (!h)
			return PyErr_NoMemory();
		if (!set_opt(h, config, "priority", ACL_RT_STREAM_PRIORITY,
			     &ret) ||
		    !set_opt(h, config, "flag", ACL_RT_STREAM_FLAG, &ret)) {
			aclrtDestroyStreamConfigHandle(h);
			return NULL;
		}
	}
	if (!ret) {
		Py_BEGIN_ALLOW_THREADS
		ret = aclrtCreateStreamV2(&s, h);
		Py_END_ALLOW_THREADS
	}
	if (h)
		aclrtDestroyStreamConfigHandle(h);
	return handle_ret(s, ret);
}

/* ---- core limits of streams and threads ---- */

static PyObject *py_get_stream_res_limit(PyObject *self, PyObject *args)
{
	uint32_t value = 0;
	int32_t type;
	aclError ret;
	void *s;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_stream_res_limit", conv_ptr, &s,
			      conv_i32, &type))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetStreamResLimit(s, (aclrtDevResLimitType)type, &value);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)value, (int)ret);
}

static PyObject *py_set_stream_res_limit(PyObject *self, PyObject *args)
{
	uint32_t value;
	int32_t type;
	aclError ret;
	void *s;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&:set_stream_res_limit", conv_ptr, &s,
			      conv_i32, &type, conv_u32, &value))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtSetStreamResLimit(s, (aclrtDevResLimitType)type, value);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_get_res_in_current_thread(PyObject *self, PyObject *args)
{
	uint32_t value = 0;
	int32_t type;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:get_res_in_current_thread", conv_i32,
			      &type))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetResInCurrentThread((aclrtDevResLimitType)type, &value);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Ii)", ret ? 0U : (unsigned int)value, (int)ret);
}

/* ret = notify_batch_reset(notifies): a list (or tuple) of notifies. */
static PyObject *py_notify_batch_reset(PyObject *self, PyObject *args)
{
	PyObject *list, *seq;
	Py_ssize_t i, num;
	aclrtNotify *ns;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O:notify_batch_reset", &list))
		return NULL;
	if (!PyList_Check(list) && !PyTuple_Check(list)) {
		PyErr_Format(PyExc_TypeError,
			     "notifies must be a list of ints, not %.200s",
			     Py_TYPE(list)->tp_name);
		return NULL;
	}
	seq = PySequence_Fast(list, "notifies must be a list of ints");
	if (!seq)
		return NULL;
	num = PySequence_Fast_GET_SIZE(seq);
	/* One more than needed: an empty list is the library's to refuse
	 * (num 0), as in notify_set_import_pid. */
	ns = PyMem_RawCalloc((size_t)num + 1, sizeof(*ns));
	if (!ns) {
		Py_DECREF(seq);
		return PyErr_NoMemory();
	}
	for (i = 0; i < num; i++) {
		if (!conv_ptr(PySequence_Fast_GET_ITEM(seq, i), &ns[i])) {
			PyMem_RawFree(ns);
			Py_DECREF(seq);
			return NULL;
		}
	}
	Py_DECREF(seq);
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtNotifyBatchReset(ns, (size_t)num);
	Py_END_ALLOW_THREADS
	PyMem_RawFree(ns);
	return PyLong_FromLong(ret);
}

/* ---- table ---- */

#define MAP_ENTRY(pyname, out, in)					\
	{ #pyname, py_##pyname, METH_VARARGS,				\
	  #out ", ret = " #pyname "(" #in ")" }

PyMethodDef aclpy_rt_runtime_ext_methods[] = {
	{ "create_notify", py_create_notify, METH_VARARGS,
	  "notify, ret = create_notify(flag)" },
	{ "destroy_notify", py_destroy_notify, METH_VARARGS,
	  "ret = destroy_notify(notify)" },
	{ "record_notify", py_record_notify, METH_VARARGS,
	  "ret = record_notify(notify, stream)" },
	{ "wait_and_reset_notify", py_wait_and_reset_notify, METH_VARARGS,
	  "ret = wait_and_reset_notify(notify, stream, timeout_ms)" },
	{ "get_notify_id", py_get_notify_id, METH_VARARGS,
	  "notify_id, ret = get_notify_id(notify)" },
	{ "notify_get_export_key", py_notify_get_export_key, METH_VARARGS,
	  "key, ret = notify_get_export_key(notify, len, flags): key is a str" },
	{ "notify_set_import_pid", py_notify_set_import_pid, METH_VARARGS,
	  "ret = notify_set_import_pid(notify, pids): pids a list of ints" },
	{ "notify_import_by_key", py_notify_import_by_key, METH_VARARGS,
	  "notify, ret = notify_import_by_key(key, flags)" },
	{ "ipc_get_event_handle", py_ipc_get_event_handle, METH_VARARGS,
	  "handle, ret = ipc_get_event_handle(event): handle is 64 bytes" },
	{ "ipc_open_event_handle", py_ipc_open_event_handle, METH_VARARGS,
	  "event, ret = ipc_open_event_handle(handle)" },
	{ "stream_wait_event_with_timeout", py_stream_wait_event_with_timeout,
	  METH_VARARGS,
	  "ret = stream_wait_event_with_timeout(stream, event, timeout_ms)" },
	{ "value_write", py_value_write, METH_VARARGS,
	  "ret = value_write(dev_addr, value, flag, stream)" },
	{ "value_wait", py_value_wait, METH_VARARGS,
	  "ret = value_wait(dev_addr, value, flag, stream)" },
	{ "set_sys_param_opt", py_set_sys_param_opt, METH_VARARGS,
	  "ret = set_sys_param_opt(opt, value)" },
	{ "get_sys_param_opt", py_get_sys_param_opt, METH_VARARGS,
	  "value, ret = get_sys_param_opt(opt)" },
	{ "ctx_set_sys_param_opt", py_ctx_set_sys_param_opt, METH_VARARGS,
	  "ret = ctx_set_sys_param_opt(opt, value)" },
	{ "ctx_get_sys_param_opt", py_ctx_get_sys_param_opt, METH_VARARGS,
	  "value, ret = ctx_get_sys_param_opt(opt)" },
	{ "set_device_sat_mode", py_set_device_sat_mode, METH_VARARGS,
	  "ret = set_device_sat_mode(mode)" },
	{ "get_device_sat_mode", py_get_device_sat_mode, METH_NOARGS,
	  "mode, ret = get_device_sat_mode()" },
	{ "set_ts_device", py_set_ts_device, METH_VARARGS,
	  "ret = set_ts_device(ts_id)" },
	{ "device_set_limit", py_device_set_limit, METH_VARARGS,
	  "ret = device_set_limit(limit, value)" },
	{ "device_get_limit", py_device_get_limit, METH_VARARGS,
	  "value, ret = device_get_limit(limit)" },
	MAP_ENTRY(get_logic_dev_id_by_phy_dev_id, logic_dev_id, phy_dev_id),
	MAP_ENTRY(get_phy_dev_id_by_logic_dev_id, phy_dev_id, logic_dev_id),
	MAP_ENTRY(get_user_dev_id_by_phy_dev_id, user_dev_id, phy_dev_id),
	MAP_ENTRY(get_phy_dev_id_by_user_dev_id, phy_dev_id, user_dev_id),
	MAP_ENTRY(get_logic_dev_id_by_user_dev_id, logic_dev_id, user_dev_id),
	MAP_ENTRY(get_user_dev_id_by_logic_dev_id, user_dev_id, logic_dev_id),
	{ "get_devices_topo", py_get_devices_topo, METH_VARARGS,
	  "value, ret = get_devices_topo(device_id, other_device_id)" },
	{ "synchronize_device_with_timeout", py_synchronize_device_with_timeout,
	  METH_VARARGS, "ret = synchronize_device_with_timeout(timeout_ms)" },
	{ "device_task_abort", py_device_task_abort, METH_VARARGS,
	  "ret = device_task_abort(device_id, timeout_ms)" },
	{ "stream_stop", py_stream_stop, METH_VARARGS,
	  "ret = stream_stop(stream)" },
	{ "get_stream_available_num", py_get_stream_available_num, METH_NOARGS,
	  "stream_count, ret = get_stream_available_num()" },
	{ "set_stream_overflow_switch", py_set_stream_overflow_switch,
	  METH_VARARGS, "ret = set_stream_overflow_switch(stream, flag)" },
	{ "get_stream_overflow_switch", py_get_stream_overflow_switch,
	  METH_VARARGS, "flag, ret = get_stream_overflow_switch(stream)" },
	{ "set_stream_attribute", py_set_stream_attribute, METH_VARARGS,
	  "ret = set_stream_attribute(stream, stm_attr_type, value): value a "
	  "dict {member: int} or an int" },
	{ "get_stream_attribute", py_get_stream_attribute, METH_VARARGS,
	  "value, ret = get_stream_attribute(stream, stm_attr_type): value a "
	  "dict {member: int}" },
	{ "create_stream_v2", py_create_stream_v2, METH_VARARGS,
	  "stream, ret = create_stream_v2(config): config a dict "
	  "{\"priority\": p, \"flag\": f} or None" },
	{ "get_stream_res_limit", py_get_stream_res_limit, METH_VARARGS,
	  "value, ret = get_stream_res_limit(stream, type)" },
	{ "set_stream_res_limit", py_set_stream_res_limit, METH_VARARGS,
	  "ret = set_stream_res_limit(stream, type, value)" },
	{ "reset_stream_res_limit", py_reset_stream_res_limit, METH_VARARGS,
	  "ret = reset_stream_res_limit(stream)" },
	{ "use_stream_res_in_current_thread", py_use_stream_res_in_current_thread,
	  METH_VARARGS, "ret = use_stream_res_in_current_thread(stream)" },
	{ "unuse_stream_res_in_current_thread",
	  py_unuse_stream_res_in_current_thread, METH_VARARGS,
	  "ret = unuse_stream_res_in_current_thread(stream)" },
	{ "get_res_in_current_thread", py_get_res_in_current_thread,
	  METH_VARARGS, "value, ret = get_res_in_current_thread(type)" },
	{ "notify_batch_reset", py_notify_batch_reset, METH_VARARGS,
	  "ret = notify_batch_reset(notifies): a list of notifies" },
	{ NULL, NULL, 0, NULL },
};
