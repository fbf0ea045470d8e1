// SPDX-License-Identifier: MIT
/*
 * The "acl" Python module: libaclmem's ACL API with pyACL's conventions
 * (lib/README.md), built from each file's table of calls.
 */
/* Every public header, and ACLPY_CONSTANTS (python/constants.py). */
#include "acl_constants.h"
#include "aclpy.h"

/* outs (calls.h): pyACL's dict, as the library left it (zeroed: HOST). */
static PyObject *ptr_attrs(const void *out)
{
	const aclrtPtrAttributes *a = out;

	return Py_BuildValue("{s:I,s:i,s:I}", "id",
			     (unsigned int)a->location.id, "type",
			     (int)a->location.type, "page_size",
			     (unsigned int)a->pageSize);
}

#define ACL_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	CALL(init, aclInit, (opt, sn), (), "ret = init([config_path])")	\
	AUTO(aclFinalize, .after = aclpy_rt_finalized)

#define RT_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	DOC(aclrtSetDevice, "ret = set_device(id)")			\
	DOC(aclrtResetDevice,						\
	    "ret = reset_device(id)", .after = aclpy_rt_device_reset)	\
	DOC(aclrtGetDevice, "id, ret = get_device()", .hold_gil = true)	\
	AUTO(aclrtGetDeviceCount, .hold_gil = true, .raw = true)	\
	CALL(get_run_mode, aclrtGetRunMode, (out_init),			\
	     (.hold_gil = true, .raw = true, .init = ACL_HOST),		\
	     "mode, ret = get_run_mode()")				\
	AUTO(aclrtSynchronizeDevice)					\
	AUTO(aclrtMalloc)						\
	AUTO(aclrtMallocCached)						\
	AUTO(aclrtMallocAlign32)					\
	AUTO(aclrtMallocHost)						\
	AUTO(aclrtFree)							\
	AUTO(aclrtFreeHost)						\
	AUTO(aclrtMemFlush)						\
	AUTO(aclrtMemInvalidate)					\
	AUTO(aclrtMemset)						\
	AUTO(aclrtMemcpy)						\
	CALL(get_mem_info, aclrtGetMemInfo, (i32, out_n, out_n),	\
	     (.raw = true), "free, total, ret = get_mem_info(attr)")	\
	CALL(pointer_get_attributes, aclrtPointerGetAttributes,		\
	     (p, outs(aclrtPtrAttributes, ptr_attrs)), (.hold_gil = true), \
	     "attrs, ret = pointer_get_attributes(ptr)")		\
	AUTO(aclrtCreateStream, .hold_gil = true)			\
	AUTO(aclrtDestroyStream, .after = aclpy_rt_stream_gone)		\
	AUTO(aclrtSynchronizeStream)					\
	AUTO(aclrtMemcpyAsync)

/* acl.media: only the media memory (acl/ops/acl_dvpp.h). */
#define MEDIA_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	AUTO(acldvppMalloc)						\
	AUTO(acldvppFree)

ACLPY_TABLE(aclpy_acl_methods, ACL_CALLS)
ACLPY_TABLE(aclpy_rt_methods, RT_CALLS)
ACLPY_TABLE(aclpy_media_methods, MEDIA_CALLS)

#define MODULE(var, name, doc, methods)					\
static struct PyModuleDef var = {					\
	PyModuleDef_HEAD_INIT, name, doc, -1, methods, NULL, NULL, NULL, NULL \
}

MODULE(acl_module, "acl",
       "ACL device memory API (libaclmem), pyACL conventions",
       aclpy_acl_methods);
MODULE(rt_module, "acl.rt", "ACL runtime: devices and memory",
       aclpy_rt_methods);
MODULE(media_module, "acl.media", "media memory (acldvpp*)",
       aclpy_media_methods);
MODULE(util_module, "acl.util", "pointer helpers", aclpy_util_methods);
MODULE(prof_module, "acl.prof", "profiling (acl_prof.h)", aclpy_prof_methods);
MODULE(mdl_module, "acl.mdl", "model run instances (model.c)",
       aclpy_mdl_methods);
MODULE(tdt_module, "acl.tdt", "TDT channels and queues (tdt.c)",
       aclpy_tdt_methods);

/* Every integer constant of the public headers (python/constants.py). */
#define C(name) { #name, (long)(name) },

static const struct {
	const char *name;
	long value;
} constants[] = {
	ACLPY_CONSTANTS(C)
};

static int add_constants(PyObject *m)
{
	size_t i;

	for (i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		if (PyModule_AddIntConstant(m, constants[i].name,
					    constants[i].value))
			return -1;
	return 0;
}

/* Added to acl.rt after this file's own table. */
static PyMethodDef *const rt_tables[] = {
	aclpy_system_rt_methods,
	aclpy_rt_runtime_methods,
	aclpy_rt_memory_ext_methods,
	aclpy_rt_memory_more_methods,
	aclpy_rt_runtime_ext_methods,
	aclpy_rt_vmm_methods,
	aclpy_rt_ipcmem_methods,
	aclpy_rt_label_methods,
	NULL,
};

/* "import acl.rt" and "from acl import rt" for a single .so. */
static int add_submodule(PyObject *parent, struct PyModuleDef *def,
			 const char *attr, PyMethodDef *const *tables)
{
	PyObject *m = PyModule_Create(def), *modules;

	if (!m)
		return -1;
	if (add_constants(m))
		goto err;
	for (; tables && *tables; tables++)
		if (PyModule_AddFunctions(m, *tables))
			goto err;
	modules = PyImport_GetModuleDict();
	if (PyDict_SetItemString(modules, def->m_name, m))
		goto err;
	if (PyModule_AddObject(parent, attr, m))
		goto err;
	return 0;
err:
	Py_DECREF(m);
	return -1;
}

PyMODINIT_FUNC PyInit_acl(void)
{
	PyObject *m = PyModule_Create(&acl_module);

	if (!m)
		return NULL;
	if (add_constants(m) || PyModule_AddFunctions(m, aclpy_system_methods) ||
	    add_submodule(m, &rt_module, "rt", rt_tables) ||
	    add_submodule(m, &media_module, "media", NULL) ||
	    add_submodule(m, &prof_module, "prof", NULL) ||
	    add_submodule(m, &mdl_module, "mdl", NULL) ||
	    add_submodule(m, &tdt_module, "tdt", NULL) ||
	    add_submodule(m, &util_module, "util", NULL)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
