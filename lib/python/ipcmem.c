// SPDX-License-Identifier: MIT
/*
 * acl.rt: device memory shared between processes and registered host
 * memory, with pyACL's names and outputs.
 *
 * pyACL documents no binding for the last two of the IPC calls and for
 * host_mem_map_capabilities; theirs take the C name's words.  Keys are
 * str ("" on failure), pointers ints (0 on failure).  The GIL is released
 * around every library call.
 */
#include "acl/acl.h"
#include "aclpy.h"

#define IPCMEM_CALLS(CALL, HAND)					\
	CALL(ipc_mem_get_export_key, aclrtIpcMemGetExportKey,		\
	     (p, z, key, u64), (),					\
	     "key, ret = ipc_mem_get_export_key(dev_ptr, size, len, flags)") \
	CALL(ipc_mem_set_import_pid, aclrtIpcMemSetImportPid,		\
	     (s, objn(aclpy_conv_pids)), (),				\
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

ACLPY_TABLE(aclpy_rt_ipcmem_methods, IPCMEM_CALLS)
