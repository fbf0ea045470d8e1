// SPDX-License-Identifier: MIT
/*
 * CANN's TDT channels (acl/acl_tdt.h): data items, datasets and channels
 * between the program's own threads.
 *
 * A data item names its data (the caller's pointer, not a copy) and holds
 * a copy of its dims; only ACL_TENSOR_DATA_TENSOR items carry data, the
 * others (end of sequence, abnormal) carry a type alone, as in CANN.  A
 * dataset the program creates lists items it still owns: destroying the
 * dataset leaves them.  acltdtSendTensor copies every item, dims and data,
 * into one message, so the sender may free or reuse its buffers as soon
 * as the call returns; acltdtReceiveTensor fills an empty dataset (or one
 * a previous receive filled, whose items it frees first) with items the
 * dataset owns, freed by acltdtDestroyDataset.
 *
 * A channel is a tdt_fifo (tdt.h) of messages in this process: any thread
 * may send, any thread may receive, in FIFO order, whatever the device
 * id names.  CANN carries a channel's tensors between host and device;
 * here host threads play both ends.
 */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_tdt.h"
#include "args.h"
#include "log.h"
#include "tdt.h"

/* CANN's limits: a name of at most 128 bytes with its NUL, 128 dims. */
#define TDT_NAME_MAX	128
#define TDT_DIMS_MAX	128

struct acltdtDataItem {
	acltdtTensorType type;
	aclDataType dtype;
	int64_t *dims;
	size_t ndims;
	void *data;
	size_t size;
	bool owns_data;
};

struct acltdtDataset {
	acltdtDataItem **items;
	size_t n, cap;
	bool received;		/* items (and their data) are the dataset's */
};

struct acltdtChannelHandle {
	struct tdt_fifo fifo;
	uint32_t device;
	char name[TDT_NAME_MAX];
};

/* One send: copies of the dataset's items, data after the item array. */
struct tdt_msg {
	struct tdt_entry entry;
	size_t n;
	acltdtDataItem *items[];
};

static void item_free(acltdtDataItem *it)
{
	if (it->owns_data)
		free(it->data);
	free(it->dims);
	free(it);
}

static acltdtDataItem *item_new(acltdtTensorType type, const int64_t *dims,
				size_t ndims, aclDataType dtype)
{
	acltdtDataItem *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	it->type = type;
	it->dtype = dtype;
	if (ndims) {
		it->dims = malloc(ndims * sizeof(*dims));
		if (!it->dims) {
			free(it);
			return NULL;
		}
		memcpy(it->dims, dims, ndims * sizeof(*dims));
	}
	it->ndims = ndims;
	return it;
}

#define ITEM_GET(fn, type, field, bad)					\
type fn(const acltdtDataItem *dataItem)					\
{									\
	if (!dataItem) {						\
		aclmem_arg_null(#fn, "dataItem");			\
		return bad;						\
	}								\
	return dataItem->field;						\
}

ITEM_GET(acltdtGetTensorTypeFromItem, acltdtTensorType, type,
	 ACL_TENSOR_DATA_UNDEFINED)
ITEM_GET(acltdtGetDataTypeFromItem, aclDataType, dtype, ACL_DT_UNDEFINED)
ITEM_GET(acltdtGetDataAddrFromItem, void *, data, NULL)
ITEM_GET(acltdtGetDataSizeFromItem, size_t, size, 0)
ITEM_GET(acltdtGetDimNumFromItem, size_t, ndims, 0)

/* CANN's pairing of a dims pointer with its count. */
static int check_dims(const char *fn, const int64_t *dims, size_t n)
{
	if (!dims && n)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: dims is NULL but dimNum is %zu", fn, n);
	if (dims && !n)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: dims given with dimNum 0", fn);
	return ACL_SUCCESS;
}

aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims,
			       size_t dimNum)
{
	static const char fn[] = "acltdtGetDimsFromItem";
	int ret;

	if (!dataItem)
		return aclmem_arg_null(fn, "dataItem");
	ret = check_dims(fn, dims, dimNum);
	if (ret)
		return ret;
	if (dimNum < dataItem->ndims)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: dimNum %zu is less than the item's %zu dims",
				   fn, dimNum, dataItem->ndims);
	if (dataItem->ndims)
		memcpy(dims, dataItem->dims, dataItem->ndims * sizeof(*dims));
	return ACL_SUCCESS;
}

acltdtDataItem *acltdtCreateDataItem(acltdtTensorType tdtType,
				     const int64_t *dims, size_t dimNum,
				     aclDataType dataType, void *data,
				     size_t size)
{
	static const char fn[] = "acltdtCreateDataItem";
	acltdtDataItem *it;

	if (check_dims(fn, dims, dimNum))
		return NULL;
	if (dimNum > TDT_DIMS_MAX) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: dimNum %zu over %d",
			    fn, dimNum, TDT_DIMS_MAX);
		return NULL;
	}
	if (tdtType != ACL_TENSOR_DATA_TENSOR) {
		if (dims) {
			aclmem_fail(ACL_ERROR_INVALID_PARAM,
				    "%s: dims given for tdtType %d", fn, tdtType);
			return NULL;
		}
		/* CANN keeps neither data nor data type for these. */
		it = item_new(tdtType, NULL, 0, ACL_DT_UNDEFINED);
	} else {
		if (!data && size) {
			aclmem_fail(ACL_ERROR_INVALID_PARAM,
				    "%s: data is NULL but size is %zu", fn, size);
			return NULL;
		}
		it = item_new(tdtType, dims, dimNum, dataType);
		if (it) {
			it->data = data;
			it->size = size;
		}
	}
	if (!it)
		aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	return it;
}

