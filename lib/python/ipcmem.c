// SPDX-License-Identifier: MIT
/*
 * acl.rt: IPC memory and registered host memory, as lib/README.md
 * documents them.  The GIL is released around every library call.
 */
#include "acl/acl.h"
#include "aclpy.h"

#define IPCMEM_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	AUTO(aclrtIpcMemGetExportKey)					\
	CALL(ipc_mem_set_import_pid, aclrtIpcMemSetImportPid,		\
	     (s, objn(aclpy_conv_pids)), (),				\
	     "ret = ipc_mem_set_import_pid(key, pids)")			\
	AUTO(aclrtIpcMemImportByKey)					\
	AUTO(aclrtIpcMemClose)						\
	AUTO(aclrtIpcMemSetAttr)					\
	AUTO(aclrtHostRegister)						\
	AUTO(aclrtHostRegisterV2)					\
	AUTO(aclrtHostUnregister)					\
	DOC(aclrtHostGetDevicePointer,					\
	    "ptr_device, ret = host_get_device_pointer(ptr_host, flag)") \
	DOC(aclrtHostMemMapCapabilities,				\
	    "capability, ret = host_mem_map_capabilities(device_id, hac_type)")

ACLPY_TABLE(aclpy_rt_ipcmem_methods, IPCMEM_CALLS)
