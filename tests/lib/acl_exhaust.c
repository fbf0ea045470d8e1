// SPDX-License-Identifier: MIT
/*
 * Memory exhaustion through the ACL API, with the driver's default limits:
 * aclrtMallocCached(64 MiB) and a write to every page, again and again,
 * must end in ACL_ERROR_RT_MEMORY_ALLOCATION (207001) with the process
 * alive, for every page policy; not in the OOM killer.  Then, after
 * aclrtFree of everything, allocating works again.  Twice per policy:
 *  - pool off (NPU_MEM_POOL_MAX=0): the driver's counters return to where
 *    they were after the frees;
 *  - the default pool: the freed buffers are cached, so a second fill with
 *    another policy can only reach the limits if the library gives the
 *    cache back when memory runs out; when it fails, nothing of the first
 *    fill is left in the driver.
 * The kernel's oom_kill count (/proc/vmstat) must not move, and when the
 * allocations fail, MemAvailable must still hold the driver's default
 * reserve (1/16 of RAM) for the rest of the system.  Skips (77)
 * unless the module's max_bytes and reserve_bytes are at their default 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acltest.h"
#include "acl/acl.h"

#define MiB ((size_t)1 << 20)
#define STEP (64 * MiB)
#define MAXBUF 1024

static const struct {
	const char *name;
	aclrtMemMallocPolicy policy;
} policies[] = {
	{ "HUGE_FIRST", ACL_MEM_MALLOC_HUGE_FIRST },
	{ "HUGE_ONLY", ACL_MEM_MALLOC_HUGE_ONLY },
	{ "NORMAL_ONLY", ACL_MEM_MALLOC_NORMAL_ONLY },
};
#define NPOL (sizeof(policies) / sizeof(policies[0]))

static void *bufs[MAXBUF];

static long oom_kills(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "oom_kill %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static unsigned long long mem_available(void)
{
	char line[128];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb << 10;
}

static unsigned long long avail_at_fail;

/*
 * Write the buffer so that every page is really there.  Under valgrind,
 * which instruments every store, one byte per page and the last one: the
 * kernel sees the same faults, and nine 1.5 GiB memsets took most of the
 * valgrind guest's time.
 */
static void touch(void *p, int v)
{
	unsigned char *b = p;

	if (!acltest_under_valgrind()) {
		memset(b, v, STEP);
		return;
	}
	for (size_t off = 0; off < STEP; off += 4096)
		b[off] = v;
	b[STEP - 1] = v;
}

/* Allocate and fill STEP-sized buffers until failure; the count. */
static int fill(int pi, aclError *err)
{
	int n = 0;

	for (;;) {
		aclError ret = aclrtMallocCached(&bufs[n], STEP,
						 policies[pi].policy);

		if (ret != ACL_SUCCESS) {
			*err = ret;
			break;
		}
		touch(bufs[n], n + 1);
		if (++n == MAXBUF) {
			*err = ACL_SUCCESS;
			break;
		}
	}
	avail_at_fail = mem_available();
	printf("%s: %d x 64 MiB, then %d; MemAvailable %llu MiB\n",
	       policies[pi].name, n, *err, avail_at_fail >> 20);
	return n;
}

static void free_all(int n)
{
	for (int i = 0; i < n; i++) {
		unsigned char *b = bufs[i];

		/* what was written is still there */
		ck_assert_msg(b[0] == (unsigned char)(i + 1) &&
			      b[STEP - 1] == (unsigned char)(i + 1),
			      "buffer %d lost its contents", i);
		ck_assert_int_eq(aclrtFree(bufs[i]), ACL_SUCCESS);
	}
}

