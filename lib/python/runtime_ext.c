// SPDX-License-Identifier: MIT
/*
 * acl.rt: notifies, IPC events, timed waits, value write/wait, runtime
 * settings, device id mappings, device and stream controls and kernel
 * binaries, as lib/README.md documents them.  The GIL is released around
 * every library call, as in runtime.c.
 */
#include "acl/acl.h"
#include "aclpy.h"

/* outsv (calls.h): ipc_get_event_handle's 64 bytes, b"" on failure. */
static PyObject *event_handle(const void *out, const union aclpy_val *args,
			      aclError ret)
{
	const aclrtIpcEventHandle *h = out;

	(void)args;
	return PyBytes_FromStringAndSize(h->reserved, ret ? 0 :
					 (Py_ssize_t)sizeof(h->reserved));
}

/*
 * Stream attributes: pyACL's dict {member: value} of the one member the
 * attribute names; set ignores other keys, so that get's dict goes back
 * as it is.  An attribute CANN does not name has no member: the union
 * goes as zeros and the library refuses it.
 */
static const char *const attr_members[] = {
	[ACL_STREAM_ATTR_FAILURE_MODE] = "failureMode",
	[ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK] = "overflowSwitch",
	[ACL_STREAM_ATTR_USER_CUSTOM_TAG] = "userCustomTag",
	[ACL_STREAM_ATTR_CACHE_OP_INFO] = "cacheOpInfoSwitch",
	[ACL_STREAM_ATTR_PRIORITY] = "streamPriority",
};

static const char *attr_member(int32_t attr)
{
	if (attr < 0 || (size_t)attr >= Py_ARRAY_LENGTH(attr_members))
		return NULL;
	return attr_members[attr];
}

/* objv (calls.h): set's value for the attribute args[1]. */
static int attr_value_in(PyObject *o, union aclpy_val *slot,
			 const union aclpy_val *args)
{
	const char *member = attr_member(args[1].i32);
	aclrtStreamAttrValue *v;
	PyObject *item = o;

	v = aclpy_slot_alloc(slot, 1, sizeof(*v));
	if (!v)
		return 0;
	if (PyDict_Check(o)) {
		if (!member)
			return 1;
		item = PyDict_GetItemString(o, member);	/* borrowed */
		if (!item) {
			PyErr_Format(PyExc_KeyError,
				     "value has no \"%s\" for attribute %d",
				     member, (int)args[1].i32);
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
	if (args[1].i32 == ACL_STREAM_ATTR_FAILURE_MODE)
		return conv_u64(item, &v->failureMode);
	/* The other members are all uint32_t at the union's start. */
	return conv_u32(item, &v->overflowSwitch);
}

/* outsv (calls.h): get's value for the attribute args[1]. */
static PyObject *attr_value_out(const void *out, const union aclpy_val *args,
				aclError ret)
{
	const char *member = attr_member(args[1].i32);
	const aclrtStreamAttrValue *v = out;

	if (ret || !member)
		return PyDict_New();
	if (args[1].i32 == ACL_STREAM_ATTR_FAILURE_MODE)
		return Py_BuildValue("{s:K}", member,
				     (unsigned long long)v->failureMode);
	return Py_BuildValue("{s:I}", member,
			     (unsigned int)v->overflowSwitch);
}

/*
 * pyACL has no configuration handle: it is made here from the dict.  The
 * work memory a handle may name is for model tasks, which never run here,
 * and has no key.
 */
static int set_opt(aclrtStreamConfigHandle *h, PyObject *config,
		   const char *key, aclrtStreamConfigAttr attr,
		   int (*conv)(PyObject *, void *), size_t size, aclError *ret)
{
	PyObject *item = PyDict_GetItemString(config, key);	/* borrowed */
	union aclpy_val v;

	if (!item || *ret)
		return 1;
	/* conv writes the C type at the union's start: size bytes of it. */
	if (!conv(item, &v))
		return 0;
	*ret = aclrtSetStreamConfigOpt(h, attr, &v, size);
	return 1;
}

ACLPY_FN(create_stream_v2)
{
	aclrtStreamConfigHandle *h = NULL;
	PyObject *config, *key;
	aclrtStream s = NULL;
	aclError ret = ACL_SUCCESS;
	Py_ssize_t pos = 0;

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
			     conv_u32, sizeof(uint32_t), &ret) ||
		    !set_opt(h, config, "flag", ACL_RT_STREAM_FLAG, conv_size,
			     sizeof(size_t), &ret)) {
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
	return Py_BuildValue("(Ki)", ret ? 0ULL :
			     (unsigned long long)(uintptr_t)s, (int)ret);
}

ACLPY_SEQ_CONV(notifies, "notifies must be a list of ints", true, conv_ptr,
	       NULL, aclrtNotify)

/*
 * Kernel binaries' options and cfg: value is the union's first 32 bits
 * (every member that is not a struct).  None or [] is none, NULL.
 */
static const struct aclpy_field option_fields[] = {
	{ "type", offsetof(aclrtBinaryLoadOption, type), sizeof(int32_t), INT32_MAX, true },
	{ "value", offsetof(aclrtBinaryLoadOption, value), sizeof(uint32_t), UINT32_MAX, true },
};
ACLPY_STRUCT(option_desc, named, "option", "aclrtBinaryLoadOption",
	     option_fields, NULL, NULL);
static const struct aclpy_field attr_fields[] = {
	{ "id", offsetof(aclrtLaunchKernelAttr, id), sizeof(int32_t), INT32_MAX, true },
	{ "value", offsetof(aclrtLaunchKernelAttr, value), sizeof(uint32_t), UINT32_MAX, true },
};
ACLPY_STRUCT(attr_desc, named, "attr", "aclrtLaunchKernelAttr", attr_fields,
	     NULL, NULL);

/* Both lists are a (pointer, count) header: one block, the items after it. */
_Static_assert(offsetof(aclrtBinaryLoadOptions, numOpt) ==
	       offsetof(aclrtLaunchKernelCfg, numAttrs), "list header");

static int conv_list(PyObject *o, union aclpy_val *slot,
		     const struct aclpy_struct *d, size_t size)
{
	aclrtLaunchKernelCfg *h;
	Py_ssize_t n, i;

	if (o == Py_None)
		return 1;
	if (!PyList_Check(o) && !PyTuple_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be a list, not %.200s",
			     d->what, Py_TYPE(o)->tp_name);
		return 0;
	}
	n = PySequence_Fast_GET_SIZE(o);
	if (!n)
		return 1;
	h = aclpy_slot_alloc(slot, 1, sizeof(*h) + (size_t)n * size);
	if (!h)
		return 0;
	h->attrs = (void *)(h + 1);
	h->numAttrs = (size_t)n;
	for (i = 0; i < n; i++)
		if (!aclpy_read_struct(PySequence_Fast_GET_ITEM(o, i), d,
				       (char *)(h + 1) + (size_t)i * size))
			return 0;
	return 1;
}

