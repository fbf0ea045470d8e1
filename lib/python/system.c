// SPDX-License-Identifier: MIT
/*
 * pyACL's error, system and device-fact calls: acl.get_recent_err_msg,
 * acl.rt.get_last_error, acl.get_soc_name, acl.rt.get_device_info and the
 * rest of lib/system.c and lib/errors.c, plus the float16 helpers.
 * Outputs first, ret last, as everywhere in the module.
 */
#include "acl/acl.h"
#include "aclpy.h"

#define DEV_ARGS(fmt)	(!PyArg_ParseTuple(args, fmt, conv_i32, &dev))

/* ---- acl ---- */

static PyObject *py_get_recent_err_msg(PyObject *self, PyObject *args)
{
	const char *m;

	(void)self;
	(void)args;
	m = aclGetRecentErrMsg();
	if (!m)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(m, (Py_ssize_t)strlen(m), "replace");
}

static PyObject *py_get_soc_name(PyObject *self, PyObject *args)
{
	const char *s;

	(void)self;
	(void)args;
	s = aclrtGetSocName();
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_FromString(s);
}

static PyObject *version_call(PyObject *args, int num)
{
	char v[ACL_PKG_VERSION_MAX_SIZE] = "";
	const char *pkg;
	char name[ACL_PKG_VERSION_MAX_SIZE];
	int32_t n = 0;
	aclError ret;

	if (!PyArg_ParseTuple(args, num ? "s:sys_get_version_num" :
				    "s:sys_get_version_str", &pkg))
		return NULL;
	snprintf(name, sizeof(name), "%s", pkg);
	ret = num ? aclsysGetVersionNum(name, &n) :
		    aclsysGetVersionStr(name, v);
	if (num)
		return Py_BuildValue("(ii)", (int)n, (int)ret);
	return Py_BuildValue("(si)", v, (int)ret);
}

static PyObject *py_sys_get_version_str(PyObject *self, PyObject *args)
{
	(void)self;
	return version_call(args, 0);
}

static PyObject *py_sys_get_version_num(PyObject *self, PyObject *args)
{
	(void)self;
	return version_call(args, 1);
}

static PyObject *py_get_cann_attribute(PyObject *self, PyObject *args)
{
	int32_t attr, value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:get_cann_attribute", conv_i32, &attr))
		return NULL;
	ret = aclGetCannAttribute((aclCannAttr)attr, &value);
	return Py_BuildValue("(ii)", (int)value, (int)ret);
}

static PyObject *py_get_cann_attribute_list(PyObject *self, PyObject *args)
{
	const aclCannAttr *list = NULL;
	size_t n = 0, i;
	PyObject *l;
	aclError ret;

	(void)self;
	(void)args;
	ret = aclGetCannAttributeList(&list, &n);
	l = PyList_New(0);
	if (!l)
		return NULL;
	for (i = 0; ret == ACL_SUCCESS && i < n; i++) {
		PyObject *v = PyLong_FromLong(list[i]);

		if (!v || PyList_Append(l, v)) {
			Py_XDECREF(v);
			Py_DECREF(l);
			return NULL;
		}
		Py_DECREF(v);
	}
	return Py_BuildValue("(Ni)", l, (int)ret);
}

static PyObject *py_get_device_capability_base(PyObject *self, PyObject *args)
{
	int32_t dev, info;
	int64_t value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_device_capability", conv_i32,
			      &dev, conv_i32, &info))
		return NULL;
	ret = aclGetDeviceCapability((uint32_t)dev, (aclDeviceInfo)info, &value);
	return Py_BuildValue("(Li)", (long long)value, (int)ret);
}

static PyObject *py_data_type_size(PyObject *self, PyObject *args)
{
	int32_t t;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:data_type_size", conv_i32, &t))
		return NULL;
	return PyLong_FromSize_t(aclDataTypeSize((aclDataType)t));
}

