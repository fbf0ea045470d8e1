// SPDX-License-Identifier: MIT
/*
 * tdt_queue: a producer thread and a consumer thread, first through a TDT
 * channel of capacity 2 (datasets of one float tensor each, then an end of
 * sequence), then through a TDT queue of depth 4 (data with private user
 * data).  The producer reuses one buffer for every send: the channel and
 * the queue keep copies.  Prints "PASS tdt_queue" when every value came
 * through in order.
 */
#include <cstdio>
#include <cstring>
#include <thread>

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"

#define CHECK(call)							\
	do {								\
		aclError ret_ = (call);					\
		if (ret_ != ACL_SUCCESS) {				\
			std::printf("%s:%d: %s failed: %d\n", __FILE__,	\
				    __LINE__, #call, ret_);		\
			return 1;					\
		}							\
	} while (0)

static const int kCount = 32;
static const int kElems = 8;

static int produce_tensors(acltdtChannelHandle *ch)
{
	float buf[kElems];
	int64_t dims[2] = { 2, kElems / 2 };

	for (int i = 0; i < kCount; i++) {
		for (int k = 0; k < kElems; k++)
			buf[k] = static_cast<float>(i * kElems + k);
		acltdtDataset *ds = acltdtCreateDataset();
		acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2,
							  ACL_FLOAT, buf, sizeof(buf));
		if (ds == nullptr || it == nullptr)
			return 1;
		CHECK(acltdtAddDataItem(ds, it));
		CHECK(acltdtSendTensor(ch, ds, -1));
		CHECK(acltdtDestroyDataset(ds));
		CHECK(acltdtDestroyDataItem(it));
	}
	acltdtDataset *ds = acltdtCreateDataset();
	acltdtDataItem *end = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr,
						   0, ACL_DT_UNDEFINED, nullptr, 0);
	if (ds == nullptr || end == nullptr)
		return 1;
	CHECK(acltdtAddDataItem(ds, end));
	CHECK(acltdtSendTensor(ch, ds, -1));
	CHECK(acltdtDestroyDataset(ds));
	CHECK(acltdtDestroyDataItem(end));
	return 0;
}

/* One received tensor, checked; 0 when it is tensor number i. */
static int check_tensor(acltdtDataItem *it, int i)
{
	int64_t dims[2];

	CHECK(acltdtGetDimsFromItem(it, dims, 2));
	const float *p = static_cast<const float *>(acltdtGetDataAddrFromItem(it));
	if (dims[0] != 2 || dims[1] != kElems / 2 ||
	    acltdtGetDataSizeFromItem(it) != kElems * sizeof(float))
		return 1;
	for (int k = 0; k < kElems; k++)
		if (p[k] != static_cast<float>(i * kElems + k)) {
			std::printf("tensor %d: element %d is %g\n", i, k, p[k]);
			return 1;
		}
	return 0;
}

static int consume_tensors(acltdtChannelHandle *ch, int *got)
{
	acltdtDataset *ds = acltdtCreateDataset();
	int bad = 0;

	if (ds == nullptr)
		return 1;
	for (;;) {
		CHECK(acltdtReceiveTensor(ch, ds, -1));
		acltdtDataItem *it = acltdtGetDataItem(ds, 0);
		if (acltdtGetTensorTypeFromItem(it) == ACL_TENSOR_DATA_END_OF_SEQUENCE)
			break;
		/* A bad tensor is counted; the rest are still taken. */
		if (check_tensor(it, *got))
			bad = 1;
		(*got)++;
	}
	CHECK(acltdtDestroyDataset(ds));
	return bad;
}

static int produce_data(uint32_t qid)
{
	for (int i = 0; i < kCount; i++) {
		int32_t v = i * i;
		char tag[16];

		std::snprintf(tag, sizeof(tag), "item %d", i);
		CHECK(acltdtEnqueueData(qid, &v, sizeof(v), tag, sizeof(tag), -1, 0));
	}
	return 0;
}

static int consume_data(uint32_t qid, int *got)
{
	for (int i = 0; i < kCount; i++) {
		int32_t v = -1;
		char tag[16], want[16];
		size_t n = 0;

		CHECK(acltdtDequeueData(qid, &v, sizeof(v), &n, tag, sizeof(tag), -1));
		std::snprintf(want, sizeof(want), "item %d", i);
		/* A bad item is counted; the rest are still taken. */
		if (n != sizeof(v) || v != i * i || std::strcmp(tag, want) != 0) {
			std::printf("data %d: %d (%zu bytes), \"%s\"\n", i, v, n, tag);
			continue;
		}
		(*got)++;
	}
	return 0;
}

int main()
{
	int prod = 0, cons = 0, tensors = 0, datas = 0;

	CHECK(aclInit(nullptr));
	CHECK(aclrtSetDevice(0));

	acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "tdt_queue_sample", 2);
	if (ch == nullptr) {
		std::printf("acltdtCreateChannelWithCapacity failed\n");
		return 1;
	}
	std::thread producer([&] { prod = produce_tensors(ch); });
	std::thread consumer([&] { cons = consume_tensors(ch, &tensors); });
	producer.join();
	consumer.join();
	CHECK(acltdtDestroyChannel(ch));
	if (prod || cons || tensors != kCount) {
		std::printf("channel: %d of %d tensors\n", tensors, kCount);
		return 1;
	}
	std::printf("channel: %d tensors in order\n", tensors);

	acltdtQueueAttr *attr = acltdtCreateQueueAttr();
	const char *name = "tdt_queue_sample";
	uint32_t depth = 4, qid = 0;
	if (attr == nullptr)
		return 1;
	CHECK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(name), &name));
	CHECK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth), &depth));
	CHECK(acltdtCreateQueue(attr, &qid));
	CHECK(acltdtDestroyQueueAttr(attr));
	std::thread qprod([&] { prod = produce_data(qid); });
	std::thread qcons([&] { cons = consume_data(qid, &datas); });
	qprod.join();
	qcons.join();
	CHECK(acltdtDestroyQueue(qid));
	if (prod || cons || datas != kCount) {
		std::printf("queue: %d of %d items\n", datas, kCount);
		return 1;
	}
	std::printf("queue: %d items in order\n", datas);

	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	std::printf("PASS tdt_queue\n");
	return 0;
}
