// SPDX-License-Identifier: MIT
/*
 * Virtual memory: reservations, physical handles, pieces mapped into a
 * reservation and used by aclrtMemcpy/aclrtMemset across their boundaries,
 * access flags (a write to a read-only piece faults; a change that fails
 * part way changes nothing), CANN's lifetime rules (a mapped handle may be
 * freed; a reservation with pieces may not be released), and shareable
 * handles between processes with the pid list enforced.  Every refusal is
 * checked with its exact code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/npu_mem.h>
#include <linux/seccomp.h>

#include "acltest_device.h"
#include "acl/acl.h"

#define SZ_64K	((size_t)64 << 10)
#define SZ_2M	((size_t)2 << 20)

static aclrtPhysicalMemProp prop_of(aclrtMemAttr attr)
{
	aclrtPhysicalMemProp p;

	memset(&p, 0, sizeof(p));
	p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	p.memAttr = attr;
	p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	return p;
}

static aclrtDrvMemHandle phys(size_t size, aclrtMemAttr attr)
{
	aclrtPhysicalMemProp p = prop_of(attr);
	aclrtDrvMemHandle h = NULL;

	ck_assert_int_eq(aclrtMallocPhysical(&h, size, &p, 0), ACL_SUCCESS);
	ck_assert_ptr_nonnull(h);
	return h;
}

START_TEST(malloc_physical_rules)
{
	aclrtPhysicalMemProp p = prop_of(ACL_MEM_NORMAL), q;
	aclrtDrvMemHandle h;
	struct acltest_counters c0, c1;
	size_t g;

	ck_assert_int_eq(aclrtMallocPhysical(NULL, SZ_64K, &p, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocPhysical(&h, 0, &p, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, &p, 1),
			 ACL_ERROR_INVALID_PARAM);
	q = p;
	q.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, &q, 0),
			 ACL_ERROR_INVALID_PARAM);
	q = p;
	q.memAttr = ACL_DDR_MEM_NORMAL;		/* host memory only */
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, &q, 0),
			 ACL_ERROR_INVALID_PARAM);
	q = p;
	q.memAttr = (aclrtMemAttr)99;
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, &q, 0),
			 ACL_ERROR_INVALID_PARAM);
	q = p;
	q.location.id = acltest_device_count();
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, &q, 0),
			 ACL_ERROR_RT_INVALID_DEVICEID);

	/* Granularities: the page. */
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&p,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), 0);
	ck_assert_uint_eq(g, 4096);
	q = prop_of(ACL_MEM_HUGE);
	ck_assert_int_eq(aclrtMemGetAllocationGranularity(&q,
			 ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), 0);
	ck_assert_uint_eq(g, SZ_2M);

	/* One driver buffer per handle, given back by aclrtFreePhysical. */
	acltest_counters(&c0);
	h = phys(SZ_64K + 1, ACL_MEM_NORMAL);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers + 1);
	ck_assert_int_eq(aclrtMemGetAllocationPropertiesFromHandle(h, &q), 0);
	ck_assert_int_eq(q.memAttr, ACL_MEM_NORMAL);
	ck_assert_int_eq(q.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
	ck_assert_int_eq(aclrtMemGetAllocationPropertiesFromHandle(h, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	/* A freed handle is unknown. */
	ck_assert_int_eq(aclrtFreePhysical(h), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemGetAllocationPropertiesFromHandle(h, &q),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFreePhysical((aclrtDrvMemHandle)&g),
			 ACL_ERROR_RT_PARAM_INVALID);

	/* A device is needed, as for every allocation. */
	aclrtResetDeviceForce(0);
	ck_assert_int_eq(aclrtMallocPhysical(&h, SZ_64K, &p, 0),
			 ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

/* An alignment refused with 100000, and the message saying why. */
static void reserve_refused(size_t alignment, const char *why)
{
	const char *m;
	void *v = NULL;

	aclGetRecentErrMsg();
	ck_assert_int_eq(aclrtReserveMemAddress(&v, SZ_2M, alignment, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	m = aclGetRecentErrMsg();
	ck_assert_ptr_nonnull(m);
	ck_assert_msg(strstr(m, why), "alignment %zu: \"%s\" lacks \"%s\"",
		      alignment, m, why);
}

START_TEST(reserve_rules)
{
	void *v, *w;

	ck_assert_int_eq(aclrtReserveMemAddress(NULL, SZ_2M, 0, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtReserveMemAddress(&v, 0, 0, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtReserveMemAddress(&v, SZ_2M, 0, NULL, 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtReserveMemAddress(&v, SZ_2M, 3 << 20, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	/* Each refused alignment is told for what it is. */
	reserve_refused(3, "is not a power of two");
	reserve_refused((size_t)1 << 41, "above 2^40");

	ck_assert_int_eq(aclrtReserveMemAddress(&v, 3 * SZ_2M, 0, NULL, 1), 0);
	ck_assert_uint_eq((uintptr_t)v % SZ_2M, 0);
	/* Address space only: not usable memory. */
	if (!acltest_under_valgrind())
		ck_assert_int_eq(acltest_probe(v, false), SIGSEGV);
	ck_assert_int_eq(aclrtReleaseMemAddress((char *)v + 4096),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Asking for its own address again: taken. */
	ck_assert_int_eq(aclrtReserveMemAddress(&w, SZ_2M, 0, v, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtReserveMemAddress(&w, SZ_2M, 0,
						(char *)v + 4096, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtReleaseMemAddress(NULL), ACL_ERROR_INVALID_PARAM);
	/* Now free: given exactly where asked. */
	ck_assert_int_eq(aclrtReserveMemAddress(&w, SZ_2M, 0, v, 0), 0);
	ck_assert_ptr_eq(w, v);
	ck_assert_int_eq(aclrtReleaseMemAddress(w), 0);

	ck_assert_int_eq(aclrtReserveMemAddress(&v, SZ_2M, (size_t)1 << 30,
						NULL, 0), 0);
	ck_assert_uint_eq((uintptr_t)v % ((size_t)1 << 30), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
}
END_TEST

START_TEST(map_rules)
{
	aclrtDrvMemHandle h = phys(SZ_2M, ACL_MEM_HUGE);
	aclrtDrvMemHandle n = phys(SZ_64K, ACL_MEM_NORMAL);
	static char host[4096] __attribute__((aligned(4096)));
	char *v;

	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, 4 * SZ_2M, 0,
						NULL, 0), 0);
	ck_assert_int_eq(aclrtMapMem(NULL, SZ_2M, 0, h, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMapMem(v, SZ_2M, 0, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMapMem(v, 0, 0, h, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMapMem(v, SZ_2M, 0, h, 1),
			 ACL_ERROR_INVALID_PARAM);
	/* Misaligned for a 2 MiB handle: size, address, offset. */
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 0, h, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMapMem(v + SZ_64K, SZ_2M, 0, h, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 4096, n, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 100, n, 0),
			 ACL_ERROR_INVALID_PARAM);
	/* Past the end of the physical memory. */
	ck_assert_int_eq(aclrtMapMem(v, 2 * SZ_2M, 0, h, 0),
			 ACL_ERROR_INVALID_PARAM);
	/* Outside every reservation, or running past one. */
	ck_assert_int_eq(aclrtMapMem(host, 4096, 0, n, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMapMem(v + 3 * SZ_2M + SZ_2M - 4096, SZ_64K, 0,
				     n, 0), ACL_ERROR_RT_PARAM_INVALID);
	/* A handle that is not one. */
	ck_assert_int_eq(aclrtMapMem(v, 4096, 0, (aclrtDrvMemHandle)host, 0),
			 ACL_ERROR_RT_PARAM_INVALID);

	ck_assert_int_eq(aclrtMapMem(v, SZ_2M, 0, h, 0), 0);
	/* Over a mapped piece, wholly or in part. */
	ck_assert_int_eq(aclrtMapMem(v, SZ_2M, 0, h, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMapMem(v + SZ_2M - 4096, SZ_64K, 0, n, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Pieces may be released only by their start. */
	ck_assert_int_eq(aclrtUnmapMem(v + 4096), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtUnmapMem(v + SZ_2M), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtUnmapMem(NULL), ACL_ERROR_INVALID_PARAM);
	/* A reservation with pieces in it stays. */
	ck_assert_int_eq(aclrtReleaseMemAddress(v), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtUnmapMem(v), ACL_ERROR_RT_PARAM_INVALID);
	/* Unmapped: reserved again, not usable. */
	if (!acltest_under_valgrind())
		ck_assert_int_eq(acltest_probe(v, false), SIGSEGV);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
	ck_assert_int_eq(aclrtFreePhysical(n), 0);
}
END_TEST

/* Three handles, one range: a tensor the library copies across pieces. */
START_TEST(three_piece_tensor)
{
	aclrtDrvMemHandle h[3];
	aclrtPtrAttributes at;
	unsigned char *v, *in, *out;
	size_t len = 3 * SZ_64K, sz;
	void *base;
	int i;

	in = malloc(len);
	out = malloc(len);
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, len, 0, NULL, 0),
			 0);
	for (i = 0; i < 3; i++) {
		h[i] = phys(SZ_64K, ACL_MEM_NORMAL);
		ck_assert_int_eq(aclrtMapMem(v + i * SZ_64K, SZ_64K, 0, h[i], 0),
				 0);
	}
	acltest_fill(in, len, 7);
	ck_assert_int_eq(aclrtMemcpy(v, len, in, len,
				     ACL_MEMCPY_HOST_TO_DEVICE), 0);
	memset(out, 0, len);
	ck_assert_int_eq(aclrtMemcpy(out, len, v, len,
				     ACL_MEMCPY_DEVICE_TO_HOST), 0);
	ck_assert_uint_eq(acltest_verify(out, len, 7), SIZE_MAX);
	/* Device to device within the range, across both boundaries. */
	ck_assert_int_eq(aclrtMemcpy(v + 100, len - 100, v + SZ_64K + 50,
				     SZ_64K, ACL_MEMCPY_DEVICE_TO_DEVICE), 0);
	ck_assert_int_eq(memcmp(v + 100, in + SZ_64K + 50, SZ_64K), 0);
	ck_assert_int_eq(aclrtMemset(v + SZ_64K - 10, 2 * SZ_64K, 0x5a,
				     SZ_64K + 20), 0);
	ck_assert_int_eq(v[SZ_64K - 10], 0x5a);
	ck_assert_int_eq(v[2 * SZ_64K + 9], 0x5a);

	/* Device memory for the rest of the library. */
	ck_assert_int_eq(aclrtPointerGetAttributes(v + SZ_64K + 1, &at), 0);
	ck_assert_int_eq(at.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
	ck_assert_uint_eq(at.pageSize, 4096);
	ck_assert_int_eq(aclrtMemGetAddressRange(v + SZ_64K + 1, &base, &sz), 0);
	ck_assert_ptr_eq(base, v + SZ_64K);
	ck_assert_uint_eq(sz, SZ_64K);
	/* Not aclrtMalloc's: aclrtFree refuses it. */
	ck_assert_int_eq(aclrtFree(v), ACL_ERROR_RT_PARAM_INVALID);

	/* A hole in the middle: copies through it are refused. */
	ck_assert_int_eq(aclrtUnmapMem(v + SZ_64K), 0);
	ck_assert_int_eq(aclrtMemcpy(out, len, v, len,
				     ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(out, len, v + SZ_64K, 16,
				     ACL_MEMCPY_DEFAULT),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(out, len, v, SZ_64K,
				     ACL_MEMCPY_DEVICE_TO_HOST), 0);
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtUnmapMem(v + 2 * SZ_64K), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(aclrtFreePhysical(h[i]), 0);
	free(in);
	free(out);
}
END_TEST

/* One handle mapped twice, from two offsets: the same pages. */
START_TEST(offsets_alias)
{
	aclrtDrvMemHandle h = phys(2 * SZ_2M, ACL_MEM_HUGE);
	char *v;

	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, 3 * SZ_2M, 0,
						NULL, 1), 0);
	ck_assert_int_eq(aclrtMapMem(v, 2 * SZ_2M, 0, h, 0), 0);
	ck_assert_int_eq(aclrtMapMem(v + 2 * SZ_2M, SZ_2M, SZ_2M, h, 0), 0);
	v[SZ_2M + 123] = 0x42;
	ck_assert_int_eq(v[2 * SZ_2M + 123], 0x42);
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtUnmapMem(v + 2 * SZ_2M), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
}
END_TEST

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	_exit(si->si_code == SEGV_ACCERR ? 42 : 43);
}

/* In a child: read p (expect val), then write it; exit 0 if the write worked. */
static int child_write(volatile char *p, char val)
{
	struct sigaction sa;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_segv;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
		if (*p != val)
			_exit(50 + (*p & 63));
		*p = 1;
		_exit(0);
	}
	return acltest_reap(pid);
}

/* madvise(MADV_DOFORK), or true where the kernel refuses it on our
 * mappings (Linux 7.x; any other failure fails the test). */
static bool dofork_refused(void *p, size_t len)
{
	struct utsname u;

	if (madvise(p, len, MADV_DOFORK) == 0)
		return false;
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_ge(atoi(u.release), 7);
	return true;
}

/* Two 64 KiB pieces, h[0]'s then h[1]'s, one reservation. */
static char *map_two(aclrtDrvMemHandle h[2])
{
	char *v;

	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, 2 * SZ_64K, 0,
						NULL, 0), 0);
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 0, h[0], 0), 0);
	ck_assert_int_eq(aclrtMapMem(v + SZ_64K, SZ_64K, 0, h[1], 0), 0);
	return v;
}

static void unmap_two(char *v, aclrtDrvMemHandle h[2])
{
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtUnmapMem(v + SZ_64K), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	ck_assert_int_eq(aclrtFreePhysical(h[0]), 0);
	ck_assert_int_eq(aclrtFreePhysical(h[1]), 0);
}

START_TEST(access_flags)
{
	aclrtDrvMemHandle h[2] = { phys(SZ_64K, ACL_MEM_NORMAL),
				   phys(SZ_64K, ACL_MEM_NORMAL) };
	aclrtMemAccessDesc d;
	aclrtMemLocation loc = { 0, ACL_MEM_LOCATION_TYPE_DEVICE };
	char *v, buf[16] = "0123456789abcde";
	uint64_t flag;

	v = map_two(h);
	/* Mapped pieces start read-write. */
	ck_assert_int_eq(aclrtMemGetAccess(v, &loc, &flag), 0);
	ck_assert_uint_eq(flag, ACL_RT_MEM_ACCESS_FLAGS_READWRITE);
	v[5] = 'x';

	memset(&d, 0, sizeof(d));
	d.location = loc;
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
	ck_assert_int_eq(aclrtMemSetAccess(NULL, SZ_64K, &d, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 0),
			 ACL_ERROR_INVALID_PARAM);
	/* Not whole pieces. */
	ck_assert_int_eq(aclrtMemSetAccess(v, 4096, &d, 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemSetAccess(v + 4096, SZ_64K - 4096, &d, 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemSetAccess(v, 3 * SZ_64K, &d, 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	d.flags = (aclrtMemAccessFlags)2;
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 1),
			 ACL_ERROR_INVALID_PARAM);
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
	d.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 1),
			 ACL_ERROR_INVALID_PARAM);
	d.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	d.location.id = acltest_device_count();
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 1),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	d.location.id = 0;
	/* Nothing changed by the refusals. */
	ck_assert_int_eq(aclrtMemGetAccess(v, &loc, &flag), 0);
	ck_assert_uint_eq(flag, ACL_RT_MEM_ACCESS_FLAGS_READWRITE);

	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 1), 0);
	ck_assert_int_eq(aclrtMemGetAccess(v, &loc, &flag), 0);
	ck_assert_uint_eq(flag, ACL_RT_MEM_ACCESS_FLAGS_READ);
	ck_assert_int_eq(aclrtMemGetAccess(v + 4096, &loc, &flag),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemGetAccess(v, NULL, &flag),
			 ACL_ERROR_INVALID_PARAM);
	/* Read-only: readable; the library refuses to write it. */
	ck_assert_int_eq(v[5], 'x');
	ck_assert_int_eq(aclrtMemcpy(buf, sizeof(buf), v, 8,
				     ACL_MEMCPY_DEVICE_TO_HOST), 0);
	ck_assert_int_eq(aclrtMemcpy(v, SZ_64K, buf, 8,
				     ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(v + SZ_64K - 4, 8, buf, 8,
				     ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	memcpy(buf, "01234567", 8);
	ck_assert_int_eq(aclrtMemcpy(v + SZ_64K, 8, buf, 8,
				     ACL_MEMCPY_HOST_TO_DEVICE), 0);
	ck_assert_int_eq(v[SZ_64K], '0');
	/*
	 * And the CPU faults on it (a child that shares the pages).  Linux
	 * 7.x refuses MADV_DOFORK on these mappings (VM_DONTEXPAND): no child
	 * can share them there.
	 */
	if (!acltest_under_valgrind() && dofork_refused(v, 2 * SZ_64K)) {
		printf("access_flags: no child check: the kernel refuses MADV_DOFORK\n");
	} else if (!acltest_under_valgrind()) {
		ck_assert_int_eq(child_write(v + 5, 'x'), 42);
		ck_assert_int_eq(child_write(v + SZ_64K, '0'), 0);
		ck_assert_int_eq(v[SZ_64K], 1);
	}
	/* No access at all: not even reads. */
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_NONE;
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 1), 0);
	ck_assert_int_eq(aclrtMemcpy(buf, sizeof(buf), v, 8,
				     ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_ERROR_RT_PARAM_INVALID);
	if (!acltest_under_valgrind())
		ck_assert_int_eq(acltest_probe(v, false), SIGSEGV);
	/* Both pieces at once, back to read-write. */
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	ck_assert_int_eq(aclrtMemSetAccess(v, 2 * SZ_64K, &d, 1), 0);
	v[5] = 'y';
	ck_assert_int_eq(aclrtMemcpy(v, SZ_64K, buf, 8,
				     ACL_MEMCPY_HOST_TO_DEVICE), 0);
	unmap_two(v, h);
}
END_TEST

/* The permissions /proc/self/maps gives the mapping starting at addr. */
static void maps_perms(const void *addr, char perms[5])
{
	unsigned long start, end;
	char line[512], p[5];
	FILE *f = fopen("/proc/self/maps", "r");

	ck_assert_ptr_nonnull(f);
	strcpy(perms, "none");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &start, &end, p) == 3 &&
		    start == (uintptr_t)addr) {
			memcpy(perms, p, 5);
			break;
		}
	fclose(f);
}

/*
 * aclrtMemSetAccess is all or nothing, also when an mprotect fails part
 * way: here the second piece's mapping was replaced behind the library's
 * back by one that can never be writable (a read-only open of /dev/zero,
 * shared), so making both read-write fails on it, and the first piece,
 * already changed by then, must be read-only again, in the kernel's
 * mapping as in the library's record.
 */
START_TEST(access_all_or_nothing)
{
	aclrtDrvMemHandle h[2] = { phys(SZ_64K, ACL_MEM_NORMAL),
				   phys(SZ_64K, ACL_MEM_NORMAL) };
	aclrtMemLocation loc = { 0, ACL_MEM_LOCATION_TYPE_DEVICE };
	aclrtMemAccessDesc d;
	char *v, perms[5];
	uint64_t flag;
	int fd;

	v = map_two(h);
	memset(&d, 0, sizeof(d));
	d.location = loc;
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
	ck_assert_int_eq(aclrtMemSetAccess(v, 2 * SZ_64K, &d, 1), 0);

	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_eq(mmap(v + SZ_64K, SZ_64K, PROT_READ,
			      MAP_SHARED | MAP_FIXED, fd, 0), v + SZ_64K);
	close(fd);
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	/* EACCES from the second piece's mprotect. */
	ck_assert_int_eq(aclrtMemSetAccess(v, 2 * SZ_64K, &d, 1),
			 ACL_ERROR_RT_NO_PERMISSION);
	ck_assert_int_eq(aclrtMemGetAccess(v, &loc, &flag), 0);
	ck_assert_msg(flag == ACL_RT_MEM_ACCESS_FLAGS_READ,
		      "the first piece's access is %llu after a failed change, "
		      "want READ", (unsigned long long)flag);
	ck_assert_int_eq(aclrtMemGetAccess(v + SZ_64K, &loc, &flag), 0);
	ck_assert_uint_eq(flag, ACL_RT_MEM_ACCESS_FLAGS_READ);
	maps_perms(v, perms);
	ck_assert_msg(!strcmp(perms, "r--s"), "the first piece is %s in "
		      "/proc/self/maps after a failed change, want r--s",
		      perms);
	if (!acltest_under_valgrind())
		ck_assert_int_eq(acltest_probe(v, true), SIGSEGV);

	/* The first piece alone can still change. */
	ck_assert_int_eq(aclrtMemSetAccess(v, SZ_64K, &d, 1), 0);
	maps_perms(v, perms);
	ck_assert_str_eq(perms, "rw-s");
	v[0] = 1;
	unmap_two(v, h);
}
END_TEST

/* CANN: a mapped handle may be freed; its memory goes at the last unmap. */
START_TEST(free_while_mapped_and_retain)
{
	struct acltest_counters c0, c1;
	aclrtPhysicalMemProp p;
	aclrtDrvMemHandle h, r, r2;
	char *v;

	acltest_counters(&c0);
	h = phys(SZ_64K, ACL_MEM_NORMAL);
	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, 2 * SZ_64K, 0,
						NULL, 0), 0);
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 0, h, 0), 0);
	v[0] = 9;

	ck_assert_int_eq(aclrtMemRetainAllocationHandle(NULL, &r),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemRetainAllocationHandle(v + 4096, &r),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemRetainAllocationHandle(v, &r), 0);
	ck_assert_ptr_eq(r, h);
	/* Two references: the first free leaves the handle alive. */
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
	ck_assert_int_eq(aclrtMemGetAllocationPropertiesFromHandle(h, &p), 0);
	ck_assert_int_eq(aclrtFreePhysical(r), 0);
	ck_assert_int_eq(aclrtMemGetAllocationPropertiesFromHandle(h, &p),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMapMem(v + SZ_64K, SZ_64K, 0, h, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* The memory stays while mapped. */
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers + 1);
	ck_assert_int_eq(v[0], 9);
	/* The mapping holds the memory: retaining it revives the handle. */
	ck_assert_int_eq(aclrtMemRetainAllocationHandle(v, &r2), 0);
	ck_assert_int_eq(aclrtMemGetAllocationPropertiesFromHandle(r2, &p), 0);
	ck_assert_int_eq(aclrtFreePhysical(r2), 0);
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
}
END_TEST

/* ---- sharing between processes ---- */

struct msg {
	uint32_t type;		/* 0: V1, else V2's share type */
	uint64_t word;
	aclrtMemFabricHandle fabric;
};

/*
 * A child that imports what it reads from the pipe, checks the first
 * bytes hold "shared", writes "child" there and exits 0.  A refused
 * import exits 91 (ACL_ERROR_RT_NO_PERMISSION) or 92
 * (ACL_ERROR_RT_PARAM_INVALID: no such handle); other failures 10..17.
 */
static int import_child(int rfd, void *unused)
{
	aclrtDrvMemHandle h;
	struct msg m;
	char *v;
	int ret;

	(void)unused;
	if (read(rfd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		return 10;
	if (aclrtSetDevice(0))
		return 11;
	if (!m.type)
		ret = aclrtMemImportFromShareableHandle(m.word, 0, &h);
	else
		ret = aclrtMemImportFromShareableHandleV2(
			m.type == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC ?
			(void *)&m.fabric : (void *)&m.word,
			(aclrtMemSharedHandleType)m.type, 0, &h);
	if (ret == ACL_ERROR_RT_NO_PERMISSION)
		return 91;
	if (ret == ACL_ERROR_RT_PARAM_INVALID)
		return 92;
	if (ret)
		return 12;
	if (aclrtReserveMemAddress((void **)&v, SZ_64K, 0, NULL, 0))
		return 13;
	if (aclrtMapMem(v, SZ_64K, 0, h, 0))
		return 14;
	if (memcmp(v, "shared", 7))
		return 15;
	if (aclrtMemcpy(v, SZ_64K, "child", 6,
			ACL_MEMCPY_HOST_TO_DEVICE))
		return 16;
	if (aclrtUnmapMem(v) || aclrtFreePhysical(h) ||
	    aclrtReleaseMemAddress(v))
		return 17;
	aclrtResetDevice(0);
	return 0;
}

static pid_t importer(int *wfd)
{
	return acltest_spawn(import_child, NULL, wfd);
}

static int send_reap(pid_t pid, int wfd, const struct msg *m)
{
	ck_assert_int_eq(write(wfd, m, sizeof(*m)), (ssize_t)sizeof(*m));
	close(wfd);
	return acltest_reap(pid);
}

START_TEST(shareable_v1)
{
	aclrtDrvMemHandle h = phys(SZ_64K, ACL_MEM_NORMAL), imp;
	struct msg m;
	uint64_t sh, sh2;
	int32_t pid;
	char *v;
	pid_t c;
	int wfd;

	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, SZ_64K, 0, NULL,
						0), 0);
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 0, h, 0), 0);
	memcpy(v, "shared", 7);

	ck_assert_int_eq(aclrtMemExportToShareableHandle(NULL,
			 ACL_MEM_HANDLE_TYPE_NONE, 0, &sh),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
			 ACL_MEM_HANDLE_TYPE_NONE, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
			 ACL_MEM_HANDLE_TYPE_POSIX, 0, &sh),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
			 ACL_MEM_HANDLE_TYPE_NONE, 2, &sh),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
			 ACL_MEM_HANDLE_TYPE_NONE, 0, &sh), 0);
	/* One shareable handle per handle. */
	ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
			 ACL_MEM_HANDLE_TYPE_NONE, 0, &sh2),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Import is for other processes. */
	ck_assert_int_eq(aclrtMemImportFromShareableHandle(sh, 0, &imp),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemImportFromShareableHandle(sh,
			 (int32_t)acltest_device_count(), &imp),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtMemImportFromShareableHandle(sh, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemSetPidToShareableHandle(sh, NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	pid = getpid();
	ck_assert_int_eq(aclrtMemSetPidToShareableHandle(sh, &pid, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemSetPidToShareableHandle(sh + 1, &pid, 1),
			 ACL_ERROR_RT_PARAM_INVALID);

	memset(&m, 0, sizeof(m));
	m.word = sh;
	/* Not on the list (there is none yet): refused. */
	c = importer(&wfd);
	ck_assert_int_eq(send_reap(c, wfd, &m), 91);
	/* On the list: imported, mapped, written. */
	c = importer(&wfd);
	pid = c;
	ck_assert_int_eq(aclrtMemSetPidToShareableHandle(sh, &pid, 1), 0);
	ck_assert_int_eq(send_reap(c, wfd, &m), 0);
	ck_assert_str_eq(v, "child");
	/* A key that names nothing. */
	c = importer(&wfd);
	m.word = sh ^ 1;
	ck_assert_int_eq(send_reap(c, wfd, &m), 92);
	m.word = sh;

	/* Freeing the handle (even still mapped) revokes the shareable one. */
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
	c = importer(&wfd);
	pid = c;
	ck_assert_int_eq(aclrtMemSetPidToShareableHandle(sh, &pid, 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(send_reap(c, wfd, &m), 92);
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
}
END_TEST

START_TEST(shareable_v2)
{
	aclrtDrvMemHandle h = phys(SZ_64K, ACL_MEM_NORMAL);
	aclrtDrvMemHandle g = phys(SZ_64K, ACL_MEM_NORMAL);
	struct msg m;
	int32_t pid;
	char *v, *w;
	pid_t c;
	int wfd;

	ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, 2 * SZ_64K, 0,
						NULL, 0), 0);
	w = v + SZ_64K;
	ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 0, h, 0), 0);
	ck_assert_int_eq(aclrtMapMem(w, SZ_64K, 0, g, 0), 0);
	memcpy(v, "shared", 7);
	memcpy(w, "shared", 7);
	memset(&m, 0, sizeof(m));

	ck_assert_int_eq(aclrtMemExportToShareableHandleV2(h, 0,
			 (aclrtMemSharedHandleType)3, &m.word),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemExportToShareableHandleV2(h, 0,
			 ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, NULL),
			 ACL_ERROR_INVALID_PARAM);

	/* DEFAULT: a 64-bit handle with a pid list, as V1. */
	ck_assert_int_eq(aclrtMemExportToShareableHandleV2(h, 0,
			 ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &m.word), 0);
	m.type = ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT;
	c = importer(&wfd);
	ck_assert_int_eq(send_reap(c, wfd, &m), 91);
	c = importer(&wfd);
	pid = c;
	ck_assert_int_eq(aclrtMemSetPidToShareableHandleV2(&m.word,
			 ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &pid, 1), 0);
	ck_assert_int_eq(send_reap(c, wfd, &m), 0);
	ck_assert_str_eq(v, "child");

	/* FABRIC without pid validation: any process of this user. */
	ck_assert_int_eq(aclrtMemExportToShareableHandleV2(g,
			 ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
			 ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &m.fabric), 0);
	m.type = ACL_MEM_SHARE_HANDLE_TYPE_FABRIC;
	c = importer(&wfd);
	ck_assert_int_eq(send_reap(c, wfd, &m), 0);
	ck_assert_str_eq(w, "child");
	ck_assert_int_eq(aclrtMemImportFromShareableHandleV2(&m.fabric,
			 ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 1, &h),
			 ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtUnmapMem(w), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
	ck_assert_int_eq(aclrtFreePhysical(g), 0);
}
END_TEST

/*
 * Pid validation disabled: a 64-bit handle (V1, V2 DEFAULT) admits any
 * process of this user, listed or not, as the 128-bit FABRIC one does.
 */
START_TEST(shareable_no_validation)
{
	static const uint32_t types[] = {
		0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		aclrtDrvMemHandle h = phys(SZ_64K, ACL_MEM_NORMAL);
		struct msg m;
		char *v;
		pid_t c;
		int wfd;

		ck_assert_int_eq(aclrtReserveMemAddress((void **)&v, SZ_64K, 0,
							NULL, 0), 0);
		ck_assert_int_eq(aclrtMapMem(v, SZ_64K, 0, h, 0), 0);
		memcpy(v, "shared", 7);
		memset(&m, 0, sizeof(m));
		m.type = types[i];
		if (!m.type)
			ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
					 ACL_MEM_HANDLE_TYPE_NONE,
					 ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
					 &m.word), 0);
		else
			ck_assert_int_eq(aclrtMemExportToShareableHandleV2(h,
					 ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
					 ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
					 &m.word), 0);
		c = importer(&wfd);
		ck_assert_int_eq(send_reap(c, wfd, &m), 0);
		ck_assert_str_eq(v, "child");
		ck_assert_int_eq(aclrtUnmapMem(v), 0);
		ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
		ck_assert_int_eq(aclrtFreePhysical(h), 0);
	}
}
END_TEST

