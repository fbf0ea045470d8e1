// SPDX-License-Identifier: MIT
/*
 * Kernel launches (aclmem_kernel_launch, what AscendC launch code calls)
 * as stream tasks: every block runs at once in a thread of its own, in
 * stream order with the copies around it; a failing block fails the task,
 * and the stream's synchronisation returns its code; bad arguments are
 * refused and the launch released exactly once in every case.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "acltest_device.h"
#include "aclmem/kernel.h"
#include "acl/acl.h"

#define BLOCKS 8
/* A loaded TCG guest may start the threads slowly: the wait ends when
 * all blocks are in. */
#define ALL_IN_WAIT_S 60

struct launch {
	atomic_int arrived;
	atomic_int released;
	int32_t *dev;		/* BLOCKS words of device memory */
	uint32_t fail_block;	/* UINT32_MAX: none */
};

static int parallel_block(void *p, uint32_t idx)
{
	struct launch *l = p;
	time_t end = time(NULL) + ALL_IN_WAIT_S;

	/* Every block must be running at once, or this one gives up. */
	atomic_fetch_add(&l->arrived, 1);
	while (atomic_load(&l->arrived) < BLOCKS) {
		if (time(NULL) > end)
			return ACL_ERROR_RT_AICORE_TIMEOUT;
		usleep(1000);
	}
	/* The memset queued before the launch has been done. */
	if (l->dev[idx] != 0x5A5A5A5A)
		return ACL_ERROR_RT_AICORE_EXCEPTION;
	l->dev[idx] = (int32_t)idx + 1;
	if (idx == l->fail_block)
		return ACL_ERROR_RT_AICORE_TRAP_EXCEPTION;
	return 0;
}

static void count_release(void *p)
{
	struct launch *l = p;

	atomic_fetch_add(&l->released, 1);
}

static void run(uint32_t fail_block, int want)
{
	struct launch l = { .fail_block = fail_block };
	int32_t host[BLOCKS];
	aclrtStream s;
	void *dev;
	int i;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtMalloc(&dev, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST), 0);
	l.dev = dev;
	ck_assert_int_eq(aclrtMemsetAsync(dev, sizeof(host), 0x5A, sizeof(host), s), 0);
	ck_assert_int_eq(aclmem_kernel_launch("parallel", BLOCKS, s, parallel_block,
					      count_release, &l), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), want);
	ck_assert_int_eq(atomic_load(&l.released), 1);
	ck_assert_int_eq(atomic_load(&l.arrived), BLOCKS);
	ck_assert_int_eq(aclrtMemcpy(host, sizeof(host), dev, sizeof(host),
				     ACL_MEMCPY_DEVICE_TO_HOST), 0);
	for (i = 0; i < BLOCKS; i++)
		ck_assert_int_eq(host[i], i + 1);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtFree(dev), 0);
}

START_TEST(blocks_run_at_once_in_stream_order)
{
	run(UINT32_MAX, ACL_SUCCESS);
}
END_TEST

START_TEST(failed_block_fails_the_task)
{
	run(3, ACL_ERROR_RT_AICORE_TRAP_EXCEPTION);
}
END_TEST

static int never_block(void *p, uint32_t idx)
{
	(void)p;
	(void)idx;
	ck_abort_msg("a refused launch ran");
	return 0;
}

START_TEST(bad_arguments_refused_and_released)
{
	static const uint32_t dims[] = { 0, ACLMEM_KERNEL_MAX_BLOCKS + 1 };
	struct launch l = { 0 };
	unsigned int i;

	for (i = 0; i < 2; i++)
		ck_assert_int_eq(aclmem_kernel_launch("bad", dims[i], NULL, never_block,
						      count_release, &l),
				 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_kernel_launch("bad", 1, NULL, NULL, count_release, &l),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_kernel_launch("bad", 1, NULL, never_block, NULL, &l),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(atomic_load(&l.released), 3);
	/* A stream handle that is none is refused, the launch released. */
	ck_assert_int_ne(aclmem_kernel_launch("bad", 1, (aclrtStream)&l, never_block,
					      count_release, &l), 0);
	ck_assert_int_eq(atomic_load(&l.released), 4);
	ck_assert_int_eq(aclrtSynchronizeDevice(), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_launch");

	acltest_require_device();
	nm_add_fx(s, blocks_run_at_once_in_stream_order, ALL_IN_WAIT_S + 60,
		  &acltest_device);
	nm_add_fx(s, failed_block_fails_the_task, ALL_IN_WAIT_S + 60,
		  &acltest_device);
	nm_add_fx(s, bad_arguments_refused_and_released, 30, &acltest_device);
	return acltest_run(s);
}
