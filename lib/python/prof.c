// SPDX-License-Identifier: MIT
/*
 * acl.prof: profiling (acl/acl_prof.h) with pyACL's names.  Configs,
 * stamps and step infos are ints (0 where the C call gave NULL); strings
 * are passed with their length, as the C calls take them.  The GIL is
 * released around every call that can wait (start, stop and finalize
 * write the trace; marks take the profiler's lock).
 */
#include "acl/acl_prof.h"
#include "aclpy.h"

ACLPY_FN(init)
{
	const char *path;
	Py_ssize_t len;
	aclError ret;

	if (!PyArg_ParseTuple(args, "s#:init", &path, &len))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclprofInit(path, (size_t)len);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static int conv_u32_list(PyObject *o, union aclpy_val *slot)
{
	return aclpy_seq(o, slot, "device_list must be a list of ints", true,
			 conv_u32, NULL, sizeof(uint32_t));
}

ACLPY_FN(create_config)
{
	union aclpy_val list = { 0 };
	PyObject *devices;
	aclprofConfig *c;
	int32_t metrics;
	void *events;
	uint64_t types;

	if (!PyArg_ParseTuple(args, "OO&O&O&:create_config", &devices,
			      conv_i32, &metrics, conv_ptr, &events, conv_u64,
			      &types))
		return NULL;
	if (!conv_u32_list(devices, &list)) {
		PyMem_Free(list.a.p);
		return NULL;
	}
	c = aclprofCreateConfig(list.a.p, (uint32_t)list.a.n,
				(aclprofAicoreMetrics)metrics, events, types);
	PyMem_Free(list.a.p);
	return PyLong_FromUnsignedLongLong((uintptr_t)c);
}

ACLPY_FN(set_config)
{
	const char *config;
	Py_ssize_t len;
	int32_t type;
	aclError ret;

	if (!PyArg_ParseTuple(args, "O&s#:set_config", conv_i32, &type,
			      &config, &len))
		return NULL;
	ret = aclprofSetConfig((aclprofConfigType)type, config, (size_t)len);
	return PyLong_FromLong(ret);
}

ACLPY_FN(create_stamp)
{
	return PyLong_FromUnsignedLongLong((uintptr_t)aclprofCreateStamp());
}

ACLPY_FN(destroy_stamp)
{
	void *stamp;

	if (!PyArg_ParseTuple(args, "O&:destroy_stamp", conv_ptr, &stamp))
		return NULL;
	aclprofDestroyStamp(stamp);
	Py_RETURN_NONE;
}

ACLPY_FN(create_step_info)
{
	return PyLong_FromUnsignedLongLong((uintptr_t)aclprofCreateStepInfo());
}

ACLPY_FN(destroy_step_info)
{
	void *info;

	if (!PyArg_ParseTuple(args, "O&:destroy_step_info", conv_ptr, &info))
		return NULL;
	aclprofDestroyStepInfo(info);
	Py_RETURN_NONE;
}

ACLPY_FN(mark_ex)
{
	const char *msg;
	Py_ssize_t len;
	void *stream;
	aclError ret;

	if (!PyArg_ParseTuple(args, "s#O&:mark_ex", &msg, &len, conv_ptr,
			      &stream))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclprofMarkEx(msg, (size_t)len, stream);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

#define PROF_CALLS(CALL, HAND, AUTO, DOC)				\
	HAND(init, METH_VARARGS, "ret = init(profiler_result_path)")	\
	AUTO(aclprofFinalize)						\
	HAND(create_config, METH_VARARGS,				\
	     "prof_config = create_config(device_list, aicore_metrics, "	\
	     "aicore_events, data_type_config)")			\
	DOC(aclprofDestroyConfig, "ret = destroy_config(prof_config)")	\
	DOC(aclprofStart, "ret = start(prof_config)")			\
	DOC(aclprofStop, "ret = stop(prof_config)")			\
	HAND(set_config, METH_VARARGS,					\
	     "ret = set_config(config_type, config)")			\
	HAND(create_stamp, METH_NOARGS, "stamp = create_stamp()")	\
	HAND(destroy_stamp, METH_VARARGS, "destroy_stamp(stamp)")	\
	AUTO(aclprofSetStampTraceMessage)				\
	AUTO(aclprofMark)						\
	HAND(mark_ex, METH_VARARGS, "ret = mark_ex(msg, stream)")	\
	AUTO(aclprofPush)						\
	AUTO(aclprofPop)						\
	AUTO(aclprofRangeStart)						\
	AUTO(aclprofRangeStop)						\
	HAND(create_step_info, METH_NOARGS,				\
	     "step_info = create_step_info()")				\
	HAND(destroy_step_info, METH_VARARGS,				\
	     "destroy_step_info(step_info)")				\
	AUTO(aclprofGetStepTimestamp)

ACLPY_TABLE(aclpy_prof_methods, PROF_CALLS)
