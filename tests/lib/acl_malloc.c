// SPDX-License-Identifier: MIT
/*
 * aclrtMalloc, aclrtMallocCached, aclrtMallocAlign32, aclrtMallocHost and
 * their frees against the driver: every policy, CANN's rounding seen
 * through range checks, alignment, page sizes, the driver's counters, the
 * read-only flag, memory too large (207001, nothing left allocated), and
 * every error of the free calls.  The pool is off (NPU_MEM_POOL_MAX=0) so
 * each call reaches the driver; tests/host/acl_pool.c (its logic) and
 * tests/lib/acl_pool_classes.c (its classes, with the driver) cover the pool.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "acltest.h"
#include "acl/acl.h"

#define MiB ((size_t)1 << 20)

typedef aclError (*alloc_fn)(void **, size_t, aclrtMemMallocPolicy);

static const struct {
	const char *name;
	alloc_fn fn;
	int pad;	/* +32 after rounding to 32 */
} allocators[] = {
	{ "aclrtMalloc", aclrtMalloc, 1 },
	{ "aclrtMallocCached", aclrtMallocCached, 1 },
	{ "aclrtMallocAlign32", aclrtMallocAlign32, 0 },
};

static bool have_1g(void)
{
	struct npu_mem_info info;

	acltest_driver_info(&info);
	return info.page_sizes & NPU_MEM_PAGE_1G;
}

static void setup(void)
{
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
}

static void teardown(void)
{
	aclrtResetDevice(0);
}

static size_t reserved(size_t size, int pad)
{
	return (size + 31) / 32 * 32 + (pad ? 32 : 0);
}

START_TEST(every_allocator_every_policy)
{
	static const int policies[] = {
		ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY,
		ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEM_MALLOC_HUGE_FIRST_P2P,
		ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
		99, 0x4000,
	};
	static const size_t sizes[] = { 1, 100, 4096, MiB, 3 * MiB + 5 };
	size_t a, p, s;

	for (a = 0; a < 3; a++)
	for (p = 0; p < sizeof(policies) / sizeof(policies[0]); p++)
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t want = reserved(sizes[s], allocators[a].pad);
		unsigned char *ptr = NULL;
		aclError ret;

		ret = allocators[a].fn((void **)&ptr, sizes[s],
				       (aclrtMemMallocPolicy)policies[p]);
		ck_assert_msg(ret == ACL_SUCCESS, "%s(%zu, %d) = %d",
			      allocators[a].name, sizes[s], policies[p], ret);
		ck_assert_ptr_nonnull(ptr);
		ck_assert_msg((uintptr_t)ptr % 64 == 0, "%p not 64-aligned", ptr);
		/* The whole reservation is usable by the CPU... */
		memset(ptr, 0xa5, want);
		ck_assert_int_eq(ptr[want - 1], 0xa5);
		/* ...and is exactly what range calls accept. */
		ck_assert_int_eq(aclrtMemset(ptr, want, 1, want), ACL_SUCCESS);
		ck_assert_int_eq(aclrtMemset(ptr, want + 1, 1, want + 1),
				 ACL_ERROR_RT_PARAM_INVALID);
		ck_assert_int_eq(aclrtMemFlush(ptr + want - 1, 1), ACL_SUCCESS);
		ck_assert_int_eq(aclrtMemFlush(ptr + want - 1, 2),
				 ACL_ERROR_RT_PARAM_INVALID);
		ck_assert_int_eq(aclrtFree(ptr), ACL_SUCCESS);
	}
}
END_TEST

