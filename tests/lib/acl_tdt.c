// SPDX-License-Identifier: MIT
/*
 * TDT channels and queues (acl/acl_tdt.h, acl/acl_tdt_queue.h): every bad
 * argument's code; datasets sent through a channel come out in order,
 * whole and as they were when sent, though the sender changed its buffers
 * since; a full channel or queue blocks and times out with CANN's codes;
 * a stop or a destroy wakes a blocked receiver; queues carry buffers and
 * copies of data, with their private data, in order between threads.  A
 * fork()ed child has none of the parent's queues and never reuses a qid.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "acltest_device.h"
#include "nmtest_sys.h"
#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"

#define BADP	ACL_ERROR_INVALID_PARAM

START_TEST(item_and_dataset_args)
{
	int64_t dims[2] = { 2, 3 }, out[4];
	float data[6] = { 0 };
	acltdtDataItem *it, *eos;
	acltdtDataset *ds;

	/* dims and dimNum must agree; at most 128 dims; data with size. */
	ck_assert_ptr_null(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 2,
						ACL_FLOAT, data, sizeof(data)));
	ck_assert_ptr_null(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 0,
						ACL_FLOAT, data, sizeof(data)));
	ck_assert_ptr_null(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 129,
						ACL_FLOAT, data, sizeof(data)));
	ck_assert_ptr_null(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2,
						ACL_FLOAT, NULL, 4));
	ck_assert_int_eq(aclGetRecentErrMsg() != NULL, 1);
	/* Only a tensor has dims; the others keep no data. */
	ck_assert_ptr_null(acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE,
						dims, 2, ACL_FLOAT, NULL, 0));
	eos = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0,
				   ACL_FLOAT, data, sizeof(data));
	ck_assert_ptr_nonnull(eos);
	ck_assert_int_eq(acltdtGetTensorTypeFromItem(eos),
			 ACL_TENSOR_DATA_END_OF_SEQUENCE);
	ck_assert_int_eq(acltdtGetDataTypeFromItem(eos), ACL_DT_UNDEFINED);
	ck_assert_ptr_null(acltdtGetDataAddrFromItem(eos));
	ck_assert_uint_eq(acltdtGetDataSizeFromItem(eos), 0);

	it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT,
				  data, sizeof(data));
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(acltdtGetTensorTypeFromItem(NULL),
			 ACL_TENSOR_DATA_UNDEFINED);
	ck_assert_int_eq(acltdtGetDataTypeFromItem(NULL), ACL_DT_UNDEFINED);
	ck_assert_ptr_null(acltdtGetDataAddrFromItem(NULL));
	ck_assert_uint_eq(acltdtGetDataSizeFromItem(NULL), 0);
	ck_assert_uint_eq(acltdtGetDimNumFromItem(NULL), 0);
	ck_assert_int_eq(acltdtGetDimsFromItem(NULL, out, 4), BADP);
	ck_assert_int_eq(acltdtGetDimsFromItem(it, NULL, 2), BADP);
	ck_assert_int_eq(acltdtGetDimsFromItem(it, out, 0), BADP);
	ck_assert_int_eq(acltdtGetDimsFromItem(it, out, 1), BADP);
	ck_assert_int_eq(acltdtGetDimsFromItem(it, NULL, 0), BADP);
	ck_assert_int_eq(acltdtGetDimsFromItem(it, out, 4), 0);
	ck_assert_int_eq(out[0], 2);
	ck_assert_int_eq(out[1], 3);
	ck_assert_int_eq(acltdtGetDimsFromItem(eos, NULL, 0), 0);
	ck_assert_ptr_eq(acltdtGetDataAddrFromItem(it), data);
	ck_assert_uint_eq(acltdtGetDimNumFromItem(it), 2);
	ck_assert_int_eq(acltdtDestroyDataItem(NULL), BADP);

	ds = acltdtCreateDataset();
	ck_assert_ptr_nonnull(ds);
	ck_assert_int_eq(acltdtAddDataItem(NULL, it), BADP);
	ck_assert_int_eq(acltdtAddDataItem(ds, NULL), BADP);
	ck_assert_ptr_null(acltdtGetDataItem(NULL, 0));
	ck_assert_ptr_null(acltdtGetDataItem(ds, 0));
	ck_assert_uint_eq(acltdtGetDatasetSize(NULL), 0);
	ck_assert_ptr_null(acltdtGetDatasetName(NULL));
	ck_assert_str_eq(acltdtGetDatasetName(ds), "");
	ck_assert_int_eq(acltdtAddDataItem(ds, it), 0);
	ck_assert_int_eq(acltdtAddDataItem(ds, eos), 0);
	ck_assert_uint_eq(acltdtGetDatasetSize(ds), 2);
	ck_assert_ptr_eq(acltdtGetDataItem(ds, 1), eos);
	ck_assert_ptr_null(acltdtGetDataItem(ds, 2));
	ck_assert_int_eq(acltdtDestroyDataset(NULL), BADP);
	/* The program's items outlive its dataset. */
	ck_assert_int_eq(acltdtDestroyDataset(ds), 0);
	ck_assert_uint_eq(acltdtGetDimNumFromItem(it), 2);
	ck_assert_int_eq(acltdtDestroyDataItem(it), 0);
	ck_assert_int_eq(acltdtDestroyDataItem(eos), 0);
}
END_TEST