aclError acltdtDestroyDataItem(acltdtDataItem *dataItem)
{
	if (!dataItem)
		return aclmem_arg_null("acltdtDestroyDataItem", "dataItem");
	item_free(dataItem);
	return ACL_SUCCESS;
}

acltdtDataset *acltdtCreateDataset(void)
{
	acltdtDataset *ds = calloc(1, sizeof(*ds));

	if (!ds)
		aclmem_fail(ACL_ERROR_BAD_ALLOC,
			    "acltdtCreateDataset: out of memory");
	return ds;
}

/* A received dataset's items are its own; a program's stay the program's. */
static void dataset_clear(acltdtDataset *ds)
{
	size_t i;

	if (ds->received)
		for (i = 0; i < ds->n; i++)
			item_free(ds->items[i]);
	free(ds->items);
	ds->items = NULL;
	ds->n = ds->cap = 0;
	ds->received = false;
}

aclError acltdtDestroyDataset(acltdtDataset *dataset)
{
	if (!dataset)
		return aclmem_arg_null("acltdtDestroyDataset", "dataset");
	dataset_clear(dataset);
	free(dataset);
	return ACL_SUCCESS;
}

acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)
{
	static const char fn[] = "acltdtGetDataItem";

	if (!dataset) {
		aclmem_arg_null(fn, "dataset");
		return NULL;
	}
	if (index >= dataset->n) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM,
			    "%s: index %zu, the dataset has %zu items", fn,
			    index, dataset->n);
		return NULL;
	}
	return dataset->items[index];
}

aclError acltdtAddDataItem(acltdtDataset *dataset, acltdtDataItem *dataItem)
{
	static const char fn[] = "acltdtAddDataItem";
	acltdtDataItem **items;

	if (!dataset)
		return aclmem_arg_null(fn, "dataset");
	if (!dataItem)
		return aclmem_arg_null(fn, "dataItem");
	if (dataset->received)
		return aclmem_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
				   "%s: the dataset holds received items", fn);
	if (dataset->n == dataset->cap) {
		size_t cap = dataset->cap ? 2 * dataset->cap : 4;

		items = realloc(dataset->items, cap * sizeof(*items));
		if (!items)
			return aclmem_fail(ACL_ERROR_BAD_ALLOC,
					   "%s: out of memory", fn);
		dataset->items = items;
		dataset->cap = cap;
	}
	dataset->items[dataset->n++] = dataItem;
	return ACL_SUCCESS;
}

size_t acltdtGetDatasetSize(const acltdtDataset *dataset)
{
	if (!dataset) {
		aclmem_arg_null("acltdtGetDatasetSize", "dataset");
		return 0;
	}
	return dataset->n;
}

/* Names come only with CANN's own device-side producers: always "". */
const char *acltdtGetDatasetName(const acltdtDataset *dataset)
{
	if (!dataset) {
		aclmem_arg_null("acltdtGetDatasetName", "dataset");
		return NULL;
	}
	return "";
}

/* ---- channels ---- */

static acltdtChannelHandle *channel_new(const char *fn, uint32_t deviceId,
					const char *name, size_t capacity)
{
	acltdtChannelHandle *ch;

	if (!name) {
		aclmem_arg_null(fn, "name");
		return NULL;
	}
	if (strlen(name) + 1 > TDT_NAME_MAX) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM,
			    "%s: name of %zu bytes, at most %d with its NUL", fn,
			    strlen(name) + 1, TDT_NAME_MAX);
		return NULL;
	}
	if (aclmem_arg_device(fn, deviceId))
		return NULL;
	if (!capacity || capacity > UINT32_MAX) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM,
			    "%s: capacity %zu, not 1 to %u", fn, capacity,
			    UINT32_MAX);
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
		return NULL;
	}
	tdt_fifo_init(&ch->fifo, capacity);
	ch->device = deviceId;
	strcpy(ch->name, name);
	return ch;
}

/* CANN's first channels had no capacity: bounded only by memory. */
acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name)
{
	return channel_new("acltdtCreateChannel", deviceId, name, UINT32_MAX);
}

acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId,
						     const char *name,
						     size_t capacity)
{
	return channel_new("acltdtCreateChannelWithCapacity", deviceId, name,
			   capacity);
}

aclError acltdtStopChannel(acltdtChannelHandle *handle)
{
	if (!handle)
		return aclmem_arg_null("acltdtStopChannel", "handle");
	tdt_fifo_stop(&handle->fifo);
	return ACL_SUCCESS;
}