#define CONV_LIST(name, desc, type)					\
static int name(PyObject *o, union aclpy_val *slot)			\
{									\
	return conv_list(o, slot, &desc, sizeof(type));			\
}

CONV_LIST(conv_options, option_desc, aclrtBinaryLoadOption)
CONV_LIST(conv_cfg, attr_desc, aclrtLaunchKernelAttr)

#define RUNTIME_EXT_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	AUTO(aclrtCreateNotify)						\
	AUTO(aclrtDestroyNotify)					\
	AUTO(aclrtRecordNotify)						\
	DOC(aclrtWaitAndResetNotify,					\
	    "ret = wait_and_reset_notify(notify, stream, timeout_ms)")	\
	AUTO(aclrtGetNotifyId)						\
	DOC(aclrtNotifyGetExportKey,					\
	    "key, ret = notify_get_export_key(notify, len, flags): key is a str") \
	CALL(notify_set_import_pid, aclrtNotifySetImportPid,		\
	     (p, objn(aclpy_conv_pids)), (),				\
	     "ret = notify_set_import_pid(notify, pids): pids a list of ints") \
	AUTO(aclrtNotifyImportByKey)					\
	CALL(ipc_get_event_handle, aclrtIpcGetEventHandle,		\
	     (p, outsv(aclrtIpcEventHandle, event_handle)), (),		\
	     "handle, ret = ipc_get_event_handle(event): handle is 64 bytes") \
	CALL(ipc_open_event_handle, aclrtIpcOpenEventHandle,		\
	     (bytes(aclrtIpcEventHandle, "handle"), out_p), (),		\
	     "event, ret = ipc_open_event_handle(handle)")		\
	/* the C call's order */					\
	DOC(aclrtStreamWaitEventWithTimeout,				\
	    "ret = stream_wait_event_with_timeout(stream, event, timeout_ms)") \
	AUTO(aclrtValueWrite)						\
	AUTO(aclrtValueWait)						\
	AUTO(aclrtReduceAsync)						\
	AUTO(aclrtSetSysParamOpt)					\
	AUTO(aclrtGetSysParamOpt)					\
	AUTO(aclrtCtxSetSysParamOpt)					\
	AUTO(aclrtCtxGetSysParamOpt)					\
	AUTO(aclrtSetDeviceSatMode)					\
	AUTO(aclrtGetDeviceSatMode)					\
	AUTO(aclrtSetTsDevice)						\
	AUTO(aclrtDeviceSetLimit)					\
	CALL(device_get_limit, aclrtDeviceGetLimit, (i32, out_n), (),	\
	     "value, ret = device_get_limit(limit)")			\
	AUTO(aclrtGetLogicDevIdByPhyDevId)				\
	AUTO(aclrtGetPhyDevIdByLogicDevId)				\
	AUTO(aclrtGetUserDevIdByPhyDevId)				\
	AUTO(aclrtGetPhyDevIdByUserDevId)				\
	AUTO(aclrtGetLogicDevIdByUserDevId)				\
	AUTO(aclrtGetUserDevIdByLogicDevId)				\
	AUTO(aclrtGetDevicesTopo)					\
	DOC(aclrtSynchronizeDeviceWithTimeout,				\
	    "ret = synchronize_device_with_timeout(timeout_ms)")	\
	DOC(aclrtDeviceTaskAbort,					\
	    "ret = device_task_abort(device_id, timeout_ms)")		\
	AUTO(aclrtStreamStop)						\
	AUTO(aclrtGetStreamAvailableNum)				\
	AUTO(aclrtSetStreamOverflowSwitch)				\
	AUTO(aclrtGetStreamOverflowSwitch)				\
	AUTO(aclrtGetOverflowStatus)					\
	AUTO(aclrtResetOverflowStatus)					\
	AUTO(aclrtGetThreadLastTaskId, .hold_gil = true)		\
	CALL(set_stream_attribute, aclrtSetStreamAttribute,		\
	     (p, i32, objv(attr_value_in)), (),				\
	     "ret = set_stream_attribute(stream, stm_attr_type, value): value a " \
	     "dict {member: int} or an int")				\
	CALL(get_stream_attribute, aclrtGetStreamAttribute,		\
	     (p, i32, outsv(aclrtStreamAttrValue, attr_value_out)), (),	\
	     "value, ret = get_stream_attribute(stream, stm_attr_type): value a " \
	     "dict {member: int}")					\
	HAND(create_stream_v2, METH_VARARGS,				\
	     "stream, ret = create_stream_v2(config): config a dict "	\
	     "{\"priority\": p, \"flag\": f} or None")			\
	AUTO(aclrtGetStreamResLimit)					\
	AUTO(aclrtSetStreamResLimit)					\
	AUTO(aclrtResetStreamResLimit)					\
	AUTO(aclrtUseStreamResInCurrentThread)				\
	AUTO(aclrtUnuseStreamResInCurrentThread)			\
	AUTO(aclrtGetResInCurrentThread)				\
	CALL(notify_batch_reset, aclrtNotifyBatchReset,			\
	     (objn(conv_notifies)), (),					\
	     "ret = notify_batch_reset(notifies): a list of notifies")	\
	CALL(binary_load_from_file, aclrtBinaryLoadFromFile,		\
	     (s, obj(conv_options), out_p), (),				\
	     "bin_handle, ret = binary_load_from_file(bin_path, options): " \
	     "options a list of {\"type\": t, \"value\": v}, or []")	\
	AUTO(aclrtBinaryGetFunction)					\
	CALL(binary_unload, aclrtBinaryUnLoad, (p), (),			\
	     "ret = binary_unload(bin_handle)")				\
	AUTO(aclrtKernelArgsInit)					\
	DOC(aclrtKernelArgsAppend,					\
	    "param_handle, ret = kernel_args_append(args_handle, param, " \
	    "param_size): param the address of the value")		\
	AUTO(aclrtKernelArgsParaUpdate)					\
	AUTO(aclrtKernelArgsFinalize)					\
	CALL(launch_kernel_with_config, aclrtLaunchKernelWithConfig,	\
	     (p, u32, p, obj(conv_cfg), p, p), (),			\
	     "ret = launch_kernel_with_config(func_handle, block_dim, stream, " \
	     "cfg, args_handle, reserve): cfg a list of {\"id\": i, "	\
	     "\"value\": v}, or []; reserve 0")

ACLPY_TABLE(aclpy_rt_runtime_ext_methods, RUNTIME_EXT_CALLS)
