// SPDX-License-Identifier: MIT
/*
 * The memory calls beyond the basic set: aclrtMemset on host memory (the
 * address decides), aclrtFree without a context, aclrtMemcpy/Async against
 * every (host, device) x (host, device) x kind, aclrtMemcpy2d*, the 32-bit
 * fills, the configured allocations, address ranges, usage, granularity,
 * the synchronised frees, aclrtCheckMemType and the custom allocator table,
 * each with CANN's codes.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

#define N 8192
#define R (N + 32)

static unsigned char *dev, *dev2, *pin;

static void setup(void)
{
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc((void **)&dev, N, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc((void **)&dev2, N, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocHost((void **)&pin, R), ACL_SUCCESS);
}

static void teardown(void)
{
	aclrtFree(dev);
	aclrtFree(dev2);
	aclrtFreeHost(pin);
	aclrtResetDevice(0);
}

static void all(const unsigned char *p, size_t n, int v)
{
	size_t i;

	for (i = 0; i < n && p[i] == v; i++)
		;
	ck_assert_msg(i == n, "byte %zu is %#x, not %#x", i, p[i], v);
}

START_TEST(memset_host_memory)
{
	unsigned char stack[64], *heap = malloc(100);
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	void *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_nonnull(heap);
	ck_assert_ptr_ne(ro, MAP_FAILED);
	ck_assert_ptr_ne(gone, MAP_FAILED);
	ck_assert_int_eq(munmap(gone, 8192), 0);

	ck_assert_int_eq(aclrtMemset(stack, 64, 0x5a, 64), ACL_SUCCESS);
	all(stack, 64, 0x5a);
	ck_assert_int_eq(aclrtMemset(heap, 100, 7, 100), ACL_SUCCESS);
	all(heap, 100, 7);
	ck_assert_int_eq(aclrtMemset(pin, R, 0x33, R), ACL_SUCCESS);
	all(pin, R, 0x33);
	ck_assert_int_eq(aclrtMemset(dev, R, 0x44, R), ACL_SUCCESS);
	all(dev, R, 0x44);
	/* Errors: NULL, count > maxCount, past an ACL buffer's end, memory
	 * that cannot be written. */
	ck_assert_int_eq(aclrtMemset(NULL, 8, 0, 8), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemset(stack, 8, 0, 9),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(pin, R + 1, 0, R + 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(ro, 16, 0, 16),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(gone, 16, 0, 16),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Async: host memory too, queued in order. */
	ck_assert_int_eq(aclrtMemsetAsync(heap, 100, 9, 100, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
	all(heap, 100, 9);
	ck_assert_int_eq(aclrtMemsetAsync(ro, 16, 0, 16, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemsetAsync(NULL, 16, 0, 16, NULL),
			 ACL_ERROR_INVALID_PARAM);
	munmap(ro, 4096);
	free(heap);
}
END_TEST

/*
 * Host memory is judged by the mappings as they are at each call: a
 * mapping gone since an earlier call, a range that crosses mappings of
 * other access or a hole, a file mapping past the file's end (SIGBUS
 * inside a readable mapping), and a fork()ed child, which asks about its
 * own mappings, not the parent's.
 */
START_TEST(host_memory_mappings)
{
	size_t pg = 4096;
	char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *f;
	int fd = memfd_create("acl_mem_ext", MFD_CLOEXEC), st;
	pid_t pid;

	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(aclrtMemset(m, 3 * pg, 1, 3 * pg), ACL_SUCCESS);
	/* Read-only in the middle: no write across it, reads are fine. */
	ck_assert_int_eq(mprotect(m + pg, pg, PROT_READ), 0);
	ck_assert_int_eq(aclrtMemset(m, 3 * pg, 2, 3 * pg),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(m + 2 * pg, pg, 2, pg), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(dev, N, m + pg, 2 * pg,
				     ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(m + pg, 2 * pg, dev, 2 * pg,
				     ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(mprotect(m + pg, pg, PROT_NONE), 0);
	ck_assert_int_eq(aclrtMemcpy(dev, N, m, 2 * pg,
				     ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* A hole in the middle. */
	ck_assert_int_eq(munmap(m + pg, pg), 0);
	ck_assert_int_eq(aclrtMemset(m, 3 * pg, 3, 3 * pg),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemsetAsync(m, 3 * pg, 3, 3 * pg, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(m, pg, 3, pg), ACL_SUCCESS);
	/* Gone after it was used. */
	ck_assert_int_eq(munmap(m, 3 * pg), 0);
	ck_assert_int_eq(aclrtMemset(m, pg, 4, pg), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(dev, N, m + 2 * pg, pg,
				     ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* One page of file under two of mapping. */
	ck_assert_int_eq(ftruncate(fd, (off_t)pg), 0);
	f = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(f, MAP_FAILED);
	ck_assert_int_eq(aclrtMemset(f, pg, 5, pg), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(f, 2 * pg, 5, 2 * pg),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(dev, N, f + 1, 2 * pg - 1,
				     ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	munmap(f, 2 * pg);
	close(fd);
	/* Mapped in the parent, which asked about it, but not in the child. */
	m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(madvise(m, pg, MADV_DONTFORK), 0);
	ck_assert_int_eq(aclrtMemset(m, pg, 6, pg), ACL_SUCCESS);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		if (aclrtSetDevice(0))
			_exit(1);
		_exit(aclrtMemset(m, pg, 7, pg) == ACL_ERROR_RT_PARAM_INVALID ?
		      0 : 2);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && !WEXITSTATUS(st), "child status %#x", st);
	munmap(m, pg);
}
END_TEST

static void *free_other_thread(void *p)
{
	return (void *)(intptr_t)aclrtFree(p);
}

START_TEST(free_without_context)
{
	pthread_t t;
	void *p, *q, *h, *ret;

	ck_assert_int_eq(aclrtMalloc(&p, 4096, 0), 0);
	ck_assert_int_eq(aclrtMalloc(&q, 4096, 0), 0);
	ck_assert_int_eq(aclrtMallocHost(&h, 4096), 0);
	/* A thread that never set the device frees. */
	ck_assert_int_eq(pthread_create(&t, NULL, free_other_thread, p), 0);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID);
	/* After the device's last reset. */
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtFree(q), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFreeHost(h), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(q), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
	/* Allocation still needs a context. */
	ck_assert_int_eq(aclrtMalloc(&p, 4096, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
}
END_TEST

/*
 * Every (dst, src) in {host, device}^2 with every kind 0..7.  aclrtMemcpy
 * ignores kind (reserved in CANN); aclrtMemcpyAsync needs the kind to name
 * the device sides, refuses HOST_TO_HOST (207000) and takes DEFAULT
 * everywhere.
 */
static int async_expect(int kind, bool dd, bool sd)
{
	switch (kind) {
	case ACL_MEMCPY_HOST_TO_HOST:
		return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	case ACL_MEMCPY_HOST_TO_DEVICE:
	case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
		return dd && !sd ? 0 : ACL_ERROR_RT_PARAM_INVALID;
	case ACL_MEMCPY_DEVICE_TO_HOST:
		return !dd && sd ? 0 : ACL_ERROR_RT_PARAM_INVALID;
	case ACL_MEMCPY_DEFAULT:
		return 0;
	default:	/* the three device-to-device kinds */
		return dd && sd ? 0 : ACL_ERROR_RT_PARAM_INVALID;
	}
}

START_TEST(memcpy_kind_matrix)
{
	static unsigned char hostA[N], hostB[N];
	int kind, d, s, seed = 1;

	for (kind = 0; kind <= ACL_MEMCPY_INTER_DEVICE_TO_DEVICE; kind++) {
		for (d = 0; d < 2; d++) {
			for (s = 0; s < 2; s++) {
				unsigned char *dst = d ? dev : hostA;
				unsigned char *src = s ? dev2 : hostB;
				int want;

				acltest_fill(src, N, ++seed);
				memset(dst, 0, N);
				ck_assert_msg(aclrtMemcpy(dst, N, src, N, kind)
					      == 0, "sync kind %d d%d s%d",
					      kind, d, s);
				ck_assert_uint_eq(acltest_verify(dst, N, seed),
						  SIZE_MAX);
				want = async_expect(kind, d, s);
				acltest_fill(src, N, ++seed);
				memset(dst, 0, N);
				ck_assert_msg(aclrtMemcpyAsync(dst, N, src, N,
							       kind, NULL)
					      == want, "async kind %d d%d s%d",
					      kind, d, s);
				ck_assert_int_eq(aclrtSynchronizeStream(NULL),
						 0);
				if (!want)
					ck_assert_uint_eq(acltest_verify(dst, N,
									 seed),
							  SIZE_MAX);
				else
					all(dst, N, 0);
			}
		}
	}
	/* Out of the enum: refused by both. */
	ck_assert_int_eq(aclrtMemcpy(dev, N, hostA, N, 8),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy(dev, N, hostA, N, -1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpyAsync(dev, N, hostA, N, 8, NULL),
			 ACL_ERROR_INVALID_PARAM);
	/* Pinned host memory is host memory for the kind. */
	ck_assert_int_eq(aclrtMemcpyAsync(dev, N, pin, N,
					  ACL_MEMCPY_HOST_TO_DEVICE, NULL), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(pin, N, dev, N,
					  ACL_MEMCPY_DEVICE_TO_DEVICE, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	/* A range past an ACL buffer, whatever the kind. */
	ck_assert_int_eq(aclrtMemcpy(hostA, N, dev + 64, N,
				     ACL_MEMCPY_DEFAULT),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(memcpy2d)
{
	static unsigned char h[16 * 64], back[16 * 64];
	int i;

	acltest_fill(h, sizeof(h), 5);
	memset(dev, 0, R);
	/* 16 rows of 48 bytes, host pitch 64, device pitch 50. */
	ck_assert_int_eq(aclrtMemcpy2d(dev, 50, h, 64, 48, 16,
				       ACL_MEMCPY_HOST_TO_DEVICE), 0);
	for (i = 0; i < 16; i++)
		ck_assert_int_eq(memcmp(dev + i * 50, h + i * 64, 48), 0);
	memset(back, 0, sizeof(back));
	ck_assert_int_eq(aclrtMemcpy2dAsync(back, 64, dev, 50, 48, 16,
					    ACL_MEMCPY_DEVICE_TO_HOST, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	for (i = 0; i < 16; i++)
		ck_assert_int_eq(memcmp(back + i * 64, h + i * 64, 48), 0);
	ck_assert_int_eq(aclrtMemcpy2dAsync(dev2, 50, dev, 50, 48, 16,
					    ACL_MEMCPY_DEVICE_TO_DEVICE, NULL),
			 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	ck_assert_int_eq(memcmp(dev2, dev, 16 * 50), 0);
	/* Empty copies succeed before any check. */
	ck_assert_int_eq(aclrtMemcpy2d(NULL, 0, NULL, 0, 0, 5, 99), 0);
	ck_assert_int_eq(aclrtMemcpy2dAsync(NULL, 0, NULL, 0, 5, 0, 99, NULL),
			 0);
	/* Errors */
	ck_assert_int_eq(aclrtMemcpy2d(NULL, 64, h, 64, 48, 2,
				       ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy2d(dev, 40, h, 64, 48, 2,
				       ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy2d(dev, 64, h, 40, 48, 2,
				       ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	/* Sync takes H2D, D2H, DEFAULT; async D2D too. */
	ck_assert_int_eq(aclrtMemcpy2d(dev2, 64, dev, 64, 48, 2,
				       ACL_MEMCPY_DEVICE_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy2d(back, 64, h, 64, 48, 2,
				       ACL_MEMCPY_HOST_TO_HOST),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy2dAsync(back, 64, h, 64, 48, 2,
					    ACL_MEMCPY_HOST_TO_HOST, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy2d(dev, 64, h, 64, 48, 2,
				       ACL_MEMCPY_DEFAULT), 0);
	/* Kind against the addresses; rows past the buffer. */
	ck_assert_int_eq(aclrtMemcpy2d(back, 64, h, 64, 48, 2,
				       ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy2d(dev, 4096, h, 48, 48, 16,
				       ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Documented async limits. */
	ck_assert_int_eq(aclrtMemcpy2dAsync(dev, 64, h, 64, 48,
					    5u * 1024 * 1024 + 1,
					    ACL_MEMCPY_HOST_TO_DEVICE, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
}
END_TEST

START_TEST(memset_d32)
{
	uint32_t *d = (uint32_t *)dev, *h = (uint32_t *)pin;
	uint32_t heap[8];
	int i;

	ck_assert_int_eq(aclrtMemsetD32(d, N, 0x12345678, N / 4), 0);
	for (i = 0; i < N / 4; i++)
		ck_assert_uint_eq(d[i], 0x12345678);
	ck_assert_int_eq(aclrtMemsetD32Async(d + 1, N, 0xa1b2c3d4, 3, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	ck_assert_uint_eq(d[0], 0x12345678);
	ck_assert_uint_eq(d[3], 0xa1b2c3d4);
	ck_assert_uint_eq(d[4], 0x12345678);
	ck_assert_int_eq(aclrtMemsetD32Async(h, R, 7, 4, NULL), 0);
	ck_assert_uint_eq(h[3], 7);	/* host: done at once */
	ck_assert_int_eq(aclrtMemsetD32(NULL, 4, 0, 0), 0);
	ck_assert_int_eq(aclrtMemsetD32(NULL, 4, 0, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemsetD32(dev + 1, 8, 0, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemsetD32(d, 7, 0, 2), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemsetD32(d, SIZE_MAX, 0, SIZE_MAX / 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemsetD32(heap, 32, 0, 8),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemsetD32(d, 2 * R, 0, R / 2),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(malloc_with_cfg)
{
	aclrtMallocAttribute a[3];
	aclrtMallocConfig cfg = { a, 0 };
	void *p, *h;

	memset(a, 0, sizeof(a));
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 100, 0, NULL), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 100, 0, &cfg), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	a[0].attr = ACL_RT_MEM_ATTR_MODULE_ID;
	a[0].value.moduleId = 3;
	a[1].attr = ACL_RT_MEM_ATTR_DEVICE_ID;
	a[1].value.deviceId = 0;
	cfg.numAttrs = 2;
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 100,
					    ACL_MEM_MALLOC_HUGE_FIRST |
					    ACL_MEM_TYPE_HIGH_BAND_WIDTH, &cfg),
			 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	a[2].attr = ACL_RT_MEM_ATTR_VA_FLAG;
	a[2].value.vaFlag = 1;
	cfg.numAttrs = 3;
	ck_assert_int_eq(aclrtMallocHostWithCfg(&h, 100, &cfg), 0);
	ck_assert_int_eq(aclrtFreeHost(h), 0);
	/* Errors */
	ck_assert_int_eq(aclrtMallocWithCfg(NULL, 100, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 0, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocHostWithCfg(&h, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	cfg.attrs = NULL;
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 100, 0, &cfg),
			 ACL_ERROR_INVALID_PARAM);
	cfg.attrs = a;
	a[0].attr = ACL_RT_MEM_ATTR_RSV;
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 100, 0, &cfg),
			 ACL_ERROR_INVALID_PARAM);
	a[0].attr = (aclrtMallocAttrType)77;
	ck_assert_int_eq(aclrtMallocHostWithCfg(&h, 100, &cfg),
			 ACL_ERROR_INVALID_PARAM);
	/* The first id past the devices there are (one, or four, or ...). */
	a[0].attr = ACL_RT_MEM_ATTR_DEVICE_ID;
	a[0].value.deviceId = acltest_device_count();
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 100, 0, &cfg),
			 ACL_ERROR_RT_INVALID_DEVICEID);
}
END_TEST

START_TEST(address_range_and_types)
{
	void *base = NULL, *list[2];
	size_t size = 0;
	uint32_t res = 9;
	int stackvar;

	ck_assert_int_eq(aclrtMemGetAddressRange(dev + 100, &base, &size), 0);
	ck_assert_ptr_eq(base, dev);
	ck_assert_uint_eq(size, R);
	ck_assert_int_eq(aclrtMemGetAddressRange(pin + R - 1, &base, &size),
			 0);
	ck_assert_ptr_eq(base, pin);
	ck_assert_int_eq(aclrtMemGetAddressRange(dev + R, &base, &size),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemGetAddressRange(&stackvar, &base, &size),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemGetAddressRange(NULL, &base, &size),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemGetAddressRange(dev, NULL, &size),
			 ACL_ERROR_INVALID_PARAM);

	list[0] = dev;
	list[1] = dev2 + 5;
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &res,
					   0), 0);
	ck_assert_uint_eq(res, 1);
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DVPP, &res,
					   0), 0);
	ck_assert_uint_eq(res, 0);
	list[1] = pin;
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV |
					   ACL_RT_MEM_TYPE_DVPP, &res, 0), 0);
	ck_assert_uint_eq(res, 0);
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &res,
					   1), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCheckMemType(list, 2, 0x1, &res, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCheckMemType(NULL, 2, ACL_RT_MEM_TYPE_DEV, &res,
					   0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, NULL,
					   0), ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(usage_and_granularity)
{
	aclrtMemUsageInfo u[4];
	aclrtPhysicalMemProp prop;
	size_t n = 9, g = 0, app = 0;
	void *big;
	int i;

	ck_assert_int_eq(aclrtGetMemUsageInfo(0, u, 4, &n), 0);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < 2; i++)
		if (!strcmp(u[i].name, "APP"))
			app = u[i].curMemSize;
	ck_assert_uint_ge(app, 2 * R);
	ck_assert_int_eq(aclrtMalloc(&big, 8 << 20, 0), 0);
	ck_assert_int_eq(aclrtGetMemUsageInfo(0, u, 4, &n), 0);
	for (i = 0; i < 2; i++)
		if (!strcmp(u[i].name, "APP")) {
			ck_assert_uint_ge(u[i].curMemSize, app + (8 << 20));
			ck_assert_uint_ge(u[i].memPeakSize, u[i].curMemSize);
		}
	ck_assert_int_eq(aclrtFree(big), 0);
	ck_assert_int_eq(aclrtGetMemUsageInfo(0, u, 1, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(aclrtGetMemUsageInfo((int32_t)acltest_device_count(), u, 1,
					      &n), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetMemUsageInfo(0, NULL, 1, &n),
			 ACL_ERROR_INVALID_PARAM);

	memset(&prop, 0, sizeof(prop));
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.memAttr = ACL_HBM_MEM_HUGE;
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&prop,
			 ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g), 0);
	ck_assert_uint_eq(g, 2 << 20);
	prop.memAttr = ACL_HBM_MEM_NORMAL;
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&prop,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), 0);
	ck_assert_uint_eq(g, 4096);
	prop.memAttr = ACL_DDR_MEM_NORMAL;
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&prop,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
			 ACL_ERROR_INVALID_PARAM);
	prop.location.type = ACL_MEM_LOCATION_TYPE_HOST;
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&prop,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), 0);
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&prop,
			 ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g),
			 ACL_ERROR_INVALID_PARAM);
	prop.memAttr = ACL_DDR_MEM;
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&prop,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(NULL,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(free_with_dev_sync)
{
	void *p, *h;
	static unsigned char big[1 << 20];

	ck_assert_int_eq(aclrtMalloc(&p, sizeof(big), 0), 0);
	ck_assert_int_eq(aclrtMallocHost(&h, 4096), 0);
	/* Queued work on the buffer finishes before it is freed. */
	ck_assert_int_eq(aclrtMemcpyAsync(p, sizeof(big), big, sizeof(big),
					  ACL_MEMCPY_HOST_TO_DEVICE, NULL), 0);
	ck_assert_int_eq(aclrtFreeWithDevSync(p), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), 0);
	ck_assert_int_eq(aclrtFreeWithDevSync(p), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeWithDevSync(h), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeWithDevSync(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFreeHostWithDevSync(h), 0);
	ck_assert_int_eq(aclrtFreeHostWithDevSync(h),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeHostWithDevSync(NULL),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

static void *fake_alloc(aclrtAllocator a, size_t n) { (void)a; return malloc(n); }
static void fake_free(aclrtAllocator a, aclrtAllocatorBlock b) { (void)a; free(b); }
static void *fake_addr(aclrtAllocatorBlock b) { return b; }

START_TEST(allocator_table)
{
	aclrtAllocatorDesc d = aclrtAllocatorCreateDesc(), got = NULL;
	aclrtAllocatorAllocFunc af = NULL;
	aclrtAllocatorFreeFunc ff = NULL;
	aclrtAllocatorAllocAdviseFunc adv = (aclrtAllocatorAllocAdviseFunc)1;
	aclrtAllocatorGetAddrFromBlockFunc gf = NULL;
	aclrtAllocator obj = NULL;
	aclrtStream s;
	int me;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	/* Incomplete: object, alloc, free and get-address are needed. */
	ck_assert_int_eq(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorSetObjToDesc(d, &me), 0);
	ck_assert_int_eq(aclrtAllocatorSetAllocFuncToDesc(d, fake_alloc), 0);
	ck_assert_int_eq(aclrtAllocatorSetFreeFuncToDesc(d, fake_free), 0);
	ck_assert_int_eq(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d,
							fake_addr), 0);
	ck_assert_int_eq(aclrtAllocatorSetObjToDesc(d, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorSetAllocFuncToDesc(NULL, fake_alloc),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorRegister(NULL, d),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorGetByStream(s, &got, NULL, NULL, NULL,
						   NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorRegister(s, d), 0);
	/* The registration is a copy: the description may go. */
	ck_assert_int_eq(aclrtAllocatorDestroyDesc(d), 0);
	ck_assert_int_eq(aclrtAllocatorGetByStream(s, &got, &obj, &af, &ff,
						   &adv, &gf), 0);
	ck_assert_ptr_eq(got, d);
	ck_assert_ptr_eq(obj, &me);
	ck_assert_ptr_eq(af, fake_alloc);
	ck_assert_ptr_eq(ff, fake_free);
	ck_assert_ptr_null(adv);
	ck_assert_ptr_eq(gf, fake_addr);
	ck_assert_int_eq(aclrtAllocatorGetByStream(s, NULL, NULL, NULL, NULL,
						   NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorUnregister(s), 0);
	ck_assert_int_eq(aclrtAllocatorUnregister(s), 0);
	ck_assert_int_eq(aclrtAllocatorUnregister(NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorGetByStream(s, &got, NULL, NULL, NULL,
						   NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtAllocatorDestroyDesc(NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

static const struct nm_fixture fixture = {
	.setup = setup, .teardown = teardown,
};

int main(void)
{
	Suite *s = suite_create("acl_mem_ext");
	const TTest *tests[] = {
		memset_host_memory, host_memory_mappings, free_without_context,
		memcpy_kind_matrix, memcpy2d, memset_d32, malloc_with_cfg,
		address_range_and_types, usage_and_granularity,
		free_with_dev_sync, allocator_table,
	};
	size_t i;

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "0", 1);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		nm_add_fx(s, tests[i], 60, &fixture);
	return acltest_run(s);
}