/* A dataset of one tensor item over data, and its item in *it. */
static acltdtDataset *one_item(void *data, size_t size, const int64_t *dims,
			       size_t n, acltdtDataItem **it)
{
	acltdtDataset *ds = acltdtCreateDataset();

	ck_assert_ptr_nonnull(ds);
	*it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, n, ACL_INT32,
				   data, size);
	ck_assert_ptr_nonnull(*it);
	ck_assert_int_eq(acltdtAddDataItem(ds, *it), 0);
	return ds;
}

static void drop(acltdtDataset *ds, acltdtDataItem *it)
{
	ck_assert_int_eq(acltdtDestroyDataset(ds), 0);
	ck_assert_int_eq(acltdtDestroyDataItem(it), 0);
}

START_TEST(channel_args)
{
	char name[130];
	int32_t v = 7;
	int64_t d = 1;
	acltdtChannelHandle *ch;
	acltdtDataItem *it, *bad;
	acltdtDataset *ds, *empty, *rx;
	size_t n;

	memset(name, 'c', sizeof(name));
	name[128] = '\0';	/* 129 bytes with the NUL: one too many */
	ck_assert_ptr_null(acltdtCreateChannel(0, NULL));
	ck_assert_ptr_null(acltdtCreateChannel(0, name));
	ck_assert_ptr_null(acltdtCreateChannel(acltest_device_count(), "c"));
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_ptr_null(acltdtCreateChannelWithCapacity(0, "c", 0));
	ck_assert_ptr_null(acltdtCreateChannelWithCapacity(0, NULL, 2));
	name[127] = '\0';	/* 128: the most CANN takes */
	ch = acltdtCreateChannelWithCapacity(0, name, 2);
	ck_assert_ptr_nonnull(ch);

	ds = one_item(&v, sizeof(v), &d, 1, &it);
	empty = acltdtCreateDataset();
	rx = acltdtCreateDataset();
	ck_assert_int_eq(acltdtSendTensor(NULL, ds, 0), BADP);
	ck_assert_int_eq(acltdtSendTensor(ch, NULL, 0), BADP);
	ck_assert_int_eq(acltdtSendTensor(ch, empty, 0), BADP);
	ck_assert_int_eq(acltdtSendTensor(ch, ds, -2), BADP);
	bad = acltdtCreateDataItem(ACL_TENSOR_DATA_SLICE_TENSOR, NULL, 0,
				   ACL_INT32, NULL, 0);
	ck_assert_int_eq(acltdtAddDataItem(empty, bad), 0);
	ck_assert_int_eq(acltdtSendTensor(ch, empty, 0), BADP);
	ck_assert_int_eq(acltdtReceiveTensor(NULL, rx, 0), BADP);
	ck_assert_int_eq(acltdtReceiveTensor(ch, NULL, 0), BADP);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, -5), BADP);
	ck_assert_int_eq(acltdtQueryChannelSize(NULL, &n), BADP);
	ck_assert_int_eq(acltdtQueryChannelSize(ch, NULL), BADP);
	ck_assert_int_eq(acltdtStopChannel(NULL), BADP);
	ck_assert_int_eq(acltdtDestroyChannel(NULL), BADP);

	/* Nothing sent so far; a receive needs an empty dataset. */
	ck_assert_int_eq(acltdtQueryChannelSize(ch, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(acltdtSendTensor(ch, ds, 0), 0);
	ck_assert_int_eq(acltdtReceiveTensor(ch, ds, 0), BADP);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, 0), 0);
	/* A received dataset takes no items of the program's. */
	ck_assert_int_eq(acltdtAddDataItem(rx, it), ACL_ERROR_FEATURE_UNSUPPORTED);

	drop(ds, it);
	drop(empty, bad);
	ck_assert_int_eq(acltdtDestroyDataset(rx), 0);
	ck_assert_int_eq(acltdtDestroyChannel(ch), 0);
}
END_TEST

