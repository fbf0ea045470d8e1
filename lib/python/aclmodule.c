// SPDX-License-Identifier: MIT
/*
 * The "acl" Python module: libaclmem's ACL API with pyACL's conventions,
 * e.g. dev_ptr, ret = acl.rt.malloc(size, policy).  Each file's table of
 * calls gives their signatures, as their docstrings.
 *
 * Pointers are ints; every call returns its outputs followed by ret, and an
 * API failure is a non-zero ret (outputs are then 0), never an exception.
 * Arguments of the wrong type raise TypeError; ints out of range for the C
 * type raise OverflowError.  acl.util.bytes_to_ptr/ptr_to_bytes move data
 * between Python objects and memory, as in pyACL.
 *
 * The GIL is released around every library call: copies and allocations
 * can take long, and other Python threads should run meanwhile.
 */
#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "acl/ops/acl_dvpp.h"
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

/* ---- tables ---- */

#define ACL_CALLS(CALL, HAND)						\
	CALL(init, aclInit, (opt, sn), (), "ret = init([config_path])")	\
	CALL(finalize, aclFinalize, (), (.after = aclpy_rt_finalized),	\
	     "ret = finalize()")

#define RT_CALLS(CALL, HAND)						\
	CALL(set_device, aclrtSetDevice, (i32), (), "ret = set_device(id)") \
	CALL(reset_device, aclrtResetDevice, (i32),			\
	     (.after = aclpy_rt_device_reset), "ret = reset_device(id)")	\
	CALL(get_device, aclrtGetDevice, (out_i32), (.hold_gil = true),	\
	     "id, ret = get_device()")					\
	CALL(get_device_count, aclrtGetDeviceCount, (out_u32),		\
	     (.hold_gil = true, .raw = true),				\
	     "count, ret = get_device_count()")				\
	CALL(get_run_mode, aclrtGetRunMode, (out_init),			\
	     (.hold_gil = true, .raw = true, .init = ACL_HOST),		\
	     "mode, ret = get_run_mode()")				\
	CALL(synchronize_device, aclrtSynchronizeDevice, (), (),	\
	     "ret = synchronize_device()")				\
	CALL(malloc, aclrtMalloc, (out_p, z, i32), (),			\
	     "dev_ptr, ret = malloc(size, policy)")			\
	CALL(malloc_cached, aclrtMallocCached, (out_p, z, i32), (),	\
	     "dev_ptr, ret = malloc_cached(size, policy)")		\
	CALL(malloc_align32, aclrtMallocAlign32, (out_p, z, i32), (),	\
	     "dev_ptr, ret = malloc_align32(size, policy)")		\
	CALL(malloc_host, aclrtMallocHost, (out_p, z), (),		\
	     "host_ptr, ret = malloc_host(size)")			\
	CALL(free, aclrtFree, (p), (), "ret = free(dev_ptr)")		\
	CALL(free_host, aclrtFreeHost, (p), (), "ret = free_host(host_ptr)") \
	CALL(mem_flush, aclrtMemFlush, (p, z), (),			\
	     "ret = mem_flush(dev_ptr, size)")				\
	CALL(mem_invalidate, aclrtMemInvalidate, (p, z), (),		\
	     "ret = mem_invalidate(dev_ptr, size)")			\
	CALL(memset, aclrtMemset, (p, z, i32, z), (),			\
	     "ret = memset(dev_ptr, max_count, value, count)")		\
	CALL(memcpy, aclrtMemcpy, (p, z, p, z, i32), (),		\
	     "ret = memcpy(dst, dest_max, src, count, kind)")		\
	CALL(get_mem_info, aclrtGetMemInfo, (i32, out_n, out_n),	\
	     (.raw = true), "free, total, ret = get_mem_info(attr)")	\
	CALL(pointer_get_attributes, aclrtPointerGetAttributes,		\
	     (p, outs(aclrtPtrAttributes, ptr_attrs)), (.hold_gil = true), \
	     "attrs, ret = pointer_get_attributes(ptr)")		\
	CALL(create_stream, aclrtCreateStream, (out_p), (.hold_gil = true), \
	     "stream, ret = create_stream()")				\
	CALL(destroy_stream, aclrtDestroyStream, (p),			\
	     (.after = aclpy_rt_stream_gone), "ret = destroy_stream(stream)") \
	CALL(synchronize_stream, aclrtSynchronizeStream, (p), (),	\
	     "ret = synchronize_stream(stream)")			\
	CALL(memcpy_async, aclrtMemcpyAsync, (p, z, p, z, i32, p), (),	\
	     "ret = memcpy_async(dst, dest_max, src, count, kind, stream)")

