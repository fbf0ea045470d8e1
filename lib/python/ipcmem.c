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

static PyObject *ptr_ret(void *p, aclError ret)
{
	return Py_BuildValue("(Ki)",
			     ret ? 0ULL : (unsigned long long)(uintptr_t)p,
			     (int)ret);
}

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

static PyObject *py_ipc_mem_import_by_key(PyObject *self, PyObject *args)
{
	const char *key;
	void *dev = NULL;
	uint64_t flags;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "sO&:ipc_mem_import_by_key", &key,
			      conv_u64, &flags))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcMemImportByKey(&dev, key, flags);
	Py_END_ALLOW_THREADS
	return ptr_ret(dev, ret);
}

static PyObject *py_ipc_mem_close(PyObject *self, PyObject *args)
{
	const char *key;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "s:ipc_mem_close", &key))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcMemClose(key);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_ipc_mem_set_attr(PyObject *self, PyObject *args)
{
	const char *key;
	int32_t type;
	uint64_t attr;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "sO&O&:ipc_mem_set_attr", &key, conv_i32,
			      &type, conv_u64, &attr))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtIpcMemSetAttr(key, (aclrtIpcMemAttrType)type, attr);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_host_register(PyObject *self, PyObject *args)
{
	void *ptr, *dev = NULL;
	uint64_t size;
	int32_t type;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&:host_register", conv_ptr, &ptr,
			      conv_u64, &size, conv_i32, &type))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtHostRegister(ptr, size, (aclrtHostRegisterType)type, &dev);
	Py_END_ALLOW_THREADS
	return ptr_ret(dev, ret);
}

static PyObject *py_host_register_v2(PyObject *self, PyObject *args)
{
	uint64_t size;
	uint32_t flag;
	void *ptr;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&O&:host_register_v2", conv_ptr, &ptr,
			      conv_u64, &size, conv_u32, &flag))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtHostRegisterV2(ptr, size, flag);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_host_unregister(PyObject *self, PyObject *args)
{
	void *ptr;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&:host_unregister", conv_ptr, &ptr))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtHostUnregister(ptr);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(ret);
}

static PyObject *py_host_get_device_pointer(PyObject *self, PyObject *args)
{
	void *host, *dev = NULL;
	uint32_t flag;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:host_get_device_pointer", conv_ptr,
			      &host, conv_u32, &flag))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtHostGetDevicePointer(host, &dev, flag);
	Py_END_ALLOW_THREADS
	return ptr_ret(dev, ret);
}

static PyObject *py_host_mem_map_capabilities(PyObject *self, PyObject *args)
{
	aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
	uint32_t dev;
	int32_t hac;
	aclError ret;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&O&:host_mem_map_capabilities", conv_u32,
			      &dev, conv_i32, &hac))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = aclrtHostMemMapCapabilities(dev, (aclrtHacType)hac, &cap);
	Py_END_ALLOW_THREADS
	return Py_BuildValue("(ii)", ret ? 0 : (int)cap, (int)ret);
}

PyMethodDef aclpy_rt_ipcmem_methods[] = {
	{ "ipc_mem_get_export_key", py_ipc_mem_get_export_key, METH_VARARGS,
	  "key, ret = ipc_mem_get_export_key(dev_ptr, size, len, flags)" },
	{ "ipc_mem_set_import_pid", py_ipc_mem_set_import_pid, METH_VARARGS,
	  "ret = ipc_mem_set_import_pid(key, pids)" },
	{ "ipc_mem_import_by_key", py_ipc_mem_import_by_key, METH_VARARGS,
	  "dev_ptr, ret = ipc_mem_import_by_key(key, flags)" },
	{ "ipc_mem_close", py_ipc_mem_close, METH_VARARGS,
	  "ret = ipc_mem_close(key)" },
	{ "ipc_mem_set_attr", py_ipc_mem_set_attr, METH_VARARGS,
	  "ret = ipc_mem_set_attr(key, type, attr)" },
	{ "host_register", py_host_register, METH_VARARGS,
	  "dev_ptr, ret = host_register(ptr, size, type)" },
	{ "host_register_v2", py_host_register_v2, METH_VARARGS,
	  "ret = host_register_v2(ptr, size, flag)" },
	{ "host_unregister", py_host_unregister, METH_VARARGS,
	  "ret = host_unregister(ptr)" },
	{ "host_get_device_pointer", py_host_get_device_pointer, METH_VARARGS,
	  "ptr_device, ret = host_get_device_pointer(ptr_host, flag)" },
	{ "host_mem_map_capabilities", py_host_mem_map_capabilities,
	  METH_VARARGS,
	  "capability, ret = host_mem_map_capabilities(device_id, hac_type)" },
	{ NULL, NULL, 0, NULL },
};