#define NSEND 3

START_TEST(channel_fifo_copies)
{
	int64_t dims[NSEND][3] = { { 4 }, { 2, 2 }, { 1, 2, 2 } };
	acltdtDataItem *items[NSEND], *eos, *got;
	acltdtDataset *ds[NSEND], *rx;
	acltdtChannelHandle *ch;
	int32_t *buf[NSEND], *p;
	int64_t out[3];
	size_t i, k, n;

	ch = acltdtCreateChannelWithCapacity(0, "fifo", NSEND);
	ck_assert_ptr_nonnull(ch);
	for (i = 0; i < NSEND; i++) {
		buf[i] = malloc(4 * sizeof(int32_t));
		for (k = 0; k < 4; k++)
			buf[i][k] = (int32_t)(100 * i + k);
		ds[i] = one_item(buf[i], 4 * sizeof(int32_t), dims[i], i + 1,
				 &items[i]);
	}
	eos = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0,
				   ACL_DT_UNDEFINED, NULL, 0);
	ck_assert_int_eq(acltdtAddDataItem(ds[NSEND - 1], eos), 0);
	for (i = 0; i < NSEND; i++) {
		ck_assert_int_eq(acltdtSendTensor(ch, ds[i], -1), 0);
		/* The sender's buffer is its own again at once. */
		memset(buf[i], 0xee, 4 * sizeof(int32_t));
		ck_assert_int_eq(acltdtQueryChannelSize(ch, &n), 0);
		ck_assert_uint_eq(n, i + 1);
	}
	rx = acltdtCreateDataset();
	for (i = 0; i < NSEND; i++) {
		ck_assert_int_eq(acltdtReceiveTensor(ch, rx, 1000), 0);
		ck_assert_uint_eq(acltdtGetDatasetSize(rx), i == NSEND - 1 ? 2 : 1);
		got = acltdtGetDataItem(rx, 0);
		ck_assert_int_eq(acltdtGetTensorTypeFromItem(got),
				 ACL_TENSOR_DATA_TENSOR);
		ck_assert_int_eq(acltdtGetDataTypeFromItem(got), ACL_INT32);
		ck_assert_uint_eq(acltdtGetDataSizeFromItem(got),
				  4 * sizeof(int32_t));
		ck_assert_uint_eq(acltdtGetDimNumFromItem(got), i + 1);
		ck_assert_int_eq(acltdtGetDimsFromItem(got, out, 3), 0);
		ck_assert_mem_eq(out, dims[i], (i + 1) * sizeof(int64_t));
		p = acltdtGetDataAddrFromItem(got);
		ck_assert_ptr_ne(p, buf[i]);
		for (k = 0; k < 4; k++)
			ck_assert_int_eq(p[k], (int32_t)(100 * i + k));
	}
	got = acltdtGetDataItem(rx, 1);
	ck_assert_int_eq(acltdtGetTensorTypeFromItem(got),
			 ACL_TENSOR_DATA_END_OF_SEQUENCE);
	ck_assert_int_eq(acltdtQueryChannelSize(ch, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, 0), ACL_ERROR_RT_QUEUE_EMPTY);
	ck_assert_int_eq(acltdtDestroyDataset(rx), 0);
	for (i = 0; i < NSEND; i++) {
		drop(ds[i], items[i]);
		free(buf[i]);
	}
	ck_assert_int_eq(acltdtDestroyDataItem(eos), 0);
	/* What nobody received is freed with the channel. */
	ds[0] = one_item(&n, sizeof(int32_t), NULL, 0, &items[0]);
	ck_assert_int_eq(acltdtSendTensor(ch, ds[0], 0), 0);
	drop(ds[0], items[0]);
	ck_assert_int_eq(acltdtDestroyChannel(ch), 0);
}
END_TEST