/* acl.media: only the media memory (acl/ops/acl_dvpp.h). */
#define MEDIA_CALLS(CALL, HAND)						\
	CALL(dvpp_malloc, acldvppMalloc, (out_p, z), (),		\
	     "dev_ptr, ret = dvpp_malloc(size)")			\
	CALL(dvpp_free, acldvppFree, (p), (), "ret = dvpp_free(dev_ptr)")

ACLPY_TABLE(aclpy_acl_methods, ACL_CALLS)
ACLPY_TABLE(aclpy_rt_methods, RT_CALLS)
ACLPY_TABLE(aclpy_media_methods, MEDIA_CALLS)

static struct PyModuleDef acl_module = {
	PyModuleDef_HEAD_INIT, "acl",
	"ACL device memory API (libaclmem), pyACL conventions", -1,
	aclpy_acl_methods, NULL, NULL, NULL, NULL,
};

static struct PyModuleDef rt_module = {
	PyModuleDef_HEAD_INIT, "acl.rt", "ACL runtime: devices and memory", -1,
	aclpy_rt_methods, NULL, NULL, NULL, NULL,
};

static struct PyModuleDef media_module = {
	PyModuleDef_HEAD_INIT, "acl.media", "media memory (acldvpp*)", -1,
	aclpy_media_methods, NULL, NULL, NULL, NULL,
};

static struct PyModuleDef tdt_module = {
	PyModuleDef_HEAD_INIT, "acl.tdt", "TDT channels and queues (tdt.c)", -1,
	aclpy_tdt_methods, NULL, NULL, NULL, NULL,
};

static struct PyModuleDef util_module = {
	PyModuleDef_HEAD_INIT, "acl.util", "pointer helpers", -1,
	aclpy_util_methods, NULL, NULL, NULL, NULL,
};

#define C(name) { #name, (long)(name) }