static void check_fill(int pi, int n, aclError err, size_t room,
		       const struct npu_mem_info *info)
{
	/* the driver keeps 1/16 of RAM available to everything else; a
	 * few MiB of slack for the kernel's own moves */
	unsigned long long reserve = info->total_ram / 16;

	ck_assert_msg(avail_at_fail + 32 * MiB >= reserve, "%s: MemAvailable "
		      "%llu MiB when the allocations failed, below the "
		      "driver's default reserve of %llu MiB", policies[pi].name,
		      avail_at_fail >> 20, reserve >> 20);
	ck_assert_msg(err == ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: after %d "
		      "buffers aclrtMallocCached returned %d, want %d",
		      policies[pi].name, n, err,
		      ACL_ERROR_RT_MEMORY_ALLOCATION);
	/*
	 * it ran into the limits, not into something else early; HUGE_ONLY
	 * may run out of free 2 MiB blocks at any point (fragmented memory,
	 * seen on the debug kernel): that is its documented failure
	 */
	if (policies[pi].policy != ACL_MEM_MALLOC_HUGE_ONLY)
		ck_assert_msg((size_t)n * STEP >= room / 4, "%s: only %d x 64 "
			      "MiB of about %zu MiB", policies[pi].name, n,
			      room / MiB);
}

START_TEST(exhaust)
{
	int pi = _i % NPOL, other = pi == 2 ? 0 : 2;
	int pooled = _i >= (int)NPOL;
	struct acltest_counters c0, c1;
	struct npu_mem_info info;
	long oom0 = oom_kills();
	aclError err;
	size_t room;
	void *p;
	int n;

	if (pooled)
		unsetenv("NPU_MEM_POOL_MAX");
	else
		setenv("NPU_MEM_POOL_MAX", "0", 1);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	acltest_driver_info(&info);
	acltest_counters(&c0);
	room = info.limit_bytes - info.allocated_bytes;
	printf("%s, pool %s: limit_bytes %llu MiB, allocated %llu MiB\n",
	       policies[pi].name, pooled ? "on" : "off",
	       (unsigned long long)(info.limit_bytes >> 20),
	       (unsigned long long)(info.allocated_bytes >> 20));

	n = fill(pi, &err);
	check_fill(pi, n, err, room, &info);
	free_all(n);
	if (!pooled) {
		acltest_counters(&c1);
		ck_assert_uint_eq(c1.buffers, c0.buffers);
		ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
		/* room again */
		ck_assert_int_eq(aclrtMallocCached(&p, STEP,
						   policies[pi].policy),
				 ACL_SUCCESS);
		touch(p, 0x5a);
		ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	} else {
		/* the pool keeps some of the freed buffers; another policy
		 * cannot use them unless the library gives them back */
		int n2 = fill(other, &err);

		check_fill(other, n2, err, room, &info);
		acltest_counters(&c1);
		ck_assert_msg(c1.buffers == c0.buffers + n2, "after the second "
			      "fill failed the driver holds %llu buffers, the "
			      "%d live ones and %llu more (the pool was not "
			      "emptied)", (unsigned long long)c1.buffers, n2,
			      (unsigned long long)(c1.buffers - c0.buffers -
						   n2));
		free_all(n2);
		ck_assert_int_eq(aclrtMallocCached(&p, STEP,
						   policies[pi].policy),
				 ACL_SUCCESS);
		touch(p, 0x5a);
		ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	}
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
	if (oom0 >= 0)
		ck_assert_msg(oom_kills() == oom0, "the OOM killer killed %ld "
			      "processes during the test", oom_kills() - oom0);
}
END_TEST

static int param(const char *name, uint64_t *v)
{
	char path[96];
	unsigned long long x;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/module/npu_mem/parameters/%s",
		 name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = x;
	return ok ? 0 : -EINVAL;
}

int main(void)
{
	uint64_t max_bytes = 0, reserve = 0;
	Suite *s;
	int r;

	acltest_require_device();
	if (param("max_bytes", &max_bytes)) {
		printf("cannot read the module's max_bytes\n");
		return 1;
	}
	r = param("reserve_bytes", &reserve);
	if (r == -ENOENT)
		printf("note: the module has no reserve_bytes parameter\n");
	else if (r) {
		printf("cannot read the module's reserve_bytes\n");
		return 1;
	}
	if (max_bytes || reserve) {
		printf("SKIP: tests the default limits, but max_bytes=%llu "
		       "reserve_bytes=%llu\n", (unsigned long long)max_bytes,
		       (unsigned long long)reserve);
		return 77;
	}
	/* Made only now: a skip must not leave it behind for valgrind. */
	s = suite_create("acl_exhaust");
	nm_add_loop(s, exhaust, 2 * NPOL, 600, NULL);
	return acltest_run(s);
}