struct sender {
	acltdtChannelHandle *ch;
	acltdtDataset *ds;
	int32_t timeout;
	int ret;
	volatile pid_t tid;
};

/*
 * Wait until thread tid sleeps (state S in /proc): blocked in the call it
 * was started for, since it makes no other call that sleeps.  Polls, up to
 * a minute: the event, not a fixed time.
 */
static void wait_asleep(volatile pid_t *tid)
{
	char path[64], buf[512], *p;
	int i;

	for (i = 0; i < 60000; i++) {
		FILE *f;

		if (*tid) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/stat",
				 (int)*tid);
			f = fopen(path, "r");
			ck_assert_ptr_nonnull(f);
			p = fgets(buf, sizeof(buf), f);
			fclose(f);
			ck_assert_ptr_nonnull(p);
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				return;
		}
		usleep(1000);
	}
	ck_abort_msg("thread %d never blocked", (int)*tid);
}

static void *send_thread(void *arg)
{
	struct sender *s = arg;

	s->ret = acltdtSendTensor(s->ch, s->ds, s->timeout);
	return NULL;
}

static void *receive_thread(void *arg)
{
	struct sender *s = arg;

	s->tid = (pid_t)syscall(SYS_gettid);
	s->ret = acltdtReceiveTensor(s->ch, s->ds, s->timeout);
	return NULL;
}

static int32_t received_value(acltdtDataset *rx)
{
	return *(int32_t *)acltdtGetDataAddrFromItem(acltdtGetDataItem(rx, 0));
}

START_TEST(channel_capacity_blocks)
{
	acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "cap", 2);
	acltdtDataItem *it;
	acltdtDataset *ds, *rx = acltdtCreateDataset();
	struct sender s;
	pthread_t t;
	int32_t v = 1;
	double t0;

	ds = one_item(&v, sizeof(v), NULL, 0, &it);
	ck_assert_int_eq(acltdtSendTensor(ch, ds, 0), 0);
	v = 2;
	ck_assert_int_eq(acltdtSendTensor(ch, ds, 0), 0);
	v = 3;
	ck_assert_int_eq(acltdtSendTensor(ch, ds, 0), ACL_ERROR_RT_QUEUE_FULL);
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_QUEUE_FULL);
	t0 = nm_now();
	ck_assert_int_eq(acltdtSendTensor(ch, ds, 50), ACL_ERROR_RT_QUEUE_FULL);
	ck_assert_double_ge(nm_now() - t0, 0.050);

	/* A sender waiting for ever goes on once a receive makes room. */
	s = (struct sender){ ch, ds, -1, -1, 0 };
	ck_assert_int_eq(pthread_create(&t, NULL, send_thread, &s), 0);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, -1), 0);
	ck_assert_int_eq(received_value(rx), 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(s.ret, 0);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, -1), 0);
	ck_assert_int_eq(received_value(rx), 2);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, -1), 0);
	ck_assert_int_eq(received_value(rx), 3);
	t0 = nm_now();
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, 30),
			 ACL_ERROR_RT_QUEUE_EMPTY);
	ck_assert_double_ge(nm_now() - t0, 0.030);
	drop(ds, it);
	ck_assert_int_eq(acltdtDestroyDataset(rx), 0);
	ck_assert_int_eq(acltdtDestroyChannel(ch), 0);
}
END_TEST

