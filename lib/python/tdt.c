// SPDX-License-Identifier: MIT
/*
 * acl.tdt: TDT channels, datasets, data items and queues, as lib/README.md
 * documents them.  The GIL is released around the calls that may wait
 * (send, receive, enqueue, dequeue).
 */
#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "aclpy.h"

ACLPY_FN(get_dims_from_item)
{
	int64_t *d = NULL;
	PyObject *l;
	aclError ret;
	size_t n, i;
	void *it;

	if (!PyArg_ParseTuple(args, "O&:get_dims_from_item", conv_ptr, &it))
		return NULL;
	n = acltdtGetDimNumFromItem(it);
	if (n) {
		d = PyMem_Calloc(n, sizeof(*d));
		if (!d)
			return PyErr_NoMemory();
	}
	ret = acltdtGetDimsFromItem(it, d, n);
	if (ret)
		n = 0;
	l = PyList_New((Py_ssize_t)n);
	for (i = 0; l && i < n; i++) {
		PyObject *v = PyLong_FromLongLong(d[i]);

		if (!v)
			Py_CLEAR(l);
		else
			PyList_SET_ITEM(l, (Py_ssize_t)i, v);
	}
	PyMem_Free(d);
	return l ? Py_BuildValue("(Ni)", l, (int)ret) : NULL;
}

/* objn (calls.h): None or [] for none, NULL. */
static int conv_dims(PyObject *list, union aclpy_val *slot)
{
	if (list == Py_None)
		return 1;
	if (!aclpy_seq(list, slot, "dims must be a list of ints", true,
		       conv_i64, NULL, sizeof(int64_t)))
		return 0;
	if (!slot->a.n) {
		PyMem_Free(slot->a.p);
		slot->a.p = NULL;
	}
	return 1;
}

ACLPY_FN(set_queue_attr)
{
	const char *name;
	PyObject *value;
	aclError ret;
	uint32_t depth;
	int32_t type;
	void *attr;

	if (!PyArg_ParseTuple(args, "O&O&O:set_queue_attr", conv_ptr, &attr,
			      conv_i32, &type, &value))
		return NULL;
	if (type == ACL_TDT_QUEUE_NAME_PTR) {
		name = PyUnicode_AsUTF8(value);
		if (!name)
			return NULL;
		ret = acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR,
					 sizeof(name), &name);
	} else {
		if (!conv_u32(value, &depth))
			return NULL;
		ret = acltdtSetQueueAttr(attr, (acltdtQueueAttrType)type,
					 sizeof(depth), &depth);
	}
	return PyLong_FromLong(ret);
}

ACLPY_FN(get_queue_attr)
{
	union {
		const char *name;
		uint32_t depth;
	} v = { NULL };
	size_t got = 0;
	aclError ret;
	int32_t type;
	void *attr;

	if (!PyArg_ParseTuple(args, "O&O&:get_queue_attr", conv_ptr, &attr,
			      conv_i32, &type))
		return NULL;
	ret = acltdtGetQueueAttr(attr, (acltdtQueueAttrType)type, sizeof(v),
				 &got, &v);
	if (ret)
		return Py_BuildValue("(Oi)", Py_None, (int)ret);
	if (type == ACL_TDT_QUEUE_NAME_PTR)
		return Py_BuildValue("(si)", v.name, (int)ret);
	return Py_BuildValue("(Ii)", (unsigned int)v.depth, (int)ret);
}

#define TDT_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	VAL(create_channel, acltdtCreateChannel, (u32, s), ptr,		\
	    "handle = create_channel(device_id, name)")			\
	VAL(create_channel_with_capacity, acltdtCreateChannelWithCapacity, \
	    (u32, s, z), ptr,						\
	    "handle = create_channel_with_capacity(device_id, name, capacity)") \
	AUTO(acltdtStopChannel, .hold_gil = true)			\
	AUTO(acltdtDestroyChannel)					\
	AUTO(acltdtSendTensor)						\
	AUTO(acltdtReceiveTensor)					\
	AUTO(acltdtQueryChannelSize, .hold_gil = true)			\
	VAL(create_dataset, acltdtCreateDataset, (), ptr,		\
	    "dataset = create_dataset()")				\
	AUTO(acltdtDestroyDataset, .hold_gil = true)			\
	AUTO(acltdtAddDataItem, .hold_gil = true)			\
	VAL(get_data_item, acltdtGetDataItem, (p, z), ptr,		\
	    "data_item = get_data_item(dataset, index)")		\
	VAL(get_dataset_size, acltdtGetDatasetSize, (p), size,		\
	    "size = get_dataset_size(dataset)")				\
	VAL(get_dataset_name, acltdtGetDatasetName, (p), str,		\
	    "name = get_dataset_name(dataset)")				\
	VAL(create_data_item, acltdtCreateDataItem,			\
	    (i32, objn(conv_dims), i32, p, z), ptr,			\
	    "data_item = create_data_item(tdt_type, dims, data_type, data_ptr, size)") \
	AUTO(acltdtDestroyDataItem, .hold_gil = true)			\
	VAL(get_tensor_type_from_item, acltdtGetTensorTypeFromItem, (p), \
	    int, "tdt_type = get_tensor_type_from_item(data_item)")	\
	VAL(get_data_type_from_item, acltdtGetDataTypeFromItem, (p), int, \
	    "data_type = get_data_type_from_item(data_item)")		\
	VAL(get_data_addr_from_item, acltdtGetDataAddrFromItem, (p), ptr, \
	    "data_ptr = get_data_addr_from_item(data_item)")		\
	VAL(get_data_size_from_item, acltdtGetDataSizeFromItem, (p), size, \
	    "size = get_data_size_from_item(data_item)")		\
	VAL(get_dim_num_from_item, acltdtGetDimNumFromItem, (p), size,	\
	    "dim_num = get_dim_num_from_item(data_item)")		\
	HAND(get_dims_from_item, METH_VARARGS,				\
	     "dims, ret = get_dims_from_item(data_item)")		\
	VAL(create_queue_attr, acltdtCreateQueueAttr, (), ptr,		\
	    "attr = create_queue_attr()")				\
	AUTO(acltdtDestroyQueueAttr, .hold_gil = true)			\
	HAND(set_queue_attr, METH_VARARGS,				\
	     "ret = set_queue_attr(attr, type, value)")			\
	HAND(get_queue_attr, METH_VARARGS,				\
	     "value, ret = get_queue_attr(attr, type)")			\
	AUTO(acltdtCreateQueue)						\
	AUTO(acltdtDestroyQueue)					\
	AUTO(acltdtEnqueue)						\
	AUTO(acltdtDequeue)						\
	DOC(acltdtEnqueueData,						\
	    "ret = enqueue_data(qid, data_ptr, data_size, user_data_ptr, " \
	    "user_data_size, timeout, rsv)")				\
	DOC(acltdtDequeueData,						\
	    "ret_data_size, ret = dequeue_data(qid, data_ptr, data_size, " \
	    "user_data_ptr, user_data_size, timeout)", .raw = true)	\
	AUTO(acltdtGrantQueue, .hold_gil = true)			\
	AUTO(acltdtAttachQueue, .hold_gil = true)			\
	AUTO(acltdtAllocBuf)						\
	AUTO(acltdtFreeBuf)						\
	AUTO(acltdtGetBufData, .hold_gil = true)			\
	AUTO(acltdtSetBufDataLen, .hold_gil = true)			\
	AUTO(acltdtGetBufDataLen, .hold_gil = true)

ACLPY_TABLE(aclpy_tdt_methods, TDT_CALLS)