static const struct {
	const char *name;
	long value;
} constants[] = {
	C(ACL_SUCCESS), C(ACL_ERROR_NONE),
	C(ACL_ERROR_INVALID_PARAM), C(ACL_ERROR_UNINITIALIZE),
	C(ACL_ERROR_REPEAT_INITIALIZE), C(ACL_ERROR_INVALID_FILE),
	C(ACL_ERROR_REPEAT_FINALIZE), C(ACL_ERROR_BAD_ALLOC),
	C(ACL_ERROR_API_NOT_SUPPORT), C(ACL_ERROR_INVALID_DEVICE),
	C(ACL_ERROR_MEMORY_ADDRESS_UNALIGNED), C(ACL_ERROR_FEATURE_UNSUPPORTED),
	C(ACL_ERROR_STORAGE_OVER_LIMIT), C(ACL_ERROR_INTERNAL_ERROR),
	C(ACL_ERROR_FAILURE), C(ACL_ERROR_RT_FAILURE), C(ACL_ERROR_DRV_FAILURE),
	C(ACL_ERROR_RT_PARAM_INVALID), C(ACL_ERROR_RT_INVALID_DEVICEID),
	C(ACL_ERROR_RT_CONTEXT_NULL), C(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
	C(ACL_ERROR_RT_MEMORY_ALLOCATION), C(ACL_ERROR_RT_NO_DEVICE),
	C(ACL_ERROR_RT_NO_PERMISSION), C(ACL_ERROR_RT_DRV_INTERNAL_ERROR),
	C(ACL_MEM_MALLOC_HUGE_FIRST), C(ACL_MEM_MALLOC_HUGE_ONLY),
	C(ACL_MEM_MALLOC_NORMAL_ONLY), C(ACL_MEM_MALLOC_HUGE_FIRST_P2P),
	C(ACL_MEM_MALLOC_HUGE_ONLY_P2P), C(ACL_MEM_MALLOC_NORMAL_ONLY_P2P),
	C(ACL_MEM_MALLOC_HUGE1G_ONLY), C(ACL_MEM_MALLOC_HUGE1G_ONLY_P2P),
	C(ACL_MEM_TYPE_LOW_BAND_WIDTH), C(ACL_MEM_TYPE_HIGH_BAND_WIDTH),
	C(ACL_MEM_ACCESS_USER_SPACE_READONLY),
	C(ACL_MEMCPY_HOST_TO_HOST), C(ACL_MEMCPY_HOST_TO_DEVICE),
	C(ACL_MEMCPY_DEVICE_TO_HOST), C(ACL_MEMCPY_DEVICE_TO_DEVICE),
	C(ACL_MEMCPY_DEFAULT), C(ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE),
	C(ACL_DDR_MEM), C(ACL_HBM_MEM), C(ACL_DDR_MEM_HUGE),
	C(ACL_DDR_MEM_NORMAL), C(ACL_HBM_MEM_HUGE), C(ACL_HBM_MEM_NORMAL),
	C(ACL_DDR_MEM_P2P_HUGE), C(ACL_DDR_MEM_P2P_NORMAL),
	C(ACL_HBM_MEM_P2P_HUGE), C(ACL_HBM_MEM_P2P_NORMAL),
	C(ACL_HBM_MEM_HUGE1G), C(ACL_HBM_MEM_P2P_HUGE1G), C(ACL_MEM_NORMAL),
	C(ACL_MEM_HUGE), C(ACL_MEM_HUGE1G), C(ACL_MEM_P2P_NORMAL),
	C(ACL_MEM_P2P_HUGE), C(ACL_MEM_P2P_HUGE1G),
	C(ACL_DEVICE), C(ACL_HOST),
	C(ACL_MEM_LOCATION_TYPE_HOST), C(ACL_MEM_LOCATION_TYPE_DEVICE),
	C(ACL_MEM_LOCATION_TYPE_UNREGISTERED),
	/* more memory calls (lib/python/memory_ext.c) */
	C(ACL_MEM_LOCATION_TYPE_MANAGED), C(ACL_MEM_LOCATION_TYPE_HOST_NUMA),
	C(ACL_RT_MEM_ATTR_RSV), C(ACL_RT_MEM_ATTR_MODULE_ID),
	C(ACL_RT_MEM_ATTR_DEVICE_ID), C(ACL_RT_MEM_ATTR_VA_FLAG),
	C(ACL_MEM_ALLOCATION_TYPE_PINNED),
	C(ACL_MEM_HANDLE_TYPE_NONE), C(ACL_MEM_HANDLE_TYPE_POSIX),
	C(ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM),
	C(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED),
	C(ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF),
	C(ACL_RT_MEM_TYPE_DEV), C(ACL_RT_MEM_TYPE_DVPP), C(ACL_RT_MEM_TYPE_RSVD),
	/* cache operations (lib/python/memory_more.c) */
	C(ACL_RT_CMO_TYPE_PREFETCH), C(ACL_RT_CMO_TYPE_WRITEBACK),
	C(ACL_RT_CMO_TYPE_INVALID), C(ACL_RT_CMO_TYPE_FLUSH),
	C(ACL_RT_CMO_MAX_BARRIER_NUM),
	/* events, streams and callbacks (lib/python/runtime.c) */
	C(ACL_EVENT_SYNC), C(ACL_EVENT_CAPTURE_STREAM_PROGRESS),
	C(ACL_EVENT_TIME_LINE), C(ACL_EVENT_DEVICE_USE_ONLY),
	C(ACL_EVENT_EXTERNAL), C(ACL_EVENT_IPC),
	C(ACL_EVENT_RECORD_DEFAULT), C(ACL_EVENT_RECORD_EXTERNAL),
	C(ACL_EVENT_WAIT_DEFAULT), C(ACL_EVENT_WAIT_EXTERNAL),
	C(ACL_EVENT_STATUS_COMPLETE), C(ACL_EVENT_STATUS_NOT_READY),
	C(ACL_EVENT_STATUS_RESERVED),
	C(ACL_EVENT_RECORDED_STATUS_NOT_READY),
	C(ACL_EVENT_RECORDED_STATUS_COMPLETE),
	C(ACL_EVENT_WAIT_STATUS_COMPLETE), C(ACL_EVENT_WAIT_STATUS_NOT_READY),
	C(ACL_EVENT_WAIT_STATUS_RESERVED),
	C(ACL_STREAM_FAST_LAUNCH), C(ACL_STREAM_FAST_SYNC),
	C(ACL_STREAM_PERSISTENT), C(ACL_STREAM_HUGE),
	C(ACL_STREAM_CPU_SCHEDULE), C(ACL_STREAM_DEVICE_USE_ONLY),
	C(ACL_STREAM_STATUS_COMPLETE), C(ACL_STREAM_STATUS_NOT_READY),
	C(ACL_STREAM_STATUS_RESERVED),
	C(ACL_CONTINUE_ON_FAILURE), C(ACL_STOP_ON_FAILURE),
	C(ACL_CALLBACK_NO_BLOCK), C(ACL_CALLBACK_BLOCK),
	C(ACL_ERROR_RT_STREAM_CONTEXT), C(ACL_ERROR_RT_STREAM_SUBSCRIBE),
	C(ACL_ERROR_RT_THREAD_SUBSCRIBE), C(ACL_ERROR_RT_STREAM_NO_CB_REG),
	C(ACL_ERROR_RT_REPORT_TIMEOUT), C(ACL_ERROR_RT_STREAM_ABORT),
	C(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT), C(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
	C(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID),
	C(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL),
	C(ACL_ERROR_RT_EVENT_NOT_COMPLETE), C(ACL_ERROR_RT_NO_EVENT_RESOURCE),
	C(ACL_ERROR_RT_NO_STREAM_RESOURCE),
	/* notifies, IPC events, values, settings (lib/python/runtime_ext.c) */
	C(ACL_NOTIFY_DEFAULT), C(ACL_NOTIFY_DEVICE_USE_ONLY),
	C(ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT),
	C(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION),
	C(ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT),
	C(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS),
	C(ACL_IPC_EVENT_HANDLE_SIZE),
	C(ACL_STREAM_WAIT_VALUE_GEQ), C(ACL_STREAM_WAIT_VALUE_EQ),
	C(ACL_STREAM_WAIT_VALUE_AND), C(ACL_STREAM_WAIT_VALUE_NOR),
	C(ACL_OPT_DETERMINISTIC), C(ACL_OPT_ENABLE_DEBUG_KERNEL),
	C(ACL_RT_OVERFLOW_MODE_SATURATION), C(ACL_RT_OVERFLOW_MODE_INFNAN),
	C(ACL_RT_OVERFLOW_MODE_UNDEF),
	C(ACL_TS_ID_AICORE), C(ACL_TS_ID_AIVECTOR), C(ACL_TS_ID_RESERVED),
	C(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE),
	C(ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE),
	C(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE),
	C(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE),
	C(ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE),
	C(ACL_ERROR_RT_WAIT_TIMEOUT), C(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET),
	C(ACL_ERROR_RT_NO_NOTIFY_RESOURCE), C(ACL_ERROR_RT_ADDR_UNALIGNED),
	C(ACL_STREAM_ATTR_FAILURE_MODE), C(ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK),
	C(ACL_STREAM_ATTR_USER_CUSTOM_TAG), C(ACL_STREAM_ATTR_CACHE_OP_INFO),
	C(ACL_STREAM_ATTR_PRIORITY), C(ACL_ERROR_RT_TASK_ABORT_STOP),
	/* virtual memory (lib/python/vmm.c) */
	C(NORMAL_PAGE_TYPE), C(HUGE_PAGE_TYPE), C(HUGE1G_PAGE_TYPE),
	C(ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT), C(ACL_MEM_SHARE_HANDLE_TYPE_FABRIC),
	C(ACL_RT_VMM_EXPORT_FLAG_DEFAULT),
	C(ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
	C(ACL_RT_MEM_ACCESS_FLAGS_NONE), C(ACL_RT_MEM_ACCESS_FLAGS_READ),
	C(ACL_RT_MEM_ACCESS_FLAGS_READWRITE), C(ACL_ERROR_RT_OVER_LIMIT),
	/* IPC memory, registered host memory (lib/python/ipcmem.c) */
	C(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT),
	C(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
	C(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT),
	C(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS),
	C(ACL_RT_IPC_MEM_ATTR_ACCESS_LINK),
	C(ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO),
	C(ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS),
	C(ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH),
	C(ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH),
	C(ACL_HOST_REG_MAPPED), C(ACL_HOST_REG_IOMEMORY),
	C(ACL_HOST_REG_READONLY), C(ACL_HOST_REG_PINNED),
	C(ACL_HOST_REGISTER_MAPPED), C(ACL_HOST_REGISTER_IOMEMORY),
	C(ACL_HOST_REGISTER_READONLY),
	C(ACL_RT_HAC_TYPE_STARS), C(ACL_RT_HAC_TYPE_AICPU),
	C(ACL_RT_HAC_TYPE_AIC), C(ACL_RT_HAC_TYPE_AIV),
	C(ACL_RT_HAC_TYPE_PCIEDMA), C(ACL_RT_HAC_TYPE_RDMA),
	C(ACL_RT_HAC_TYPE_SDMA), C(ACL_RT_HAC_TYPE_DVPP),
	C(ACL_RT_HAC_TYPE_UDMA), C(ACL_RT_HAC_TYPE_CCU),
	C(ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED), C(ACL_RT_HOST_MEM_MAP_SUPPORTED),
	/* system and device facts, data types (lib/python/system.c) */
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
	C(ACL_DEV_ATTR_MAX_BLOCK_PER_GRID),
	C(ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK),
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
	C(ACL_TENSOR_DATA_UNDEFINED), C(ACL_TENSOR_DATA_TENSOR),
	C(ACL_TENSOR_DATA_END_OF_SEQUENCE), C(ACL_TENSOR_DATA_ABNORMAL),
	C(ACL_TENSOR_DATA_SLICE_TENSOR), C(ACL_TENSOR_DATA_END_TENSOR),
	C(ACL_TDT_QUEUE_NAME_PTR), C(ACL_TDT_QUEUE_DEPTH_UINT32),
	C(ACL_TDT_NORMAL_MEM), C(ACL_TDT_DVPP_MEM),
	C(ACL_TDT_QUEUE_PERMISSION_MANAGE), C(ACL_TDT_QUEUE_PERMISSION_DEQUEUE),
	C(ACL_TDT_QUEUE_PERMISSION_ENQUEUE),
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

/*
 * The other files' tables, one per concern (declared in aclpy.h), added to
 * acl.rt after this file's own.
 */
static PyMethodDef *const rt_tables[] = {
	aclpy_system_rt_methods,
	aclpy_rt_runtime_methods,
	aclpy_rt_memory_ext_methods,
	aclpy_rt_memory_more_methods,
	aclpy_rt_runtime_ext_methods,
	aclpy_rt_vmm_methods,
	aclpy_rt_ipcmem_methods,
	NULL,
};

/*
 * Make "import acl.rt" and "from acl import rt" work for a single .so;
 * tables, when given, adds the other files' functions.
 */
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
	    add_submodule(m, &util_module, "util", NULL) ||
	    add_submodule(m, &tdt_module, "tdt", NULL)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