/*
 * A module older than the rule that a 64-bit key without a pid list admits
 * the exporter's user refuses KEY64 | ANY_PID with EINVAL.  The child plays
 * such a module: a seccomp filter fails its IPC_EXPORT ioctls with EINVAL.
 * Without pid validation the library must then say the feature is missing
 * (207000), for V1 and V2's DEFAULT type; with validation, EINVAL is an
 * ordinary refusal (107000); and the handle is not lost.
 */
static int refuse_ipc_export(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		/* the command's 32 bits: the low word of args[1] */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 (uint32_t)NPU_MEM_IOCTL_IPC_EXPORT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int old_module_child(int rfd, void *unused)
{
	aclrtPhysicalMemProp p = prop_of(ACL_MEM_NORMAL);
	aclrtDrvMemHandle h = NULL;
	uint64_t w = 0;
	int ret = 0;

	(void)rfd;
	(void)unused;
	if (aclrtSetDevice(0) || aclrtMallocPhysical(&h, SZ_64K, &p, 0))
		return 10;
	if (refuse_ipc_export())
		return 11;
	if (aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE,
			ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, &w) !=
	    ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
		ret |= 1;
	if (aclrtMemExportToShareableHandleV2(h,
			ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
			ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &w) !=
	    ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
		ret |= 2;
	if (aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE,
			ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &w) !=
	    ACL_ERROR_RT_PARAM_INVALID)
		ret |= 4;
	if (aclrtFreePhysical(h))
		ret |= 8;
	aclrtResetDevice(0);
	return ret;
}

START_TEST(shareable_old_module)
{
	int ret = acltest_reap(acltest_spawn(old_module_child, NULL, NULL));

	ck_assert_msg(ret == 0, "child: %d (1, 2: no 207000 without validation; "
		      "4: not 107000 with it; 8: the handle was lost; 10, 11: "
		      "setup)", ret);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_vmm");

	acltest_require_device();
	nm_add_fx(s, malloc_physical_rules, 30, &acltest_device);
	nm_add_fx(s, reserve_rules, 30, &acltest_device);
	nm_add_fx(s, map_rules, 30, &acltest_device);
	nm_add_fx(s, three_piece_tensor, 30, &acltest_device);
	nm_add_fx(s, offsets_alias, 30, &acltest_device);
	nm_add_fx(s, access_flags, 60, &acltest_device);
	nm_add_fx(s, access_all_or_nothing, 30, &acltest_device);
	nm_add_fx(s, free_while_mapped_and_retain, 30, &acltest_device);
	nm_add_fx(s, shareable_v1, 60, &acltest_device);
	nm_add_fx(s, shareable_v2, 60, &acltest_device);
	nm_add_fx(s, shareable_no_validation, 60, &acltest_device);
	nm_add_fx(s, shareable_old_module, 60, &acltest_device);
	return acltest_run(s);
}
