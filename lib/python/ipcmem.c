// SPDX-License-Identifier: MIT
/*
 * acl.rt: device memory shared between processes and registered host
 * memory, with pyACL's names and outputs:
 *
 *   key, ret = acl.rt.ipc_mem_get_export_key(dev_ptr, size, len, flags)
 *   ret = acl.rt.ipc_mem_set_import_pid(key, [pid, ...])
 *   dev_ptr, ret = acl.rt.ipc_mem_import_by_key(key, flags)
 *   ret = acl.rt.ipc_mem_close(key)
 *   ret = acl.rt.ipc_mem_set_attr(key, type, attr)
 *   dev_ptr, ret = acl.rt.host_register(ptr, size, type)
 *   ret = acl.rt.host_register_v2(ptr, size, flag)
 *   ret = acl.rt.host_unregister(ptr)
 *   ptr_device, ret = acl.rt.host_get_device_pointer(ptr_host, flag)
 *   capability, ret = acl.rt.host_mem_map_capabilities(device_id, hac_type)
 *
 * pyACL documents no binding for the last two of the IPC calls and for
 * host_mem_map_capabilities; theirs take the C name's words.  Keys are
 * str ("" on failure), pointers ints (0 on failure).  The GIL is released
 * around every library call.
 */
#include "acl/acl.h"
#include "aclpy.h"

/* Key buffers: CANN's keys fit 65 bytes; a larger len asks for this. */
#define KEY_LEN_MAX	1024

static PyObject *py_ipc_mem_get_export_key(PyObject *self, PyObject *args)
{
	uint64_t flags;
	size_t size, len;
	void *dev;
	char *key;
	aclError ret;
	PyObject *res;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&O&:ipc_mem_get_export_key",
			      conv_ptr, &dev, conv_size, &size, conv_size,
			      &len, conv_u64, &flags))
		return NULL;
	if (len > KEY_LEN_MAX)
		len = KEY_LEN_MAX;
	/* One byte more than the library may write: always terminated. */
	key = PyMem_RawCalloc(1, len + 1);
	if (!key)
		return PyErr_NoMemory();
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcMemGetExportKey(dev, size, key, len, flags);
	Py_END_ALLOW_THREADS
	res = Py_BuildValue("(si)", ret ? "" : key, (int)ret);
	PyMem_RawFree(key);
	return res;
}

/* ret = ipc_mem_set_import_pid(key, pids): a list (or tuple) of ints. */
static PyObject *py_ipc_mem_set_import_pid(PyObject *self, PyObject *args)
{
	PyObject *list;
	size_t num;
	const char *key;
	int32_t *pids;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "sO:ipc_mem_set_import_pid", &key, &list))
		return NULL;
	pids = aclpy_pid_list(list, &num);
	if (!pids)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcMemSetImportPid(key, pids, num);
	Py_END_ALLOW_THREADS
	PyMem_Free(pids);
	return PyLong_FromLong(ret);
}


#define IPCMEM_CALLS(CALL, HAND)					\
	HAND(ipc_mem_get_export_key, METH_VARARGS,			\
	     "key, ret = ipc_mem_get_export_key(dev_ptr, size, len, flags)") \
	HAND(ipc_mem_set_import_pid, METH_VARARGS,			\
	     "ret = ipc_mem_set_import_pid(key, pids)")			\
	CALL(ipc_mem_import_by_key, aclrtIpcMemImportByKey, (out_p, s, u64), \
	     (), "dev_ptr, ret = ipc_mem_import_by_key(key, flags)")	\
	CALL(ipc_mem_close, aclrtIpcMemClose, (s), (),			\
	     "ret = ipc_mem_close(key)")				\
	CALL(ipc_mem_set_attr, aclrtIpcMemSetAttr, (s, i32, u64), (),	\
	     "ret = ipc_mem_set_attr(key, type, attr)")			\
	CALL(host_register, aclrtHostRegister, (p, u64, i32, out_p), (), \
	     "dev_ptr, ret = host_register(ptr, size, type)")		\
	CALL(host_register_v2, aclrtHostRegisterV2, (p, u64, u32), (),	\
	     "ret = host_register_v2(ptr, size, flag)")			\
	CALL(host_unregister, aclrtHostUnregister, (p), (),		\
	     "ret = host_unregister(ptr)")				\
	CALL(host_get_device_pointer, aclrtHostGetDevicePointer,	\
	     (p, out_p, u32), (),					\
	     "ptr_device, ret = host_get_device_pointer(ptr_host, flag)") \
	CALL(host_mem_map_capabilities, aclrtHostMemMapCapabilities,	\
	     (u32, i32, out_i32), (),					\
	     "capability, ret = host_mem_map_capabilities(device_id, hac_type)")

ACLPY_DEFINE(IPCMEM_CALLS)

PyMethodDef aclpy_rt_ipcmem_methods[] = { ACLPY_METHODS(IPCMEM_CALLS) };