START_TEST(rounding_examples)
{
	void *p;

	/* 100 -> 160 (Malloc/Cached), 128 (Align32) */
	ck_assert_int_eq(aclrtMalloc(&p, 100, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(p, 160, 0, 160), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset((char *)p + 160, 1, 0, 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocAlign32(&p, 100, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(p, 128, 0, 128), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(p, 129, 0, 129), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocCached(&p, 32, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(p, 64, 0, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(p, 65, 0, 65), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
}
END_TEST

START_TEST(huge1g_policies)
{
	void *p = NULL;
	aclError want = have_1g() ? ACL_SUCCESS : ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	aclError r;

	r = aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE1G_ONLY);
	/* With 1 GiB pages a 2 GiB guest may still lack a free GiB. */
	ck_assert_msg(r == want || (want == ACL_SUCCESS &&
				    r == ACL_ERROR_RT_MEMORY_ALLOCATION),
		      "HUGE1G_ONLY = %d, want %d", r, want);
	if (r == ACL_SUCCESS) {
		/* No +32 padding for the 1 GiB policies: 4096 exactly. */
		ck_assert_int_eq(aclrtMemset(p, 4096, 0, 4096), ACL_SUCCESS);
		ck_assert_int_eq(aclrtMemset(p, 4097, 0, 4097),
				 ACL_ERROR_RT_PARAM_INVALID);
		ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	}
	r = aclrtMallocCached(&p, 4096, ACL_MEM_MALLOC_HUGE1G_ONLY);
	ck_assert(r == want || r == ACL_ERROR_RT_MEMORY_ALLOCATION);
	if (r == ACL_SUCCESS)
		ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	/* Cached refuses the P2P variant: out of range, so it works. */
	ck_assert_int_eq(aclrtMallocCached(&p, 4096,
					   ACL_MEM_MALLOC_HUGE1G_ONLY_P2P),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
}
END_TEST

static uint32_t page_size_of(void *p)
{
	aclrtPtrAttributes a;

	ck_assert_int_eq(aclrtPointerGetAttributes(p, &a), ACL_SUCCESS);
	ck_assert_int_eq(a.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
	return a.pageSize;
}

START_TEST(page_policies_reach_the_driver)
{
	struct acltest_counters c0, c1;
	void *p;

	acltest_counters(&c0);
	ck_assert_int_eq(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.normal_pages - c0.normal_pages, 1);
	ck_assert_uint_eq(c1.huge_pages, c0.huge_pages);
	ck_assert_uint_eq(c1.allocated_bytes - c0.allocated_bytes, 4096);
	ck_assert_uint_eq(page_size_of(p), 4096);
	ck_assert_int_eq(aclrtFree(p), 0);

	/* HUGE_ONLY: 2 MiB chunks only, and a 2 MiB aligned address. */
	ck_assert_int_eq(aclrtMalloc(&p, 3 * MiB, ACL_MEM_MALLOC_HUGE_ONLY), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.huge_pages - c0.huge_pages, 2);
	ck_assert_uint_eq(c1.normal_pages, c0.normal_pages);
	ck_assert_uint_eq((uintptr_t)p % (2 * MiB), 0);
	ck_assert_uint_eq(page_size_of(p), 2 * MiB);
	ck_assert_int_eq(aclrtFree(p), 0);

	/* HUGE_FIRST: small pages up to 1 MiB, huge pages above. */
	ck_assert_int_eq(aclrtMalloc(&p, MiB - 32, ACL_MEM_MALLOC_HUGE_FIRST), 0);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.huge_pages, c0.huge_pages);
	ck_assert_uint_eq(page_size_of(p), 4096);
	ck_assert_int_eq(aclrtFree(p), 0);
	ck_assert_int_eq(aclrtMalloc(&p, 4 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), 0);
	acltest_counters(&c1);
	ck_assert_uint_ge(c1.huge_pages - c0.huge_pages, 1);
	ck_assert_uint_eq(page_size_of(p), 2 * MiB);
	ck_assert_int_eq(aclrtFree(p), 0);

	/* Out of range: >= 2 MiB huge, else normal (documented rule). */
	ck_assert_int_eq(aclrtMalloc(&p, 2 * MiB, (aclrtMemMallocPolicy)42), 0);
	ck_assert_uint_eq(page_size_of(p), 2 * MiB);
	ck_assert_int_eq(aclrtFree(p), 0);
	ck_assert_int_eq(aclrtMalloc(&p, 2 * MiB - 1, (aclrtMemMallocPolicy)42), 0);
	ck_assert_uint_eq(page_size_of(p), 4096);
	ck_assert_int_eq(aclrtFree(p), 0);

	/* Freed: the driver's counters are back (the pool is off). */
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
}
END_TEST

START_TEST(too_large_fails_cleanly)
{
	struct acltest_counters c0, c1;
	struct npu_mem_info info;
	size_t big;
	void *p = (void *)1;
	size_t a;

	acltest_driver_info(&info);
	acltest_counters(&c0);
	/* Above what the driver may ever hold: E2BIG -> out of memory. */
	big = info.limit_bytes + 2 * MiB;
	for (a = 0; a < 3; a++) {
		ck_assert_int_eq(allocators[a].fn(&p, big, ACL_MEM_MALLOC_HUGE_ONLY),
				 ACL_ERROR_RT_MEMORY_ALLOCATION);
		ck_assert_int_eq(allocators[a].fn(&p, big, ACL_MEM_MALLOC_NORMAL_ONLY),
				 ACL_ERROR_RT_MEMORY_ALLOCATION);
		ck_assert_int_eq(allocators[a].fn(&p, big, ACL_MEM_MALLOC_HUGE_FIRST),
				 ACL_ERROR_RT_MEMORY_ALLOCATION);
	}
	ck_assert_int_eq(aclrtMallocHost(&p, big), ACL_ERROR_RT_MEMORY_ALLOCATION);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
	ck_assert_uint_eq(c1.huge_pages, c0.huge_pages);
	ck_assert_uint_eq(c1.normal_pages, c0.normal_pages);
}
END_TEST

static uint64_t saved_max_bytes = UINT64_MAX;

START_TEST(over_the_cap_fails_cleanly)
{
	struct acltest_counters c0, c1;
	void *p, *q;

	acltest_counters(&c0);
	/* Cap the driver 8 MiB above what is allocated now. */
	ck_assert_int_eq(acltest_set_max_bytes(c0.allocated_bytes + 8 * MiB,
					       NULL), 0);
	/* 6 MiB + 32 reserved: 6 MiB + 4 KiB of small pages. */
	ck_assert_int_eq(aclrtMalloc(&p, 6 * MiB, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	/* HUGE_ONLY that cannot be had: 207001 and nothing left behind. */
	ck_assert_int_eq(aclrtMalloc(&q, 4 * MiB, ACL_MEM_MALLOC_HUGE_ONLY),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(aclrtMallocCached(&q, 4 * MiB, ACL_MEM_MALLOC_NORMAL_ONLY),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers + 1);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes + 6 * MiB + 4096);
	ck_assert_int_eq(aclrtFree(p), 0);
	/* Room again once freed (the pool is off): 6 MiB of huge pages. */
	ck_assert_int_eq(aclrtMalloc(&q, 4 * MiB, ACL_MEM_MALLOC_HUGE_ONLY), 0);
	ck_assert_int_eq(aclrtFree(q), 0);
	ck_assert_int_eq(acltest_set_max_bytes(saved_max_bytes, NULL), 0);
}
END_TEST

START_TEST(argument_errors)
{
	void *p = NULL;
	size_t a;

	for (a = 0; a < 3; a++) {
		ck_assert_int_eq(allocators[a].fn(NULL, 100, 0),
				 ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(allocators[a].fn(&p, 0, 0), ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(allocators[a].fn(&p, SIZE_MAX, 0),
				 ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(allocators[a].fn(&p, SIZE_MAX - 20, 2),
				 ACL_ERROR_INVALID_PARAM);
	}
	ck_assert_int_eq(aclrtMallocHost(NULL, 1), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(free_errors)
{
	char *p, *h, *heap = malloc(64);
	char stack[64];

	ck_assert_int_eq(aclrtMalloc((void **)&p, 8192, 2), 0);
	ck_assert_int_eq(aclrtMallocHost((void **)&h, 8192), 0);
	ck_assert_int_eq(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
	/* Not the start of a live buffer. */
	ck_assert_int_eq(aclrtFree(p + 64), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(heap), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(stack), ACL_ERROR_RT_PARAM_INVALID);
	/* The wrong free for the kind. */
	ck_assert_int_eq(aclrtFree(h), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeHost(p), ACL_ERROR_RT_PARAM_INVALID);
	/* None of that freed anything. */
	ck_assert_int_eq(aclrtMemset(p, 8192, 3, 8192), 0);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFreeHost(h), ACL_SUCCESS);
	/* Double free. */
	ck_assert_int_eq(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeHost(h), ACL_ERROR_RT_PARAM_INVALID);
	free(heap);
}
END_TEST

START_TEST(freed_memory_is_unmapped)
{
	char *p;

	ck_assert_int_eq(aclrtMalloc((void **)&p, 4096, 2), 0);
	ck_assert_int_eq(acltest_probe(p, true), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	/* Nothing else was mapped there in between: the access faults. */
	if (!acltest_under_valgrind())
		ck_assert_int_ne(acltest_probe(p, false), 0);
	ck_assert_int_eq(aclrtMemset(p, 1, 0, 1), ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

START_TEST(fresh_memory_holds_no_old_data)
{
	unsigned char *p;
	size_t i, j, n = 4 * MiB;

	/* Not CANN's contract, but the driver must never leak old contents. */
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(aclrtMalloc((void **)&p, n, (aclrtMemMallocPolicy)i), 0);
		for (j = 0; j < n && !p[j]; j++)
			;
		ck_assert_msg(j == n, "byte %zu of a fresh buffer is %#x", j, p[j]);
		memset(p, 0xee, n);
		ck_assert_int_eq(aclrtFree(p), 0);
	}
}
END_TEST

START_TEST(read_only_buffers)
{
	aclrtMemMallocPolicy ro = (aclrtMemMallocPolicy)
		(ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_ACCESS_USER_SPACE_READONLY);
	char host[64] = { 1 };
	char *p;

	ck_assert_int_eq(aclrtMalloc((void **)&p, 4096, ro), ACL_SUCCESS);
	ck_assert_int_eq(acltest_probe(p, false), 0);
	ck_assert_int_ne(acltest_probe(p, true), 0);
	/* Writes through the API are refused, reads work. */
	ck_assert_int_eq(aclrtMemset(p, 64, 0, 64), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(p, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(host, 64, p, 64, ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_SUCCESS);
	ck_assert_int_eq(host[0], 0);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
}
END_TEST

START_TEST(host_memory)
{
	aclrtPtrAttributes a;
	unsigned char *h;

	ck_assert_int_eq(aclrtMallocHost((void **)&h, 5000), ACL_SUCCESS);
	ck_assert_uint_eq((uintptr_t)h % 64, 0);
	memset(h, 0x11, 5000);
	ck_assert_int_eq(aclrtPointerGetAttributes(h + 10, &a), ACL_SUCCESS);
	ck_assert_int_eq(a.location.type, ACL_MEM_LOCATION_TYPE_HOST);
	ck_assert_int_eq(aclrtFreeHost(h), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocHost((void **)&h, 5 * MiB), ACL_SUCCESS);
	memset(h, 0x22, 5 * MiB);
	ck_assert_int_eq(aclrtFreeHost(h), ACL_SUCCESS);
}
END_TEST

START_TEST(many_live_buffers)
{
	enum { N = 2000 };
	unsigned char **p = calloc(N, sizeof(*p));
	struct acltest_counters c0, c1;
	int i;

	acltest_counters(&c0);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(aclrtMalloc((void **)&p[i], 100 + i, 2), 0);
		p[i][0] = (unsigned char)i;
	}
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers - c0.buffers, N);
	/* Lookups land in the right buffer, interior pointers too. */
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(p[i][0], (unsigned char)i);
		ck_assert_int_eq(aclrtMemset(p[i] + 50, 100, i, 100), ACL_SUCCESS);
	}
	for (i = 0; i < N; i += 2)
		ck_assert_int_eq(aclrtFree(p[i]), 0);
	for (i = 1; i < N; i += 2) {
		ck_assert_int_eq(p[i][60], (unsigned char)i);
		ck_assert_int_eq(aclrtFree(p[i]), 0);
	}
	acltest_counters(&c1);
	ck_assert_uint_eq(c1.buffers, c0.buffers);
	free(p);
}
END_TEST

static const struct nm_fixture fixture = {
	.setup = setup, .teardown = teardown,
};

int main(void)
{
	Suite *s = suite_create("acl_malloc");
	int ret;

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "0", 1);
	if (acltest_get_max_bytes(&saved_max_bytes)) {
		printf("cannot read/write the module's max_bytes (root?)\n");
		return 1;
	}
	nm_add_fx(s, every_allocator_every_policy, 120, &fixture);
	nm_add_fx(s, rounding_examples, 30, &fixture);
	nm_add_fx(s, huge1g_policies, 60, &fixture);
	nm_add_fx(s, page_policies_reach_the_driver, 30, &fixture);
	nm_add_fx(s, too_large_fails_cleanly, 30, &fixture);
	nm_add_fx(s, over_the_cap_fails_cleanly, 30, &fixture);
	nm_add_fx(s, argument_errors, 30, &fixture);
	nm_add_fx(s, free_errors, 30, &fixture);
	nm_add_fx(s, freed_memory_is_unmapped, 30, &fixture);
	nm_add_fx(s, fresh_memory_holds_no_old_data, 60, &fixture);
	nm_add_fx(s, read_only_buffers, 30, &fixture);
	nm_add_fx(s, host_memory, 30, &fixture);
	nm_add_fx(s, many_live_buffers, 120, &fixture);
	ret = acltest_run(s);
	/* Whatever a failed test left behind. */
	acltest_set_max_bytes(saved_max_bytes, NULL);
	return ret;
}
