/* SPDX-License-Identifier: MIT */
/*
 * A program written only against the public ACL headers, the way CANN
 * applications are: compiled by tests/host/acl_headers.c as C99 and C11
 * with -pedantic, and as C++11, and linked against libaclmem.  It uses
 * every declared call, type and constant so a signature that drifts from
 * what programs expect breaks the build.
 */
#include "acl/acl.h"
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
	ret |= aclrtDestroyStream(stream);
	ret |= aclrtDestroyStreamForce(stream);
	ret |= aclrtResetDevice(id);
	ret |= aclrtResetDeviceForce(0);
	ret |= aclFinalize();
	printf("%d %u %u %zu %zu %d\n", ret, (unsigned)attr.pageSize,
	       (unsigned)attr.location.type, fr, tot, (int)mode);
	return ret != ACL_SUCCESS;
}
