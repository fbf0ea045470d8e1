// SPDX-License-Identifier: MIT
/*
 * 16 threads allocating, filling, copying, checking and freeing buffers of
 * random sizes and policies for a bounded time, through every allocator;
 * each buffer carries its own pattern, so memory handed to two owners or
 * overwritten by a neighbour is caught.  At the end the driver's counters
 * (bytes, buffers, pages; read through a file of the test's own) must be
 * back to where they started.  Run with the pool off and on.
 *
 * ACLTEST_STRESS_SECS sets the time per run (default 4 s); a run goes on
 * past it until it made MIN_OPS operations, up to the common ceiling
 * (nm_span): a slow guest, or valgrind, takes longer and does not fail.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"
#include "nmtest_sys.h"

#define THREADS 16
#define LIVE 8
#define MIN_OPS 100

static char self[4096];
static struct nm_span span;
static _Atomic long errors, ops, oom;

#define stress_fail(...) do {							\
	if (atomic_fetch_add(&errors, 1) < 10) {			\
		fprintf(stderr, "stress: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
	}								\
} while (0)

struct live {
	unsigned char *p;
	size_t size;
	uint32_t seed;
	int host;
};

static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void check_buf(const struct live *b)
{
	size_t off = acltest_verify(b->p, b->size, b->seed);

	if (off != SIZE_MAX)
		stress_fail("buffer %p (%zu bytes, seed %u) corrupt at %zu", b->p,
		     b->size, b->seed, off);
}

static void release(struct live *b)
{
	aclError r;

	check_buf(b);
	r = b->host ? aclrtFreeHost(b->p) : aclrtFree(b->p);
	if (r)
		stress_fail("free %p = %d", b->p, r);
	b->p = NULL;
}

static void *worker(void *arg)
{
	uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	struct live live[LIVE] = { { 0 } };
	uint32_t seed = (uint32_t)(uintptr_t)arg << 20;
	aclError r;
	int i, k;

	if ((r = aclrtSetDevice(0))) {
		stress_fail("aclrtSetDevice = %d", r);
		return NULL;
	}
	while (nm_span_more(&span, atomic_load(&ops) >= MIN_OPS)) {
		k = (int)(next(&rng) % LIVE);
		atomic_fetch_add(&ops, 1);
		if (!live[k].p) {
			/* Mostly small, sometimes up to 4 MiB. */
			size_t size = next(&rng) % 16 ? 1 + next(&rng) % 65536 :
				      1 + next(&rng) % (4 << 20);
			int policy = (int)(next(&rng) % 3), how = (int)(next(&rng) % 4);
			void *p = NULL;

			if (how == 0)
				r = aclrtMalloc(&p, size, policy);
			else if (how == 1)
				r = aclrtMallocCached(&p, size, policy);
			else if (how == 2)
				r = aclrtMallocAlign32(&p, size, policy);
			else
				r = aclrtMallocHost(&p, size);
			if (r == ACL_ERROR_RT_MEMORY_ALLOCATION &&
			    policy == ACL_MEM_MALLOC_HUGE_ONLY) {
				/* 2 MiB pages can run short: a clean failure. */
				atomic_fetch_add(&oom, 1);
				continue;
			}
			if (r) {
				stress_fail("alloc(%zu, %d, how %d) = %d", size, policy,
				     how, r);
				continue;
			}
			live[k].p = p;
			live[k].size = size;
			live[k].seed = ++seed;
			live[k].host = how == 3;
			if (!live[k].host && next(&rng) % 2) {
				/* Through the API: memset, then the pattern. */
				if ((r = aclrtMemset(p, size, (int)seed, size)))
					stress_fail("memset = %d", r);
			}
			acltest_fill(p, size, live[k].seed);
			continue;
		}
		switch (next(&rng) % 4) {
		case 0:
			release(&live[k]);
			break;
		case 1:
			check_buf(&live[k]);
			break;
		case 2: {
			/* Copy it over another live device buffer and back. */
			int j = (int)(next(&rng) % LIVE);
			size_t n;

			if (j == k || !live[j].p || live[j].host || live[k].host)
				break;
			n = live[k].size < live[j].size ? live[k].size :
							  live[j].size;
			check_buf(&live[j]);
			r = aclrtMemcpy(live[j].p, live[j].size, live[k].p, n,
					ACL_MEMCPY_DEVICE_TO_DEVICE);
			if (r) {
				stress_fail("memcpy = %d", r);
				break;
			}
			if (memcmp(live[j].p, live[k].p, n))
				stress_fail("memcpy copied wrong data");
			acltest_fill(live[j].p, live[j].size, live[j].seed);
			break;
		}
		default:
			if (!live[k].host &&
			    ((r = aclrtMemFlush(live[k].p, live[k].size)) ||
			     (r = aclrtMemInvalidate(live[k].p, live[k].size))))
				stress_fail("flush/invalidate = %d", r);
			break;
		}
	}
	for (i = 0; i < LIVE; i++)
		if (live[i].p)
			release(&live[i]);
	if ((r = aclrtResetDevice(0)))
		stress_fail("aclrtResetDevice = %d", r);
	return NULL;
}

