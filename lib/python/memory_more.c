// SPDX-License-Identifier: MIT
/*
 * acl.rt: batched copies, the deprecated conditional copy, cache
 * operations and the L2 flush, as lib/README.md documents them.  The C
 * calls' reserved arguments are passed as NULL.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* This file's calls never named themselves in argument errors: still so. */
#define ACLPY_FNAME(pyname)	""

#include "acl/acl.h"
#include "aclpy.h"

/* This file's structs: the plain dialect, whose ints are uint32_t. */
static const struct aclpy_field loc_fields[] = {
	ACLPY_FIELD(aclrtMemLocation, id, UINT32_MAX, false),
	ACLPY_FIELD(aclrtMemLocation, type, UINT32_MAX, true),
};

ACLPY_STRUCT(loc_desc, plain, "expected a dict", "", loc_fields, NULL, NULL);

static const struct aclpy_field attr_fields[] = {
	ACLPY_SUB(aclrtMemcpyBatchAttr, dstLoc, true),
	ACLPY_SUB(aclrtMemcpyBatchAttr, srcLoc, true),
};

ACLPY_STRUCT(attr_desc, plain, "attribute must be a dict", "", attr_fields,
	     &loc_desc, NULL);

static const struct aclpy_field task_fields[] = {
	ACLPY_FIELD(aclrtBarrierCmoInfo, cmoType, UINT32_MAX, true),
	ACLPY_FIELD(aclrtBarrierCmoInfo, barrierId, UINT32_MAX, true),
};

ACLPY_STRUCT(task_desc, plain, "expected a dict", "", task_fields, NULL,
	     NULL);

/* obj converters (calls.h): any sequence, each refused under its name. */
#define LIST(name, item, desc, type)					\
	ACLPY_SEQ_CONV(name, #name " must be a list", false, item, desc, type)

LIST(dsts, conv_ptr, NULL, void *)
LIST(dest_maxs, conv_size, NULL, size_t)
LIST(srcs, conv_ptr, NULL, void *)
LIST(sizes, conv_size, NULL, size_t)
LIST(attrs, NULL, &attr_desc, aclrtMemcpyBatchAttr)

/*
 * objv converter: attrs_indexes, the last list.  numBatches is the length
 * of args[0] to [3] and numAttrs that of args[5] and this one.
 */
static int conv_attrs_indexes(PyObject *o, union aclpy_val *slot,
			      const union aclpy_val *args)
{
	if (!aclpy_seq(o, slot, "attrs_indexes must be a list", false,
		       conv_size, NULL, sizeof(size_t)))
		return 0;
	if (args[1].a.n != args[0].a.n || args[2].a.n != args[0].a.n ||
	    args[3].a.n != args[0].a.n || slot->a.n != args[5].a.n) {
		PyErr_SetString(PyExc_ValueError, "dsts, dest_maxs, srcs and "
				"sizes must have one length, attrs and "
				"attrs_indexes another");
		return 0;
	}
	return 1;
}

#define BATCH								\
	obj(conv_dsts), obj(conv_dest_maxs), obj(conv_srcs),		\
	obj(conv_sizes), n(0), obj(conv_attrs),				\
	objv(conv_attrs_indexes), n(5)

/* obj converter (calls.h): cmo_wait_barrier's task_info. */
static int conv_task_info(PyObject *info, union aclpy_val *slot)
{
	aclrtBarrierTaskInfo *ti;
	PyObject *fast;
	Py_ssize_t i, len;
	int ok = 1;

	fast = PySequence_Fast(info, "task_info must be a list");
	if (!fast)
		return 0;
	len = PySequence_Fast_GET_SIZE(fast);
	if (len > (Py_ssize_t)ACL_RT_CMO_MAX_BARRIER_NUM) {
		Py_DECREF(fast);
		PyErr_SetString(PyExc_ValueError, "task_info: at most 6 entries");
		return 0;
	}
	ti = aclpy_slot_alloc(slot, 1, sizeof(*ti));
	if (ti)
		ti->barrierNum = (size_t)len;
	for (i = 0; ti && ok && i < len; i++)
		ok = aclpy_read_struct(PySequence_Fast_GET_ITEM(fast, i),
				       &task_desc, &ti->cmoInfo[i]);
	Py_DECREF(fast);
	return ti && ok;
}

#define MEMORY_MORE_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	CALL(memcpy_batch, aclrtMemcpyBatch, (BATCH, out_z_init),	\
	     (.raw = true, .init = -1),					\
	     "fail_index, ret = memcpy_batch(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes)") \
	CALL(memcpy_batch_v2, aclrtMemcpyBatchV2, (BATCH), (),		\
	     "ret = memcpy_batch_v2(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes)") \
	CALL(memcpy_batch_async, aclrtMemcpyBatchAsync,			\
	     (BATCH, out_z_init, p), (.raw = true, .init = -1),		\
	     "fail_index, ret = memcpy_batch_async(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes, stream)") \
	CALL(memcpy_batch_async_v2, aclrtMemcpyBatchAsyncV2, (BATCH, p), (), \
	     "ret = memcpy_batch_async_v2(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes, stream)") \
	AUTO(aclrtMemcpyAsyncWithCondition)				\
	AUTO(aclrtCmoAsync)						\
	AUTO(aclrtCmoAsyncWithBarrier)					\
	CALL(cmo_wait_barrier, aclrtCmoWaitBarrier,			\
	     (obj(conv_task_info), p, u32), (),				\
	     "ret = cmo_wait_barrier(task_info, stream, flag)")		\
	CALL(cmo_get_desc_size, aclrtCmoGetDescSize, (out_n),		\
	     (.hold_gil = true), "size, ret = cmo_get_desc_size()")	\
	AUTO(aclrtCmoSetDesc)						\
	CALL(cmo_async_with_desc, aclrtCmoAsyncWithDesc, (p, i32, p, nul), \
	     (), "ret = cmo_async_with_desc(cmo_desc, cmo_type, stream)") \
	CALL(device_l2_cache_flush, aclrtDeviceL2CacheFlush, (nul), (),	\
	     "ret = device_l2_cache_flush()")

ACLPY_TABLE(aclpy_rt_memory_more_methods, MEMORY_MORE_CALLS)