static PyObject *py_float16_to_float(PyObject *self, PyObject *args)
{
	unsigned long h;
	PyObject *o;

	(void)self;
	if (!PyArg_ParseTuple(args, "O:float16_to_float", &o) ||
	    !need_int(o, "value"))
		return NULL;
	h = PyLong_AsUnsignedLong(o);
	if (h == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	if (h > 0xFFFF) {
		PyErr_SetString(PyExc_OverflowError, "value out of float16 range");
		return NULL;
	}
	return PyFloat_FromDouble(aclFloat16ToFloat((aclFloat16)h));
}

static PyObject *py_float_to_float16(PyObject *self, PyObject *args)
{
	float f;

	(void)self;
	if (!PyArg_ParseTuple(args, "f:float_to_float16", &f))
		return NULL;
	return PyLong_FromLong(aclFloatToFloat16(f));
}

PyMethodDef aclpy_system_methods[] = {
	{ "get_recent_err_msg", py_get_recent_err_msg, METH_NOARGS, NULL },
	{ "get_soc_name", py_get_soc_name, METH_NOARGS, NULL },
	{ "sys_get_version_str", py_sys_get_version_str, METH_VARARGS, NULL },
	{ "sys_get_version_num", py_sys_get_version_num, METH_VARARGS, NULL },
	{ "get_cann_attribute", py_get_cann_attribute, METH_VARARGS, NULL },
	{ "get_cann_attribute_list", py_get_cann_attribute_list, METH_NOARGS,
	  NULL },
	{ "get_device_capability", py_get_device_capability_base, METH_VARARGS,
	  NULL },
	{ "data_type_size", py_data_type_size, METH_VARARGS, NULL },
	{ "float16_to_float", py_float16_to_float, METH_VARARGS, NULL },
	{ "float_to_float16", py_float_to_float16, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

/* ---- acl.rt ---- */

static PyObject *last_error(PyObject *args, int peek)
{
	int32_t level;
	aclError ret;

	if (!PyArg_ParseTuple(args, peek ? "O&:peek_at_last_error" :
				     "O&:get_last_error", conv_i32, &level))
		return NULL;
	ret = peek ? aclrtPeekAtLastError((aclrtLastErrLevel)level) :
		     aclrtGetLastError((aclrtLastErrLevel)level);
	return PyLong_FromLong(ret);
}

static PyObject *py_get_last_error(PyObject *self, PyObject *args)
{
	(void)self;
	return last_error(args, 0);
}

static PyObject *py_peek_at_last_error(PyObject *self, PyObject *args)
{
	(void)self;
	return last_error(args, 1);
}

static PyObject *py_get_version(PyObject *self, PyObject *args)
{
	int32_t a = 0, b = 0, c = 0;
	aclError ret;

	(void)self;
	(void)args;
	ret = aclrtGetVersion(&a, &b, &c);
	return Py_BuildValue("(iiii)", (int)a, (int)b, (int)c, (int)ret);
}

static PyObject *py_check_arch_compatibility(PyObject *self, PyObject *args)
{
	const char *soc;
	int32_t ok = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "s:check_arch_compatibility", &soc))
		return NULL;
	ret = aclrtCheckArchCompatibility(soc, &ok);
	return Py_BuildValue("(ii)", (int)ok, (int)ret);
}

static PyObject *py_get_device_info(PyObject *self, PyObject *args)
{
	int32_t dev, attr;
	int64_t value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_device_info", conv_i32, &dev,
			      conv_i32, &attr))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetDeviceInfo((uint32_t)dev, (aclrtDevAttr)attr, &value);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(Li)", (long long)value, (int)ret);
}

static PyObject *py_get_device_capability(PyObject *self, PyObject *args)
{
	int32_t dev, feature, value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_device_capability", conv_i32,
			      &dev, conv_i32, &feature))
		return NULL;
	ret = aclrtGetDeviceCapability(dev, (aclrtDevFeatureType)feature,
				       &value);
	return Py_BuildValue("(ii)", (int)value, (int)ret);
}

static PyObject *py_query_device_status(PyObject *self, PyObject *args)
{
	aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_NORMAL;
	int32_t dev;
	aclError ret;

	(void)self;
	if (DEV_ARGS("O&:query_device_status"))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtQueryDeviceStatus(dev, &st);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", (int)st, (int)ret);
}

static PyObject *py_get_device_utilization_rate(PyObject *self, PyObject *args)
{
	aclrtUtilizationInfo u = { 0, 0, 0, 0, NULL };
	int32_t dev;
	aclError ret;

	(void)self;
	if (DEV_ARGS("O&:get_device_utilization_rate"))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtGetDeviceUtilizationRate(dev, &u);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("({sisisisi}i)", "cube_utilization",
			     (int)u.cubeUtilization, "vector_utilization",
			     (int)u.vectorUtilization, "aicpu_utilization",
			     (int)u.aicpuUtilization, "memory_utilization",
			     (int)u.memoryUtilization, (int)ret);
}

static PyObject *py_get_device_res_limit(PyObject *self, PyObject *args)
{
	int32_t dev, type;
	uint32_t value = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:get_device_res_limit", conv_i32, &dev,
			      conv_i32, &type))
		return NULL;
	ret = aclrtGetDeviceResLimit(dev, (aclrtDevResLimitType)type, &value);
	return Py_BuildValue("(Ii)", (unsigned int)value, (int)ret);
}

