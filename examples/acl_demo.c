// SPDX-License-Identifier: MIT
/*
 * acl_demo: what a CANN application does with device memory, against
 * libaclmem.  Written only against <acl/acl.h>; builds unchanged against
 * CANN.  Prints what each step got; exits non-zero if a step fails.
 *
 *   build/examples/acl_demo [size-in-bytes]     (default 8 MiB)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

static int failures;

#define CHECK(call)							\
	do {								\
		aclError ret_ = (call);					\
		if (ret_ != ACL_SUCCESS) {				\
			printf("  FAILED: %s = %d\n", #call, ret_);	\
			failures++;					\
		}							\
	} while (0)

static const char *policy_name(int p)
{
	switch (p) {
	case ACL_MEM_MALLOC_HUGE_FIRST: return "HUGE_FIRST";
	case ACL_MEM_MALLOC_HUGE_ONLY: return "HUGE_ONLY";
	case ACL_MEM_MALLOC_NORMAL_ONLY: return "NORMAL_ONLY";
	case ACL_MEM_MALLOC_HUGE1G_ONLY: return "HUGE1G_ONLY";
	default: return "?";
	}
}

static void show_mem_info(void)
{
	static const struct {
		aclrtMemAttr attr;
		const char *name;
	} attrs[] = {
		{ ACL_DDR_MEM, "DDR" },
		{ ACL_HBM_MEM, "HBM" },
		{ ACL_MEM_NORMAL, "NORMAL" },
		{ ACL_MEM_HUGE, "HUGE" },
		{ ACL_MEM_HUGE1G, "HUGE1G" },
		{ ACL_MEM_P2P_HUGE, "P2P_HUGE" },
	};
	size_t i, fr, tot;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		aclError ret = aclrtGetMemInfo(attrs[i].attr, &fr, &tot);

		if (ret != ACL_SUCCESS) {
			printf("  aclrtGetMemInfo(%s) = %d\n", attrs[i].name, ret);
			failures++;
			continue;
		}
		printf("  %-9s free %8zu MiB  total %8zu MiB\n", attrs[i].name,
		       fr >> 20, tot >> 20);
	}
}

/* One buffer: fill, copy through host memory, check, flush, invalidate. */
static void exercise(int policy, size_t size, unsigned char *host)
{
	aclrtPtrAttributes attr;
	void *dev = NULL, *dev2 = NULL;
	aclError ret;
	size_t i, bad = 0;

	ret = aclrtMallocCached(&dev, size, (aclrtMemMallocPolicy)policy);
	printf("aclrtMallocCached(%zu, %s) = %d", size, policy_name(policy), ret);
	if (ret != ACL_SUCCESS) {
		printf("  (%s)\n", ret == ACL_ERROR_RT_MEMORY_ALLOCATION ?
		       "out of memory: pages of that size, the driver's cap, "
		       "or the user's RLIMIT_MEMLOCK (ulimit -l)" :
		       ret == ACL_ERROR_RT_FEATURE_NOT_SUPPORT ?
		       "not supported by this kernel" : "error");
		/* HUGE_ONLY/HUGE1G may rightly fail; the others must not. */
		if (policy == ACL_MEM_MALLOC_HUGE_FIRST ||
		    policy == ACL_MEM_MALLOC_NORMAL_ONLY)
			failures++;
		return;
	}
	printf("  -> %p\n", dev);
	CHECK(aclrtPointerGetAttributes(dev, &attr));
	printf("  attributes: type %d (DEVICE=%d) device %u page size %u\n",
	       (int)attr.location.type, (int)ACL_MEM_LOCATION_TYPE_DEVICE,
	       attr.location.id, attr.pageSize);

	CHECK(aclrtMemset(dev, size, 0x5a, size));
	for (i = 0; i < size; i++)
		host[i] = (unsigned char)(i * 7 + 3);
	CHECK(aclrtMemcpy(dev, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtMemFlush(dev, size));

	CHECK(aclrtMalloc(&dev2, size, ACL_MEM_MALLOC_HUGE_FIRST));
	if (dev2) {
		CHECK(aclrtMemcpy(dev2, size, dev, size,
				  ACL_MEMCPY_DEVICE_TO_DEVICE));
		memset(host, 0, size);
		CHECK(aclrtMemInvalidate(dev2, size));
		CHECK(aclrtMemcpy(host, size, dev2, size,
				  ACL_MEMCPY_DEVICE_TO_HOST));
		for (i = 0; i < size; i++)
			bad += host[i] != (unsigned char)(i * 7 + 3);
		printf("  memset, H2D, flush, D2D, invalidate, D2H: %zu of %zu bytes wrong\n",
		       bad, size);
		if (bad)
			failures++;
		CHECK(aclrtFree(dev2));
	}
	CHECK(aclrtFree(dev));
}

int main(int argc, char **argv)
{
	static const int policies[] = {
		ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY,
		ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY,
	};
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)8 << 20;
	unsigned char *host = NULL;
	aclrtStream stream = NULL;
	aclrtRunMode mode;
	uint32_t count = 0;
	int32_t dev = -1;
	aclError ret;
	size_t i;

	ret = aclInit(NULL);
	printf("aclInit = %d\n", ret);
	if (ret != ACL_SUCCESS)
		return 1;
	ret = aclrtGetDeviceCount(&count);
	printf("aclrtGetDeviceCount = %d, %u device(s)\n", ret, count);
	ret = aclrtSetDevice(0);
	printf("aclrtSetDevice(0) = %d\n", ret);
	if (ret != ACL_SUCCESS) {
		printf("no device: is the npu_mem module loaded? (%s)\n",
		       ret == ACL_ERROR_RT_NO_DEVICE ? "no /dev/npu-mem" :
		       ret == ACL_ERROR_RT_NO_PERMISSION ? "permission denied" :
		       "error");
		aclFinalize();
		return 1;
	}
	CHECK(aclrtGetDevice(&dev));
	CHECK(aclrtGetRunMode(&mode));
	printf("current device %d, run mode %s\n", dev,
	       mode == ACL_HOST ? "ACL_HOST" : "ACL_DEVICE");
	CHECK(aclrtCreateStream(&stream));

	printf("memory before:\n");
	show_mem_info();

	CHECK(aclrtMallocHost((void **)&host, size));
	if (host) {
		for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
			exercise(policies[i], size, host);
	}

	if (host && stream) {
		void *dev_buf = NULL;

		CHECK(aclrtMalloc(&dev_buf, size, ACL_MEM_MALLOC_HUGE_FIRST));
		if (dev_buf) {
			memset(host, 0x11, size);
			CHECK(aclrtMemsetAsync(dev_buf, size, 0x22, size, stream));
			CHECK(aclrtMemcpyAsync(host, size, dev_buf, size,
					       ACL_MEMCPY_DEVICE_TO_HOST, stream));
			CHECK(aclrtSynchronizeStream(stream));
			printf("stream: memset then D2H, host[0] = 0x%02x, host[last] = 0x%02x (want 0x22)\n",
			       host[0], host[size - 1]);
			if (host[0] != 0x22 || host[size - 1] != 0x22)
				failures++;
			CHECK(aclrtFree(dev_buf));
		}
	}
	if (host)
		CHECK(aclrtFreeHost(host));

	printf("memory after:\n");
	show_mem_info();

	if (stream)
		CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	printf("%s\n", failures ? "acl_demo: FAILED" : "acl_demo: ok");
	return failures ? 1 : 0;
}