aclError acltdtDestroyChannel(acltdtChannelHandle *handle)
{
	if (!handle)
		return aclmem_arg_null("acltdtDestroyChannel", "handle");
	tdt_fifo_destroy(&handle->fifo);
	free(handle);
	return ACL_SUCCESS;
}

static void msg_release(struct tdt_entry *e)
{
	struct tdt_msg *m = (struct tdt_msg *)e;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->items[i])
			item_free(m->items[i]);
	free(m);
}

/* A copy of src, data included, that the message owns. */
static acltdtDataItem *item_copy(const acltdtDataItem *src)
{
	acltdtDataItem *it = item_new(src->type, src->dims, src->ndims,
				      src->dtype);

	if (!it || !src->size)
		return it;
	it->data = malloc(src->size);
	if (!it->data) {
		item_free(it);
		return NULL;
	}
	memcpy(it->data, src->data, src->size);
	it->size = src->size;
	it->owns_data = true;
	return it;
}

/* What a send and a receive check first, in CANN's order. */
static int transfer_args(const char *fn, const void *handle,
			 const void *dataset, int32_t timeout)
{
	if (!handle)
		return aclmem_arg_null(fn, "handle");
	if (!dataset)
		return aclmem_arg_null(fn, "dataset");
	if (timeout < -1)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: timeout %d below -1", fn, timeout);
	return ACL_SUCCESS;
}

static bool sendable(acltdtTensorType t)
{
	return t == ACL_TENSOR_DATA_TENSOR ||
	       t == ACL_TENSOR_DATA_END_OF_SEQUENCE ||
	       t == ACL_TENSOR_DATA_ABNORMAL;
}

aclError acltdtSendTensor(const acltdtChannelHandle *handle,
			  const acltdtDataset *dataset, int32_t timeout)
{
	static const char fn[] = "acltdtSendTensor";
	acltdtChannelHandle *ch = (acltdtChannelHandle *)handle;
	struct tdt_msg *m;
	size_t i;
	int ret;

	ret = transfer_args(fn, handle, dataset, timeout);
	if (ret)
		return ret;
	if (!dataset->n)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: the dataset is empty", fn);
	for (i = 0; i < dataset->n; i++)
		if (!sendable(dataset->items[i]->type))
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: item %zu has tdtType %d", fn, i,
					   dataset->items[i]->type);
	m = calloc(1, sizeof(*m) + dataset->n * sizeof(m->items[0]));
	if (!m)
		return aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	m->entry.release = msg_release;
	m->n = dataset->n;
	for (i = 0; i < m->n; i++) {
		m->items[i] = item_copy(dataset->items[i]);
		if (!m->items[i]) {
			msg_release(&m->entry);
			return aclmem_fail(ACL_ERROR_BAD_ALLOC,
					   "%s: out of memory", fn);
		}
	}
	ret = tdt_fifo_push(&ch->fifo, &m->entry, timeout,
			    ACL_ERROR_RT_QUEUE_FULL);
	if (ret) {
		msg_release(&m->entry);
		if (ret == ACL_ERROR_RT_QUEUE_FULL)
			return aclmem_fail(ret, "%s: channel %s full", fn,
					   ch->name);
		return aclmem_fail(ret, "%s: channel %s stopped", fn, ch->name);
	}
	return ACL_SUCCESS;
}

aclError acltdtReceiveTensor(const acltdtChannelHandle *handle,
			     acltdtDataset *dataset, int32_t timeout)
{
	static const char fn[] = "acltdtReceiveTensor";
	acltdtChannelHandle *ch = (acltdtChannelHandle *)handle;
	struct tdt_entry *e;
	struct tdt_msg *m;
	size_t i;
	int ret;

	ret = transfer_args(fn, handle, dataset, timeout);
	if (ret)
		return ret;
	if (dataset->n && !dataset->received)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: the dataset already holds %zu items of the program's",
				   fn, dataset->n);
	ret = tdt_fifo_pop(&ch->fifo, &e, timeout, ACL_ERROR_RT_QUEUE_EMPTY,
			   NULL, NULL);
	if (ret == ACL_ERROR_RT_QUEUE_EMPTY)
		return aclmem_fail(ret, "%s: channel %s empty", fn, ch->name);
	if (ret)
		return aclmem_fail(ret, "%s: channel %s stopped", fn, ch->name);
	m = (struct tdt_msg *)e;
	dataset_clear(dataset);
	dataset->items = malloc(m->n * sizeof(*dataset->items));
	if (!dataset->items) {
		msg_release(e);
		return aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	}
	for (i = 0; i < m->n; i++) {
		dataset->items[i] = m->items[i];
		m->items[i] = NULL;
	}
	dataset->n = dataset->cap = m->n;
	dataset->received = true;
	free(m);
	return ACL_SUCCESS;
}

aclError acltdtQueryChannelSize(const acltdtChannelHandle *handle, size_t *size)
{
	static const char fn[] = "acltdtQueryChannelSize";

	if (!handle)
		return aclmem_arg_null(fn, "handle");
	if (!size)
		return aclmem_arg_null(fn, "size");
	*size = tdt_fifo_size(&((acltdtChannelHandle *)handle)->fifo);
	return ACL_SUCCESS;
}