static PyObject *py_set_device_res_limit(PyObject *self, PyObject *args)
{
	int32_t dev, type;
	unsigned int value;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&I:set_device_res_limit", conv_i32,
			      &dev, conv_i32, &type, &value))
		return NULL;
	return PyLong_FromLong(aclrtSetDeviceResLimit(dev,
			(aclrtDevResLimitType)type, value));
}

static PyObject *py_reset_device_res_limit(PyObject *self, PyObject *args)
{
	int32_t dev;

	(void)self;
	if (DEV_ARGS("O&:reset_device_res_limit"))
		return NULL;
	return PyLong_FromLong(aclrtResetDeviceResLimit(dev));
}

static PyObject *py_device_can_access_peer(PyObject *self, PyObject *args)
{
	int32_t dev, peer, can = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:device_can_access_peer", conv_i32,
			      &dev, conv_i32, &peer))
		return NULL;
	ret = aclrtDeviceCanAccessPeer(&can, dev, peer);
	return Py_BuildValue("(ii)", (int)can, (int)ret);
}

static PyObject *py_device_enable_peer_access(PyObject *self, PyObject *args)
{
	int32_t peer;
	unsigned int flags = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&|I:device_enable_peer_access", conv_i32,
			      &peer, &flags))
		return NULL;
	return PyLong_FromLong(aclrtDeviceEnablePeerAccess(peer, flags));
}

static PyObject *py_device_disable_peer_access(PyObject *self, PyObject *args)
{
	int32_t dev;

	(void)self;
	if (DEV_ARGS("O&:device_disable_peer_access"))
		return NULL;
	return PyLong_FromLong(aclrtDeviceDisablePeerAccess(dev));
}

static PyObject *py_device_peer_access_status(PyObject *self, PyObject *args)
{
	int32_t dev, peer, st = 0;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:device_peer_access_status", conv_i32,
			      &dev, conv_i32, &peer))
		return NULL;
	ret = aclrtDevicePeerAccessStatus(dev, peer, &st);
	return Py_BuildValue("(ii)", (int)st, (int)ret);
}

static PyObject *py_device_get_bare_tgid(PyObject *self, PyObject *args)
{
	int32_t pid = 0;
	aclError ret;

	(void)self;
	(void)args;
	ret = aclrtDeviceGetBareTgid(&pid);
	return Py_BuildValue("(ii)", (int)pid, (int)ret);
}

static PyObject *py_device_get_uuid(PyObject *self, PyObject *args)
{
	aclrtUuid u;
	int32_t dev;
	aclError ret;

	(void)self;
	if (DEV_ARGS("O&:device_get_uuid"))
		return NULL;
	memset(&u, 0, sizeof(u));
	ret = aclrtDeviceGetUuid(dev, &u);
	return Py_BuildValue("(y#i)", u.bytes, (Py_ssize_t)sizeof(u.bytes),
			     (int)ret);
}

