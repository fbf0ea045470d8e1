// SPDX-License-Identifier: MIT
/*
 * acl_fork_handles: a forked child leaves the parent's driver handles alone.
 *
 * The child inherits the parent's descriptor of the device (one file, one
 * handle table) but none of its mappings, so the library's fork handler
 * must forget the parent's buffers without a driver call: a FREE sent from
 * the child through the shared file would drop the parent's handles, and
 * the parent would still read and write its memory (the mapping keeps the
 * pages) while every call that reaches the driver with the handle fails.
 * acl_fork checks the parent's contents and library-side calls after a
 * fork; this checks the calls that use the handle: aclrtMemFlush and
 * aclrtMemInvalidate (the SYNC ioctl), for buffers live at the fork and
 * for one freed into the pool before it, reused after.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

#define MiB ((size_t)1 << 20)

START_TEST(parent_handles_survive_fork)
{
	unsigned char *live[3], *pooled, *again;
	static const size_t sizes[3] = { 100, 3 * MiB, 5 * MiB };
	pid_t pid;
	int st;

	ck_assert_int_eq(aclInit(NULL), 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(aclrtMalloc((void **)&live[i], sizes[i],
					     (aclrtMemMallocPolicy)i), 0);
		acltest_fill(live[i], sizes[i], 40 + i);
		ck_assert_int_eq(aclrtMemFlush(live[i], sizes[i]), ACL_SUCCESS);
	}
	ck_assert_int_eq(aclrtMalloc((void **)&pooled, 64 * 1024,
				     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_int_eq(aclrtFree(pooled), 0);

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid)
		_exit(0);	/* the fork handlers are all the child does */
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);

	for (int i = 0; i < 3; i++) {
		ck_assert_msg(aclrtMemFlush(live[i], sizes[i]) == ACL_SUCCESS,
			      "aclrtMemFlush of the parent's %zu-byte buffer "
			      "after a fork failed: its handle is gone",
			      sizes[i]);
		ck_assert_int_eq(aclrtMemInvalidate(live[i], sizes[i]),
				 ACL_SUCCESS);
		ck_assert_uint_eq(acltest_verify(live[i], sizes[i], 40 + i),
				  SIZE_MAX);
		ck_assert_int_eq(aclrtFree(live[i]), 0);
	}
	/* The pooled buffer comes back from the pool, handle and all. */
	ck_assert_int_eq(aclrtMalloc((void **)&again, 64 * 1024,
				     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_ptr_eq(again, pooled);
	ck_assert_msg(aclrtMemFlush(again, 64 * 1024) == ACL_SUCCESS,
		      "aclrtMemFlush of a pooled buffer reused after a fork "
		      "failed: its handle is gone");
	ck_assert_int_eq(aclrtFree(again), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclFinalize(), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_fork_handles");

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "16M", 1);
	nm_add(s, parent_handles_survive_fork, 60);
	return acltest_run(s);
}