static int counters(struct npu_mem_info *info)
{
	int fd = open(acltest_device_path(), O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	ret = ioctl(fd, NPU_MEM_IOCTL_GET_INFO, info);
	close(fd);
	return ret;
}

/* The stress itself, in a process of its own (exec'd with the pool setting). */
static int stress_main(void)
{
	struct npu_mem_info before, after;
	pthread_t th[THREADS];
	const char *secs = getenv("ACLTEST_STRESS_SECS");
	uintptr_t i;

	if (counters(&before))
		return 2;
	if (aclInit(NULL) || aclrtSetDevice(0))
		return 3;
	nm_span_start(&span, secs ? atof(secs) : 4.0);
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(i + 1));
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* The last reference: streams go, the pool is emptied. */
	if (aclrtResetDevice(0))
		stress_fail("final aclrtResetDevice");
	if (counters(&after))
		return 4;
	printf("stress (pool %s): %.1f s: %ld operations, %ld HUGE_ONLY out of memory, %ld errors\n",
	       getenv("NPU_MEM_POOL_MAX"), nm_span_secs(&span), atomic_load(&ops),
	       atomic_load(&oom), atomic_load(&errors));
	if (after.allocated_bytes != before.allocated_bytes ||
	    after.buffers != before.buffers ||
	    after.huge_pages != before.huge_pages ||
	    after.normal_pages != before.normal_pages)
		stress_fail("driver counters not back: bytes %llu -> %llu, buffers %llu -> %llu, huge %llu -> %llu, normal %llu -> %llu",
		     (unsigned long long)before.allocated_bytes,
		     (unsigned long long)after.allocated_bytes,
		     (unsigned long long)before.buffers,
		     (unsigned long long)after.buffers,
		     (unsigned long long)before.huge_pages,
		     (unsigned long long)after.huge_pages,
		     (unsigned long long)before.normal_pages,
		     (unsigned long long)after.normal_pages);
	if (atomic_load(&ops) < MIN_OPS)
		stress_fail("only %ld operations in %.0f s, the ceiling",
			    atomic_load(&ops), nm_span_secs(&span));
	aclFinalize();
	return atomic_load(&errors) ? 1 : 0;
}

static void run_child(const char *pool)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		setenv("NPU_MEM_POOL_MAX", pool, 1);
		execl(self, self, "--stress", NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "stress with pool %s: status %#x", pool, st);
}

START_TEST(stress_pool_off)
{
	run_child("0");
}
END_TEST

START_TEST(stress_pool_on)
{
	run_child("32M");
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s;

	if (argc > 1 && !strcmp(argv[1], "--stress"))
		return stress_main();
	acltest_require_device();
	if (!realpath(argv[0], self))
		return 1;
	s = suite_create("acl_stress");
	nm_add(s, stress_pool_off, nm_span_ceiling(4.0) + 180);
	nm_add(s, stress_pool_on, nm_span_ceiling(4.0) + 180);
	return acltest_run(s);
}