PyMethodDef aclpy_system_rt_methods[] = {
	{ "get_last_error", py_get_last_error, METH_VARARGS, NULL },
	{ "peek_at_last_error", py_peek_at_last_error, METH_VARARGS, NULL },
	{ "get_soc_name", py_get_soc_name, METH_NOARGS, NULL },
	{ "get_version", py_get_version, METH_NOARGS, NULL },
	{ "check_arch_compatibility", py_check_arch_compatibility, METH_VARARGS,
	  NULL },
	{ "get_device_info", py_get_device_info, METH_VARARGS, NULL },
	{ "get_device_capability", py_get_device_capability, METH_VARARGS, NULL },
	{ "query_device_status", py_query_device_status, METH_VARARGS, NULL },
	{ "get_device_utilization_rate", py_get_device_utilization_rate,
	  METH_VARARGS, NULL },
	{ "get_device_res_limit", py_get_device_res_limit, METH_VARARGS, NULL },
	{ "set_device_res_limit", py_set_device_res_limit, METH_VARARGS, NULL },
	{ "reset_device_res_limit", py_reset_device_res_limit, METH_VARARGS,
	  NULL },
	{ "device_can_access_peer", py_device_can_access_peer, METH_VARARGS,
	  NULL },
	{ "device_enable_peer_access", py_device_enable_peer_access,
	  METH_VARARGS, NULL },
	{ "device_disable_peer_access", py_device_disable_peer_access,
	  METH_VARARGS, NULL },
	{ "device_peer_access_status", py_device_peer_access_status,
	  METH_VARARGS, NULL },
	{ "device_get_bare_tgid", py_device_get_bare_tgid, METH_NOARGS, NULL },
	{ "device_get_uuid", py_device_get_uuid, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

/* ---- constants, on acl and acl.rt ---- */

#define C(x)	{ #x, (long)(x) }

static const struct {
	const char *name;
	long value;
} sys_constants[] = {
	C(ACL_RT_THREAD_LEVEL), C(ACL_DEV_FEATURE_SUPPORT),
	C(ACL_DEV_FEATURE_NOT_SUPPORT), C(ACL_PKG_VERSION_MAX_SIZE),
	C(ACL_RT_DEVICE_STATUS_NORMAL), C(ACL_RT_DEVICE_STATUS_ABNORMAL),
	C(ACL_RT_DEV_RES_CUBE_CORE), C(ACL_RT_DEV_RES_VECTOR_CORE),
	C(ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV),
	C(ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV),
	C(ACL_CANN_ATTR_UNDEFINED), C(ACL_CANN_ATTR_INF_NAN),
	C(ACL_CANN_ATTR_BF16), C(ACL_CANN_ATTR_JIT_COMPILE),
	C(ACL_DEVICE_INFO_UNDEFINED), C(ACL_DEVICE_INFO_AI_CORE_NUM),
	C(ACL_DEVICE_INFO_VECTOR_CORE_NUM), C(ACL_DEVICE_INFO_L2_SIZE),
	C(ACL_DEV_ATTR_AICPU_CORE_NUM), C(ACL_DEV_ATTR_AICORE_CORE_NUM),
	C(ACL_DEV_ATTR_CUBE_CORE_NUM), C(ACL_DEV_ATTR_VECTOR_CORE_NUM),
	C(ACL_DEV_ATTR_WARP_SIZE), C(ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE),
	C(ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE), C(ACL_DEV_ATTR_MAX_GRID_DIM_X),
	C(ACL_DEV_ATTR_MAX_GRID_DIM_Y), C(ACL_DEV_ATTR_MAX_GRID_DIM_Z),
	C(ACL_DEV_ATTR_MAX_BLOCK_PER_GRID), C(ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK),
	C(ACL_DEV_ATTR_MAX_BLOCK_DIM_X), C(ACL_DEV_ATTR_MAX_BLOCK_DIM_Y),
	C(ACL_DEV_ATTR_MAX_BLOCK_DIM_Z), C(ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE),
	C(ACL_DEV_ATTR_L2_CACHE_SIZE), C(ACL_DEV_ATTR_SMP_ID),
	C(ACL_DEV_ATTR_PHY_CHIP_ID), C(ACL_DEV_ATTR_SUPER_POD_DEVICE_ID),
	C(ACL_DEV_ATTR_SUPER_POD_SERVER_ID), C(ACL_DEV_ATTR_SUPER_POD_ID),
	C(ACL_DEV_ATTR_CUST_OP_PRIVILEGE), C(ACL_DEV_ATTR_MAINBOARD_ID),
	C(ACL_DEV_ATTR_HD_CONNECT_TYPE), C(ACL_DEV_ATTR_DEVICE_FORM_FACTOR),
	C(ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID), C(ACL_DEV_ATTR_IS_VIRTUAL),
	C(ACL_DEV_ATTR_NPU_ARCH),
	C(ACL_DT_UNDEFINED), C(ACL_FLOAT), C(ACL_FLOAT16), C(ACL_INT8),
	C(ACL_INT32), C(ACL_UINT8), C(ACL_INT16), C(ACL_UINT16), C(ACL_UINT32),
	C(ACL_INT64), C(ACL_UINT64), C(ACL_DOUBLE), C(ACL_BOOL), C(ACL_STRING),
	C(ACL_COMPLEX64), C(ACL_COMPLEX128), C(ACL_BF16), C(ACL_INT4),
	C(ACL_UINT1), C(ACL_COMPLEX32), C(ACL_HIFLOAT8), C(ACL_FLOAT8_E5M2),
	C(ACL_FLOAT8_E4M3FN), C(ACL_FLOAT8_E8M0), C(ACL_FLOAT6_E3M2),
	C(ACL_FLOAT6_E2M3), C(ACL_FLOAT4_E2M1), C(ACL_FLOAT4_E1M2),
	C(ACL_HIFLOAT4), C(ACL_HIFLOAT4_SCALE),
	C(ACL_ERROR_RT_OVER_LIMIT),
};

int aclpy_system_constants(PyObject *m)
{
	size_t i;

	for (i = 0; i < sizeof(sys_constants) / sizeof(sys_constants[0]); i++)
		if (PyModule_AddIntConstant(m, sys_constants[i].name,
					    sys_constants[i].value))
			return -1;
	return 0;
}
