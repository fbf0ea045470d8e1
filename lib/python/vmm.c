// SPDX-License-Identifier: MIT
/* acl.rt: virtual memory (lib/vmm.c), as lib/README.md documents it. */
#include <string.h>

#include "acl/acl.h"
#include "aclpy.h"

/* Every key optional (0), messages naming the key alone: keyed. */
ACLPY_STRUCT(location_desc, keyed, "location must be a dict", "",
	     aclpy_location_fields, NULL, NULL);
ACLPY_STRUCT(prop_desc, keyed, "prop must be a dict", "", aclpy_prop_fields,
	     &location_desc, NULL);

static const struct aclpy_field desc_fields[] = {
	ACLPY_FIELD(aclrtMemAccessDesc, flags, INT32_MAX, false),
	ACLPY_SUB(aclrtMemAccessDesc, location, false),
};

ACLPY_STRUCT(access_desc, keyed, "desc must be a dict", "", desc_fields,
	     &location_desc, NULL);

ACLPY_STRUCT_CONV(prop, aclrtPhysicalMemProp, prop_desc)
ACLPY_STRUCT_CONV(location, aclrtMemLocation, location_desc)

ACLPY_SEQ_CONV(access, "desc must be a list of dicts", false, NULL,
	       &access_desc, aclrtMemAccessDesc)

/* outs (calls.h): as the library left it. */
static PyObject *prop_out(const void *out)
{
	const aclrtPhysicalMemProp *prop = out;

	return Py_BuildValue("{s:i,s:i,s:i,s:{s:I,s:i},s:K}",
			     "handleType", (int)prop->handleType,
			     "allocationType", (int)prop->allocationType,
			     "memAttr", (int)prop->memAttr,
			     "location", "id", prop->location.id,
			     "type", (int)prop->location.type,
			     "reserve", (unsigned long long)prop->reserve);
}

/*
 * A V2 shareable handle is 128 bytes for FABRIC, an int for any other
 * type, so that the library judges it, in an aclrtMemFabricHandle either
 * way.
 */
/* objv (calls.h): the handle of the type args[1]. */
static int share_in(PyObject *o, union aclpy_val *slot,
		    const union aclpy_val *args)
{
	aclrtMemFabricHandle *fh = aclpy_slot_alloc(slot, 1, sizeof(*fh));
	char *buf;
	Py_ssize_t len;

	if (!fh)
		return 0;
	if (args[1].i32 != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
		return conv_u64(o, fh);
	if (PyBytes_AsStringAndSize(o, &buf, &len) < 0)
		return 0;
	if (len != (Py_ssize_t)sizeof(fh->data)) {
		PyErr_SetString(PyExc_ValueError,
				"a FABRIC handle is 128 bytes");
		return 0;
	}
	memcpy(fh->data, buf, sizeof(fh->data));
	return 1;
}

/* outsv (calls.h): the handle of the type args[2]; an int is 0 on failure. */
static PyObject *share_out(const void *out, const union aclpy_val *args,
			   aclError ret)
{
	const aclrtMemFabricHandle *fh = out;

	if (args[2].i32 == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
		return PyBytes_FromStringAndSize((const char *)fh->data,
						 (Py_ssize_t)sizeof(fh->data));
	return PyLong_FromUnsignedLongLong(ret ? 0ULL :
					   *(const uint64_t *)out);
}

#define VMM_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	AUTO(aclrtReserveMemAddress)					\
	AUTO(aclrtReleaseMemAddress)					\
	CALL(malloc_physical, aclrtMallocPhysical,			\
	     (out_p, z, obj(conv_prop), u64), (),			\
	     "handle, ret = malloc_physical(size, prop, flags)")	\
	AUTO(aclrtFreePhysical)						\
	AUTO(aclrtMapMem)						\
	AUTO(aclrtUnmapMem)						\
	CALL(mem_set_access, aclrtMemSetAccess, (p, z, objn(conv_access)), \
	     (),							\
	     "ret = mem_set_access(vir_ptr, size, desc_list)")		\
	CALL(mem_get_access, aclrtMemGetAccess,				\
	     (p, obj(conv_location), out_u64), (),			\
	     "flag, ret = mem_get_access(vir_ptr, location)")		\
	AUTO(aclrtMemRetainAllocationHandle)				\
	CALL(mem_get_allocation_properties_from_handle,			\
	     aclrtMemGetAllocationPropertiesFromHandle,			\
	     (p, outs(aclrtPhysicalMemProp, prop_out)), (),		\
	     "prop, ret = mem_get_allocation_properties_from_handle(handle)") \
	DOC(aclrtMemExportToShareableHandle,				\
	    "shareable, ret = mem_export_to_shareable_handle(handle, handle_type, flags)") \
	DOC(aclrtMemImportFromShareableHandle,				\
	    "handle, ret = mem_import_from_shareable_handle(shareable, device_id)") \
	CALL(mem_set_pid_to_shareable_handle,				\
	     aclrtMemSetPidToShareableHandle, (u64, objn(aclpy_conv_pids)), \
	     (),							\
	     "ret = mem_set_pid_to_shareable_handle(shareable, pid_list)") \
	CALL(mem_export_to_shareable_handle_v2,				\
	     aclrtMemExportToShareableHandleV2,				\
	     (p, u64, i32, outsv(aclrtMemFabricHandle, share_out)), (),	\
	     "shareable, ret = mem_export_to_shareable_handle_v2(handle, flags, share_type)") \
	CALL(mem_import_from_shareable_handle_v2,			\
	     aclrtMemImportFromShareableHandleV2,			\
	     (objv(share_in), i32, u64, out_p), (),			\
	     "handle, ret = mem_import_from_shareable_handle_v2(shareable, share_type, flags)") \
	CALL(mem_set_pid_to_shareable_handle_v2,			\
	     aclrtMemSetPidToShareableHandleV2,				\
	     (objv(share_in), i32, objn(aclpy_conv_pids)), (),		\
	     "ret = mem_set_pid_to_shareable_handle_v2(shareable, share_type, pid_list)")

ACLPY_TABLE(aclpy_rt_vmm_methods, VMM_CALLS)