START_TEST(channel_stop_wakes)
{
	acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "stop", 1);
	acltdtDataset *rx = acltdtCreateDataset(), *ds;
	acltdtDataItem *it;
	struct sender s = { ch, rx, -1, -1, 0 };
	pthread_t t;
	int32_t v = 9;

	ck_assert_int_eq(pthread_create(&t, NULL, receive_thread, &s), 0);
	wait_asleep(&s.tid);
	ck_assert_int_eq(acltdtStopChannel(ch), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(s.ret, ACL_ERROR_FAILURE);
	ds = one_item(&v, sizeof(v), NULL, 0, &it);
	ck_assert_int_eq(acltdtSendTensor(ch, ds, -1), ACL_ERROR_FAILURE);
	ck_assert_int_eq(acltdtReceiveTensor(ch, rx, 0), ACL_ERROR_FAILURE);
	ck_assert_int_eq(acltdtDestroyChannel(ch), 0);

	/* Destroying a channel wakes its blocked receiver too. */
	ch = acltdtCreateChannelWithCapacity(0, "destroy", 1);
	s = (struct sender){ ch, rx, -1, -1, 0 };
	ck_assert_int_eq(pthread_create(&t, NULL, receive_thread, &s), 0);
	wait_asleep(&s.tid);
	ck_assert_int_eq(acltdtDestroyChannel(ch), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(s.ret, ACL_ERROR_FAILURE);
	drop(ds, it);
	ck_assert_int_eq(acltdtDestroyDataset(rx), 0);
}
END_TEST

static uint32_t new_queue(uint32_t depth)
{
	acltdtQueueAttr *a = acltdtCreateQueueAttr();
	const char *name = "q";
	uint32_t qid;

	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(name), &name), 0);
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32,
					    sizeof(depth), &depth), 0);
	ck_assert_int_eq(acltdtCreateQueue(a, &qid), 0);
	ck_assert_int_eq(acltdtDestroyQueueAttr(a), 0);
	return qid;
}

START_TEST(queue_attr_args)
{
	acltdtQueueAttr *a = acltdtCreateQueueAttr();
	char longname[200];
	const char *name = longname, *got = NULL, *none = NULL;
	uint32_t depth = 1, qid;
	size_t len = 0;

	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32,
					    sizeof(depth), &len, &depth), 0);
	ck_assert_uint_eq(depth, 8);
	ck_assert_uint_eq(len, sizeof(uint32_t));
	memset(longname, 'n', sizeof(longname));
	longname[128] = '\0';
	ck_assert_int_eq(acltdtSetQueueAttr(NULL, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(name), &name), BADP);
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(name), NULL), BADP);
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(name), &name), BADP);
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(none), &none), BADP);
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, 4,
					    &name), BADP);
	ck_assert_int_eq(acltdtSetQueueAttr(a, (acltdtQueueAttrType)2,
					    sizeof(depth), &depth), BADP);
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 8,
					    &depth), BADP);
	longname[127] = '\0';
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(name), &name), 0);
	ck_assert_int_eq(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(got), &len, &got), 0);
	ck_assert_str_eq(got, longname);
	ck_assert_ptr_ne(got, longname);
	ck_assert_uint_eq(len, sizeof(char *));
	ck_assert_int_eq(acltdtGetQueueAttr(NULL, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(got), &len, &got), BADP);
	ck_assert_int_eq(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(got), NULL, &got), BADP);
	ck_assert_int_eq(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    sizeof(got), &len, NULL), BADP);
	ck_assert_int_eq(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR,
					    4, &len, &got), BADP);
	ck_assert_int_eq(acltdtGetQueueAttr(a, (acltdtQueueAttrType)7,
					    8, &len, &got), BADP);

	depth = 1;
	ck_assert_int_eq(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32,
					    sizeof(depth), &depth), 0);
	ck_assert_int_eq(acltdtCreateQueue(a, NULL), BADP);
	ck_assert_int_eq(acltdtCreateQueue(a, &qid), BADP);
	ck_assert_int_eq(acltdtDestroyQueueAttr(NULL), BADP);
	ck_assert_int_eq(acltdtDestroyQueueAttr(a), 0);
	/* No attributes: CANN's defaults, depth 8. */
	ck_assert_int_eq(acltdtCreateQueue(NULL, &qid), 0);
	for (depth = 0; depth < 8; depth++)
		ck_assert_int_eq(acltdtEnqueueData(qid, &depth, sizeof(depth),
						   NULL, 0, 0, 0), 0);
	ck_assert_int_eq(acltdtEnqueueData(qid, &depth, sizeof(depth), NULL, 0,
					   0, 0), ACL_ERROR_RT_QUEUE_FULL);
	ck_assert_int_eq(acltdtDestroyQueue(qid), 0);
	ck_assert_int_eq(acltdtDestroyQueue(qid), BADP);
	ck_assert_int_eq(acltdtGrantQueue(qid, 1, ACL_TDT_QUEUE_PERMISSION_ENQUEUE,
					  0), ACL_ERROR_FEATURE_UNSUPPORTED);
	ck_assert_int_eq(acltdtAttachQueue(qid, 0, &depth),
			 ACL_ERROR_FEATURE_UNSUPPORTED);
}
END_TEST

