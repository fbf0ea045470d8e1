// SPDX-License-Identifier: MIT
/*
 * Registered host memory: aclrtHostRegister/V2 pin the pages (the process's
 * VmPin grows by the page-rounded range and shrinks at aclrtHostUnregister),
 * the device pointer is the host pointer, aclrtMemcpy moves data between
 * registered memory and device memory; aclrtMallocHost memory registers
 * without a second pin; registering twice or overlapping, unregistering
 * what is not registered, device memory, unmapped memory: 107000; bad
 * arguments 100000; IOMEMORY 207000; aclrtHostGetDevicePointer only for
 * mapped registrations; aclrtHostMemMapCapabilities; a fork child has the
 * parent's pins not.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"

#define PG	4096
#define N	(64 * PG)

/* VmPin of this process in bytes. */
static long vm_pin(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_int_ge(kb, 0);
	return kb * 1024;
}

static void *pages(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

struct no_ctx {
	void *p;
	int ret;
};

static void *no_ctx_thread(void *arg)
{
	struct no_ctx *a = arg;

	a->ret = aclrtHostRegisterV2(a->p, PG, ACL_HOST_REG_MAPPED);
	return NULL;
}

START_TEST(bad_arguments)
{
	aclrtHostMemMapCapability cap;
	struct no_ctx nc = { 0 };
	void *p = pages(N), *d;
	pthread_t t;
	int i;

	ck_assert_int_eq(aclrtHostRegister(NULL, PG, ACL_HOST_REGISTER_MAPPED,
					   &d), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegister(p, 0, ACL_HOST_REGISTER_MAPPED, &d),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegister(p, PG, ACL_HOST_REGISTER_MAPPED,
					   NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegister(p, PG, (aclrtHostRegisterType)1,
					   &d), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegister(p, PG, ACL_HOST_REGISTER_IOMEMORY,
					   &d), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtHostRegister(p, UINT64_MAX, ACL_HOST_REGISTER_MAPPED,
					   &d), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegisterV2(p, PG, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegisterV2(p, PG, 0x1), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegisterV2(p, PG, ACL_HOST_REG_MAPPED | 0x100),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegisterV2(NULL, PG, ACL_HOST_REG_MAPPED),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostRegisterV2(p, PG, ACL_HOST_REG_IOMEMORY),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtHostUnregister(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostGetDevicePointer(NULL, &d, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostGetDevicePointer(p, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostGetDevicePointer(p, &d, 1),
			 ACL_ERROR_INVALID_PARAM);
	/* Nothing registered yet. */
	ck_assert_int_eq(aclrtHostUnregister(p), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostGetDevicePointer(p, &d, 0),
			 ACL_ERROR_RT_PARAM_INVALID);

	/* Capabilities: the NPU's PCIe DMA reaches registered pages. */
	for (i = ACL_RT_HAC_TYPE_STARS; i <= ACL_RT_HAC_TYPE_CCU; i++) {
		cap = (aclrtHostMemMapCapability)7;
		ck_assert_int_eq(aclrtHostMemMapCapabilities(0,
				 (aclrtHacType)i, &cap), 0);
		ck_assert_int_eq(cap, i == ACL_RT_HAC_TYPE_PCIEDMA ?
				 ACL_RT_HOST_MEM_MAP_SUPPORTED :
				 ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED);
	}
	ck_assert_int_eq(aclrtHostMemMapCapabilities(0, (aclrtHacType)10, &cap),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_SDMA,
			 NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtHostMemMapCapabilities(
			 (int32_t)acltest_device_count(), ACL_RT_HAC_TYPE_SDMA,
			 &cap), ACL_ERROR_RT_INVALID_DEVICEID);

	/* A thread without a context: 107002. */
	nc.p = p;
	ck_assert_int_eq(pthread_create(&t, NULL, no_ctx_thread, &nc), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(nc.ret, ACL_ERROR_RT_CONTEXT_NULL);
	munmap(p, N);
}
END_TEST

/*
 * Pinned: VmPin grows by the page-rounded range (an unaligned pointer is
 * rounded out) and shrinks back at unregister; the device pointer is the
 * host pointer; aclrtMemcpy works both ways with device memory.
 */
START_TEST(register_copy_unregister)
{
	unsigned char *p = pages(N), *q = p + 100, *dev;
	aclrtStream s;
	void *d = NULL;
	long pin0;

	/* Device buffers count in VmPin too: this one before the baseline. */
	ck_assert_int_eq(aclrtMalloc((void **)&dev, 2 * PG,
				     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	pin0 = vm_pin();
	ck_assert_int_eq(aclrtHostRegister(q, 2 * PG, ACL_HOST_REGISTER_MAPPED,
					   &d), 0);
	ck_assert_ptr_eq(d, q);
	ck_assert_int_eq(vm_pin() - pin0, 3 * PG);
	ck_assert_int_eq(aclrtHostGetDevicePointer(q + 5000, &d, 0), 0);
	ck_assert_ptr_eq(d, q + 5000);
	ck_assert_int_eq(aclrtHostGetDevicePointer(q + 2 * PG, &d, 0),
			 ACL_ERROR_RT_PARAM_INVALID);

	acltest_fill(q, 2 * PG, 7);
	ck_assert_int_eq(aclrtMemcpy(dev, 2 * PG, q, 2 * PG,
				     ACL_MEMCPY_HOST_TO_DEVICE), 0);
	ck_assert_uint_eq(acltest_verify(dev, 2 * PG, 7), SIZE_MAX);
	acltest_fill(dev, 2 * PG, 8);
	ck_assert_int_eq(aclrtMemcpy(q, 2 * PG, dev, 2 * PG,
				     ACL_MEMCPY_DEVICE_TO_HOST), 0);
	ck_assert_uint_eq(acltest_verify(q, 2 * PG, 8), SIZE_MAX);
	/*
	 * As CANN documents, the device pointer is no memory-operation
	 * device side: aclrtMemcpyAsync, which checks the kind, refuses it.
	 */
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(q, 16, dev, 16,
					  ACL_MEMCPY_DEVICE_TO_DEVICE, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);

	/* By the pointer registered, once. */
	ck_assert_int_eq(aclrtHostUnregister(q + 1), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostUnregister(q), 0);
	ck_assert_int_eq(vm_pin(), pin0);
	ck_assert_int_eq(aclrtHostUnregister(q), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostGetDevicePointer(q, &d, 0),
			 ACL_ERROR_RT_PARAM_INVALID);

	/* V2: pinned with or without a device pointer. */
	ck_assert_int_eq(aclrtHostRegisterV2(p, N, ACL_HOST_REG_PINNED), 0);
	ck_assert_int_eq(vm_pin() - pin0, N);
	ck_assert_int_eq(aclrtHostGetDevicePointer(p, &d, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostUnregister(p), 0);
	ck_assert_int_eq(aclrtHostRegisterV2(p, N, ACL_HOST_REG_MAPPED |
					     ACL_HOST_REG_PINNED), 0);
	ck_assert_int_eq(aclrtHostGetDevicePointer(p + N - 1, &d, 0), 0);
	ck_assert_ptr_eq(d, p + N - 1);
	ck_assert_int_eq(aclrtHostUnregister(p), 0);
	ck_assert_int_eq(vm_pin(), pin0);
	ck_assert_int_eq(aclrtFree(dev), 0);
	ck_assert_int_lt(vm_pin(), pin0);
	munmap(p, N);
}
END_TEST

START_TEST(overlaps_and_kinds)
{
	unsigned char *p = pages(N), *host, *dev, *gone = pages(2 * PG);
	void *d;
	long pin0 = vm_pin(), pin1;

	ck_assert_int_eq(aclrtHostRegisterV2(p, 4 * PG, ACL_HOST_REG_MAPPED), 0);
	/* Twice, or overlapping at either end: refused. */
	ck_assert_int_eq(aclrtHostRegisterV2(p, 4 * PG, ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostRegisterV2(p + PG, PG, ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostRegisterV2(p + 4 * PG - 1, PG,
					     ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	/*
	 * Adjacent bytes: taken, unless they share a page with a pinned
	 * registration (one DMA mapping per page).
	 */
	ck_assert_int_eq(aclrtHostRegisterV2(p + 4 * PG, 100,
					     ACL_HOST_REG_MAPPED), 0);
	ck_assert_int_eq(aclrtHostRegisterV2(p + 4 * PG + 100, 100,
					     ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostRegisterV2(p + 5 * PG, 100,
					     ACL_HOST_REG_MAPPED), 0);
	ck_assert_int_eq(vm_pin() - pin0, 6 * PG);
	ck_assert_int_eq(aclrtHostUnregister(p + 4 * PG), 0);
	ck_assert_int_eq(aclrtHostUnregister(p + 5 * PG), 0);
	ck_assert_int_eq(aclrtHostUnregister(p), 0);
	ck_assert_int_eq(vm_pin(), pin0);

	/* aclrtMallocHost memory: recorded, not pinned again. */
	ck_assert_int_eq(aclrtMallocHost((void **)&host, 2 * PG), 0);
	pin1 = vm_pin();
	ck_assert_int_eq(aclrtHostRegister(host, 2 * PG,
					   ACL_HOST_REGISTER_MAPPED, &d), 0);
	ck_assert_ptr_eq(d, host);
	ck_assert_int_eq(vm_pin(), pin1);
	ck_assert_int_eq(aclrtHostRegisterV2(host, PG, ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostGetDevicePointer(host + 1, &d, 0), 0);
	/* Freed with its record still there: the record goes with it. */
	ck_assert_int_eq(aclrtFreeHost(host), 0);
	ck_assert_int_eq(aclrtHostGetDevicePointer(host + 1, &d, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMallocHost((void **)&host, 2 * PG), 0);
	ck_assert_int_eq(aclrtHostRegisterV2(host, 2 * PG,
					     ACL_HOST_REG_MAPPED), 0);
	ck_assert_int_eq(aclrtHostUnregister(host), 0);
	ck_assert_int_eq(aclrtFreeHost(host), 0);

	/* Device memory, a range past an ACL buffer, unmapped memory. */
	ck_assert_int_eq(aclrtMalloc((void **)&dev, 2 * PG,
				     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_int_eq(aclrtHostRegisterV2(dev, PG, ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtHostRegisterV2(dev + PG, 4 * PG,
					     ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(dev), 0);
	ck_assert_int_eq(munmap(gone, 2 * PG), 0);
	ck_assert_int_eq(aclrtHostRegisterV2(gone, PG, ACL_HOST_REG_MAPPED),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(vm_pin(), pin0);
	munmap(p, N);
}
END_TEST

/* Read-only memory registers read-only, and only so. */
START_TEST(read_only)
{
	void *ro = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0), *d;
	long pin0 = vm_pin();

	ck_assert_ptr_ne(ro, MAP_FAILED);
	ck_assert_int_eq(aclrtHostRegister(ro, 2 * PG,
					   ACL_HOST_REGISTER_MAPPED, &d),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(vm_pin(), pin0);
	ck_assert_int_eq(aclrtHostRegister(ro, 2 * PG,
					   ACL_HOST_REGISTER_READONLY, &d), 0);
	ck_assert_int_eq(vm_pin() - pin0, 2 * PG);
	ck_assert_int_eq(aclrtHostUnregister(ro), 0);
	ck_assert_int_eq(aclrtHostRegisterV2(ro, 2 * PG, ACL_HOST_REG_MAPPED |
					     ACL_HOST_REG_READONLY), 0);
	ck_assert_int_eq(aclrtHostUnregister(ro), 0);
	ck_assert_int_eq(vm_pin(), pin0);
	munmap(ro, 2 * PG);
}
END_TEST

/* The child starts without the parent's registrations; the parent keeps
 * them, and aclFinalize drops them with the device file. */
START_TEST(fork_and_finalize)
{
	unsigned char *p = pages(N);
	long pin0 = vm_pin();
	pid_t pid;

	ck_assert_int_eq(aclrtHostRegisterV2(p, N, ACL_HOST_REG_MAPPED), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		void *d;

		if (aclrtSetDevice(0))
			_exit(90);
		if (aclrtHostGetDevicePointer(p, &d, 0) !=
		    ACL_ERROR_RT_PARAM_INVALID)
			_exit(91);
		if (aclrtHostUnregister(p) != ACL_ERROR_RT_PARAM_INVALID)
			_exit(92);
		/* The child's copies of the pages may be registered anew. */
		if (aclrtHostRegisterV2(p, N, ACL_HOST_REG_MAPPED) ||
		    aclrtHostUnregister(p))
			_exit(93);
		_exit(0);
	}
	ck_assert_int_eq(acltest_reap(pid), 0);
	ck_assert_int_eq(vm_pin() - pin0, N);

	ck_assert_int_eq(aclInit(NULL), 0);
	ck_assert_int_eq(aclFinalize(), 0);
	ck_assert_int_eq(vm_pin(), pin0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtHostUnregister(p), ACL_ERROR_RT_PARAM_INVALID);
	munmap(p, N);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_hostreg");
	const TTest *tests[] = {
		bad_arguments, register_copy_unregister, overlaps_and_kinds,
		read_only, fork_and_finalize,
	};
	size_t i;

	acltest_require_device();
	/* Freed buffers leave VmPin at once, which the checks count on. */
	setenv("NPU_MEM_POOL_MAX", "0", 1);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		nm_add_fx(s, tests[i], 60, &acltest_device);
	return acltest_run(s);
}
