/* SPDX-License-Identifier: MIT */
/*
 * A program written only against the public ACL headers, the way CANN
 * applications are: compiled by tests/host/acl_headers.c as C99 and C11
 * with -pedantic, and as C++11, and linked against libaclmem.  It uses
 * every declared call, type and constant so a signature that drifts from
 * what programs expect breaks the build.
 */
#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "acl/ops/acl_dvpp.h"

#ifdef __cplusplus
#include <cstdio>
#else
#include <stdio.h>
#endif

static int use_constants(void)
{
	static const int policies[] = {
		ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY,
		ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEM_MALLOC_HUGE_FIRST_P2P,
		ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
		ACL_MEM_MALLOC_HUGE1G_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
		ACL_MEM_TYPE_LOW_BAND_WIDTH, ACL_MEM_TYPE_HIGH_BAND_WIDTH,
		ACL_MEM_ACCESS_USER_SPACE_READONLY,
	};
	aclError errs[4];

	errs[0] = ACL_ERROR_INVALID_PARAM;
	errs[1] = ACL_ERROR_RT_CONTEXT_NULL;
	errs[2] = ACL_ERROR_RT_MEMORY_ALLOCATION;
	errs[3] = ACL_SUCCESS;
	return policies[1] + errs[3] + ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE +
	       ACL_MEM_P2P_HUGE1G + ACL_MEM_LOCATION_TYPE_HOST_NUMA +
	       (errs[0] != ACL_ERROR_NONE);
}

/* The TDT headers: a channel, a dataset of one item, a queue. */
static aclError use_tdt(void *data)
{
	int64_t dims[1] = { 4 };
	acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "c", 2);
	acltdtDataset *ds = acltdtCreateDataset();
	acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1,
						  ACL_FLOAT, data, 16);
	acltdtQueueAttr *qa = acltdtCreateQueueAttr();
	uint32_t qid = 0, depth = 4;
	acltdtBuf buf = NULL;
	size_t n = 0;
	aclError ret;

	ret = acltdtAddDataItem(ds, it);
	ret |= acltdtSendTensor(ch, ds, -1);
	ret |= acltdtReceiveTensor(ch, ds, 0);
	ret |= acltdtQueryChannelSize(ch, &n);
	ret |= acltdtGetDimsFromItem(acltdtGetDataItem(ds, 0), dims, 1);
	ret |= acltdtStopChannel(ch);
	ret |= acltdtDestroyChannel(ch);
	ret |= acltdtDestroyDataset(ds);
	ret |= acltdtDestroyDataItem(it);
	ret |= acltdtSetQueueAttr(qa, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth),
				  &depth);
	ret |= acltdtCreateQueue(qa, &qid);
	ret |= acltdtAllocBuf(8, ACL_TDT_NORMAL_MEM, &buf);
	ret |= acltdtEnqueue(qid, buf, -1);
	ret |= acltdtDequeue(qid, &buf, -1);
	ret |= acltdtFreeBuf(buf);
	ret |= acltdtEnqueueData(qid, dims, sizeof(dims), NULL, 0, 0, 0);
	ret |= acltdtDequeueData(qid, dims, sizeof(dims), &n, NULL, 0, 0);
	ret |= acltdtDestroyQueue(qid);
	ret |= acltdtDestroyQueueAttr(qa);
	return ret | (aclError)(acltdtGetDatasetSize(ds) + n +
				ACL_TDT_QUEUE_PERMISSION_ENQUEUE);
}

int main(int argc, char **argv)
{
	void *dev = NULL, *host = NULL;
	aclrtStream stream = NULL;
	aclrtPtrAttributes attr;
	aclrtRunMode mode;
	size_t fr = 0, tot = 0;
	uint32_t count = 0;
	int32_t id = 0;
	aclError ret;

	(void)argv;
	/* Never actually run: argc is 1 when executed without arguments. */
	if (argc < 100)
		return use_constants() == 12345;

	ret = aclInit(NULL);
	ret |= aclrtGetDeviceCount(&count);
	ret |= aclrtSetDevice(0);
	ret |= aclrtGetDevice(&id);
	ret |= aclrtGetRunMode(&mode);
	ret |= aclrtCreateStream(&stream);
	ret |= aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
	ret |= aclrtMallocAlign32(&dev, 64, ACL_MEM_MALLOC_NORMAL_ONLY);
	ret |= aclrtMallocCached(&dev, 64, ACL_MEM_MALLOC_HUGE_ONLY);
	ret |= aclrtMallocHost(&host, 64);
	ret |= aclrtMemset(dev, 64, 0, 64);
	ret |= aclrtMemcpy(host, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST);
	ret |= aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE,
				stream);
	ret |= aclrtMemsetAsync(dev, 64, 1, 64, stream);
	ret |= aclrtSynchronizeStream(stream);
	ret |= aclrtSynchronizeDevice();
	ret |= aclrtMemFlush(dev, 64);
	ret |= aclrtMemInvalidate(dev, 64);
	ret |= aclrtGetMemInfo(ACL_DDR_MEM, &fr, &tot);
	ret |= aclrtPointerGetAttributes(dev, &attr);
	ret |= aclrtFree(dev);
	ret |= aclrtFreeHost(host);
	ret |= acldvppMalloc(&dev, 64);
	ret |= acldvppFree(dev);
	ret |= use_tdt(dev);
	ret |= aclrtDestroyStream(stream);
	ret |= aclrtDestroyStreamForce(stream);
	ret |= aclrtResetDevice(id);
	ret |= aclrtResetDeviceForce(0);
	ret |= aclFinalize();
	printf("%d %u %u %zu %zu %d\n", ret, (unsigned)attr.pageSize,
	       (unsigned)attr.location.type, fr, tot, (int)mode);
	return ret != ACL_SUCCESS;
}