START_TEST(queue_data_and_bufs)
{
	uint32_t qid = new_queue(2), gone = new_queue(2);
	char user[96], uout[96], data[16], small[4];
	acltdtBuf b = NULL, b2 = NULL;
	size_t n = 0, len;
	void *p;

	ck_assert_int_eq(acltdtDestroyQueue(gone), 0);
	memset(user, 'u', sizeof(user));
	ck_assert_int_eq(acltdtEnqueueData(qid, NULL, 4, NULL, 0, 0, 0), BADP);
	ck_assert_int_eq(acltdtEnqueueData(qid, "abcd", 0, NULL, 0, 0, 0), BADP);
	ck_assert_int_eq(acltdtEnqueueData(qid, "abcd", 4, NULL, 4, 0, 0), BADP);
	ck_assert_int_eq(acltdtEnqueueData(qid, "abcd", 4, user, 97, 0, 0), BADP);
	ck_assert_int_eq(acltdtEnqueueData(qid, "abcd", 4, NULL, 0, -2, 0), BADP);
	ck_assert_int_eq(acltdtEnqueueData(gone, "abcd", 4, NULL, 0, 0, 0), BADP);
	ck_assert_int_eq(acltdtDequeueData(qid, NULL, 4, &n, NULL, 0, 0), BADP);
	ck_assert_int_eq(acltdtDequeueData(qid, data, 4, NULL, NULL, 0, 0), BADP);
	ck_assert_int_eq(acltdtDequeueData(qid, data, 0, &n, NULL, 0, 0), BADP);
	ck_assert_int_eq(acltdtDequeueData(qid, data, 4, &n, NULL, 8, 0), BADP);
	ck_assert_int_eq(acltdtDequeueData(gone, data, 4, &n, NULL, 0, 0), BADP);
	ck_assert_int_eq(acltdtDequeueData(qid, data, 4, &n, NULL, 0, 0),
			 ACL_ERROR_RT_QUEUE_EMPTY);

	ck_assert_int_eq(acltdtEnqueueData(qid, "0123456789", 10, user, 96, 0, 0), 0);
	ck_assert_int_eq(acltdtEnqueueData(qid, "xy", 2, NULL, 0, 0, 0), 0);
	/* Too small a buffer: the size is told, the data stays queued. */
	ck_assert_int_eq(acltdtDequeueData(qid, small, sizeof(small), &n, NULL,
					   0, 0), BADP);
	ck_assert_uint_eq(n, 10);
	ck_assert_int_eq(acltdtDequeueData(qid, data, sizeof(data), &n, uout,
					   sizeof(uout), -1), 0);
	ck_assert_uint_eq(n, 10);
	ck_assert_mem_eq(data, "0123456789", 10);
	ck_assert_mem_eq(uout, user, sizeof(user));
	/* The second, as a buffer. */
	ck_assert_int_eq(acltdtDequeue(qid, NULL, 0), BADP);
	ck_assert_int_eq(acltdtDequeue(gone, &b, 0), BADP);
	ck_assert_int_eq(acltdtDequeue(qid, &b, 0), 0);
	ck_assert_int_eq(acltdtGetBufData(b, &p, &len), 0);
	ck_assert_uint_eq(len, 2);
	ck_assert_mem_eq(p, "xy", 2);
	ck_assert_int_eq(acltdtFreeBuf(b), 0);

	ck_assert_int_eq(acltdtAllocBuf(16, 2, &b), BADP);
	ck_assert_int_eq(acltdtAllocBuf(16, ACL_TDT_NORMAL_MEM, NULL), BADP);
	ck_assert_int_eq(acltdtAllocBuf(0, ACL_TDT_NORMAL_MEM, &b), BADP);
	ck_assert_int_eq(acltdtAllocBuf(16, ACL_TDT_DVPP_MEM, &b), 0);
	ck_assert_int_eq(acltdtGetBufData(NULL, &p, &len), BADP);
	ck_assert_int_eq(acltdtGetBufData(b, NULL, &len), BADP);
	ck_assert_int_eq(acltdtGetBufData(b, &p, NULL), BADP);
	ck_assert_int_eq(acltdtGetBufData(b, &p, &len), 0);
	ck_assert_uint_eq(len, 16);
	memcpy(p, "hello, queue!!!!", 16);
	ck_assert_int_eq(acltdtGetBufDataLen(b, &len), 0);
	ck_assert_uint_eq(len, 16);
	ck_assert_int_eq(acltdtSetBufDataLen(NULL, 5), BADP);
	ck_assert_int_eq(acltdtSetBufDataLen(b, 17), BADP);
	ck_assert_int_eq(acltdtSetBufDataLen(b, 5), 0);
	ck_assert_int_eq(acltdtGetBufDataLen(NULL, &len), BADP);
	ck_assert_int_eq(acltdtGetBufDataLen(b, NULL), BADP);
	ck_assert_int_eq(acltdtSetBufUserData(b, "ud", 2, 95), BADP);
	ck_assert_int_eq(acltdtSetBufUserData(b, NULL, 2, 0), BADP);
	ck_assert_int_eq(acltdtSetBufUserData(NULL, "ud", 2, 0), BADP);
	ck_assert_int_eq(acltdtSetBufUserData(b, "ud", 2, 94), 0);
	ck_assert_int_eq(acltdtGetBufUserData(b, uout, 97, 0), BADP);
	ck_assert_int_eq(acltdtEnqueue(qid, NULL, 0), BADP);
	ck_assert_int_eq(acltdtEnqueue(gone, b, 0), BADP);
	ck_assert_int_eq(acltdtEnqueue(qid, b, 0), 0);
	/* Out as data: the data length, the private area. */
	ck_assert_int_eq(acltdtDequeueData(qid, data, sizeof(data), &n, uout,
					   96, 0), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_mem_eq(data, "hello", 5);
	ck_assert_mem_eq(uout + 94, "ud", 2);
	ck_assert_int_eq(acltdtFreeBuf(NULL), BADP);

	/* A buffer left queued goes with its queue. */
	ck_assert_int_eq(acltdtAllocBuf(8, ACL_TDT_NORMAL_MEM, &b2), 0);
	ck_assert_int_eq(acltdtEnqueue(qid, b2, -1), 0);
	ck_assert_int_eq(acltdtDestroyQueue(qid), 0);
}
END_TEST

#define NPASS 500

struct pass {
	uint32_t qid;
	int ret;
	volatile pid_t tid;
};

static void *producer(void *arg)
{
	struct pass *p = arg;
	uint32_t i;

	for (i = 0; i < NPASS && !p->ret; i++)
		p->ret = acltdtEnqueueData(p->qid, &i, sizeof(i), &i, sizeof(i),
					   -1, 0);
	return NULL;
}

static void *blocked_dequeue(void *arg)
{
	struct pass *p = arg;
	uint32_t v;
	size_t n;

	p->tid = (pid_t)syscall(SYS_gettid);
	p->ret = acltdtDequeueData(p->qid, &v, sizeof(v), &n, NULL, 0, -1);
	return NULL;
}

static int queue_fork_child(int rfd, void *arg)
{
	uint32_t qid = *(uint32_t *)arg, mine = 0;
	char data[8];
	size_t n = 0;

	(void)rfd;
	/* No device state came along: set it, so only the qid is at fault. */
	if (aclrtSetDevice(0))
		return 9;
	if (acltdtEnqueueData(qid, "child", 5, NULL, 0, 0, 0) != BADP)
		return 10;
	if (acltdtDequeueData(qid, data, sizeof(data), &n, NULL, 0, 0) != BADP)
		return 11;
	if (acltdtDestroyQueue(qid) != BADP)
		return 12;
	if (acltdtCreateQueue(NULL, &mine) || mine <= qid)
		return 13;
	if (acltdtEnqueueData(mine, "child", 5, NULL, 0, 0, 0) ||
	    acltdtDestroyQueue(mine))
		return 14;
	if (aclrtResetDevice(0))
		return 15;
	return 0;
}

START_TEST(queue_not_inherited)
{
	uint32_t qid = new_queue(2);
	char data[8];
	size_t n = 0;

	ck_assert_int_eq(acltdtEnqueueData(qid, "parent", 6, NULL, 0, 0, 0), 0);
	ck_assert_int_eq(acltest_reap(acltest_spawn(queue_fork_child, &qid, NULL)), 0);
	/* The parent's queue holds what it held. */
	ck_assert_int_eq(acltdtDequeueData(qid, data, sizeof(data), &n, NULL, 0, 0), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_mem_eq(data, "parent", 6);
	ck_assert_int_eq(acltdtDequeueData(qid, data, sizeof(data), &n, NULL, 0, 0),
			 ACL_ERROR_RT_QUEUE_EMPTY);
	ck_assert_int_eq(acltdtDestroyQueue(qid), 0);
}
END_TEST

START_TEST(queue_between_threads)
{
	struct pass p = { new_queue(2), 0, 0 };
	uint32_t i, v, u;
	pthread_t t;
	size_t n;

	ck_assert_int_eq(pthread_create(&t, NULL, producer, &p), 0);
	for (i = 0; i < NPASS; i++) {
		ck_assert_int_eq(acltdtDequeueData(p.qid, &v, sizeof(v), &n, &u,
						   sizeof(u), -1), 0);
		ck_assert_uint_eq(v, i);
		ck_assert_uint_eq(u, i);
	}
	pthread_join(t, NULL);
	ck_assert_int_eq(p.ret, 0);
	ck_assert_int_eq(acltdtDequeueData(p.qid, &v, sizeof(v), &n, NULL, 0,
					   20), ACL_ERROR_RT_QUEUE_EMPTY);

	/* Destroying the queue wakes a blocked consumer. */
	p.ret = 0;
	ck_assert_int_eq(pthread_create(&t, NULL, blocked_dequeue, &p), 0);
	wait_asleep(&p.tid);
	ck_assert_int_eq(acltdtDestroyQueue(p.qid), 0);
	pthread_join(t, NULL);
	ck_assert_int_ne(p.ret, 0);
	ck_assert_int_ne(p.ret, ACL_ERROR_RT_QUEUE_EMPTY);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_tdt");

	acltest_require_device();
	nm_add_fx(s, item_and_dataset_args, 30, &acltest_device);
	nm_add_fx(s, channel_args, 30, &acltest_device);
	nm_add_fx(s, channel_fifo_copies, 30, &acltest_device);
	nm_add_fx(s, channel_capacity_blocks, 30, &acltest_device);
	nm_add_fx(s, channel_stop_wakes, 30, &acltest_device);
	nm_add_fx(s, queue_attr_args, 30, &acltest_device);
	nm_add_fx(s, queue_data_and_bufs, 30, &acltest_device);
	nm_add_fx(s, queue_between_threads, 60, &acltest_device);
	nm_add_fx(s, queue_not_inherited, 30, &acltest_device);
	return acltest_run(s);
}
