// SPDX-License-Identifier: MIT
/* pyACL's error, system and device-fact calls, and the float16 helpers. */
#include "acl/acl.h"
#include "aclpy.h"

/* acl.rt's get_soc_name is acl's. */
#define py_get_soc_name		py_aclrtGetSocName

/* The C calls take the package name as a char *: they are given a copy. */
typedef char version_buf[ACL_PKG_VERSION_MAX_SIZE];

#define VERSION(name, cfn, out_type)					\
static aclError name(const char *pkg, out_type out)			\
{									\
	version_buf copy;						\
									\
	snprintf(copy, sizeof(copy), "%s", pkg);			\
	return cfn(copy, out);						\
}

VERSION(version_str, aclsysGetVersionStr, char *)
VERSION(version_num, aclsysGetVersionNum, int32_t *)

/* outs (calls.h): a string as the library left it ("" to start). */
static PyObject *version_out(const void *out)
{
	return Py_BuildValue("s", (const char *)out);
}

ACLPY_FN(get_cann_attribute_list)
{
	const aclCannAttr *list = NULL;
	size_t n = 0, i;
	PyObject *l;
	aclError ret;

	ret = aclGetCannAttributeList(&list, &n);
	if (ret)
		n = 0;
	l = PyList_New((Py_ssize_t)n);
	for (i = 0; l && i < n; i++) {
		PyObject *v = PyLong_FromLong(list[i]);

		if (!v)
			Py_CLEAR(l);
		else
			PyList_SET_ITEM(l, (Py_ssize_t)i, v);
	}
	return l ? Py_BuildValue("(Ni)", l, (int)ret) : NULL;
}

/* Kinds of this file (calls.h): a float16's bits and a float. */
ACLPY_CONV(f16, uint32_t, "value", unsigned long, PyLong_AsUnsignedLong,
	   v <= 0xFFFF, "value out of float16 range")
#define ACLPY_K_f16	(conv, "O&", "", conv_f16, u32, )
#define ACLPY_K_f	(fmt, "f", "", , f, )
#define ACLPY_RV_float(x)	PyFloat_FromDouble(x)

/* outs (calls.h): both as the library left them, zeroed to start. */
static PyObject *utilization(const void *out)
{
	const aclrtUtilizationInfo *u = out;

	return Py_BuildValue("{sisisisi}", "cube_utilization",
			     (int)u->cubeUtilization, "vector_utilization",
			     (int)u->vectorUtilization, "aicpu_utilization",
			     (int)u->aicpuUtilization, "memory_utilization",
			     (int)u->memoryUtilization);
}

static PyObject *uuid(const void *out)
{
	const aclrtUuid *u = out;

	return PyBytes_FromStringAndSize((const char *)u->bytes,
					 (Py_ssize_t)sizeof(u->bytes));
}

/* device_get_pci_bus_id: the C call's buffer and length are the binding's. */
typedef char pci_bus_id_buf[16];

static aclError pci_bus_id(int32_t dev, char *out)
{
	return aclrtDeviceGetPCIBusId(dev, out, (int32_t)sizeof(pci_bus_id_buf));
}

#define ACL_SYSTEM_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	VAL(get_recent_err_msg, aclGetRecentErrMsg, (), msg, NULL)	\
	VAL(get_soc_name, aclrtGetSocName, (), str, NULL)		\
	CALL(sys_get_version_str, version_str,				\
	     (s, outs(version_buf, version_out)), (.hold_gil = true), NULL) \
	CALL(sys_get_version_num, version_num, (s, out_i32),		\
	     (.hold_gil = true, .raw = true), NULL)			\
	DOC(aclGetCannAttribute, NULL, .hold_gil = true, .raw = true)	\
	HAND(get_cann_attribute_list, METH_NOARGS, NULL)		\
	CALL(get_device_capability, aclGetDeviceCapability,		\
	     (i32, i32, out_i64), (.hold_gil = true, .raw = true), NULL) \
	VAL(data_type_size, aclDataTypeSize, (i32), size, NULL)		\
	VAL(float16_to_float, aclFloat16ToFloat, (f16), float, NULL)	\
	VAL(float_to_float16, aclFloatToFloat16, (f), int, NULL)

#define RT_SYSTEM_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	DOC(aclrtGetLastError, NULL, .hold_gil = true)			\
	DOC(aclrtPeekAtLastError, NULL, .hold_gil = true)		\
	HAND(get_soc_name, METH_NOARGS, NULL)				\
	DOC(aclrtGetVersion, NULL, .hold_gil = true, .raw = true)	\
	DOC(aclrtCheckArchCompatibility, NULL, .hold_gil = true, .raw = true) \
	CALL(get_device_info, aclrtGetDeviceInfo, (i32, i32, out_i64),	\
	     (.raw = true), NULL)					\
	DOC(aclrtGetDeviceCapability, NULL, .hold_gil = true, .raw = true) \
	DOC(aclrtQueryDeviceStatus, NULL, .raw = true)			\
	CALL(get_device_utilization_rate, aclrtGetDeviceUtilizationRate, \
	     (i32, outs(aclrtUtilizationInfo, utilization)), (), NULL)	\
	DOC(aclrtGetDeviceResLimit, NULL, .hold_gil = true, .raw = true) \
	CALL(set_device_res_limit, aclrtSetDeviceResLimit, (i32, i32, ui), \
	     (.hold_gil = true), NULL)					\
	DOC(aclrtResetDeviceResLimit, NULL, .hold_gil = true)		\
	DOC(aclrtDeviceCanAccessPeer, NULL, .hold_gil = true, .raw = true) \
	CALL(device_enable_peer_access, aclrtDeviceEnablePeerAccess,	\
	     (i32, opt, ui), (.hold_gil = true), NULL)			\
	DOC(aclrtDeviceDisablePeerAccess, NULL, .hold_gil = true)	\
	DOC(aclrtDevicePeerAccessStatus, NULL, .hold_gil = true, .raw = true) \
	DOC(aclrtDeviceGetBareTgid, NULL, .hold_gil = true, .raw = true) \
	CALL(device_get_uuid, aclrtDeviceGetUuid,			\
	     (i32, outs(aclrtUuid, uuid)), (.hold_gil = true), NULL)	\
	CALL(device_get_pci_bus_id, pci_bus_id,				\
	     (i32, outs(pci_bus_id_buf, version_out)), (),		\
	     "pci_bus_id, ret = device_get_pci_bus_id(device_id)")	\
	DOC(aclrtDeviceGetByPCIBusId,					\
	    "device_id, ret = device_get_by_pci_bus_id(pci_bus_id)", .raw = true)

ACLPY_TABLE(aclpy_system_methods, ACL_SYSTEM_CALLS)
ACLPY_TABLE(aclpy_system_rt_methods, RT_SYSTEM_CALLS)
