// SPDX-License-Identifier: MIT
/*
 * fork(): the child inherits no device state and cannot reach the parent's
 * buffers (they are not mapped in the child, and the library refuses their
 * pointers), it can set the device and allocate its own, and the parent's
 * buffers are untouched afterwards.  Forking while other threads allocate
 * must not deadlock (the library locks around fork).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

#define MiB ((size_t)1 << 20)

/*
 * End a forked child with this status.  Threads that were inside the
 * library at the fork leave their half-made allocations behind in the child
 * (their stacks did not come along): under valgrind, leave by exec so that
 * this inherent loss is not counted as a leak of the test.
 */
static void child_exit(int status)
{
	char cmd[32];

	if (acltest_under_valgrind()) {
		snprintf(cmd, sizeof(cmd), "exit %d", status);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	}
	_exit(status);
}

static int child_checks(unsigned char *parent_buf)
{
	struct npu_mem_info info;
	int32_t id;
	void *mine;

	/* No device state came along. */
	if (aclrtGetDevice(&id) != ACL_ERROR_RT_CONTEXT_NULL)
		return 10;
	/* Frees need no context; the parent's buffer is unknown here. */
	if (aclrtFree(parent_buf) != ACL_ERROR_RT_PARAM_INVALID)
		return 11;
	/* The parent's buffer is not mapped here. */
	if (!acltest_under_valgrind() && !acltest_probe(parent_buf, false))
		return 12;
	if (aclrtSetDevice(0))
		return 13;
	/* A client of its own: the parent's buffers are unknown to it. */
	if (aclrtFree(parent_buf) != ACL_ERROR_RT_PARAM_INVALID)
		return 14;
	if (aclrtMemset(parent_buf, 8, 0, 8) != ACL_ERROR_RT_PARAM_INVALID)
		return 15;
	if (aclrtMalloc(&mine, 3 * MiB, 0))
		return 16;
	acltest_fill(mine, 3 * MiB, 99);
	if (aclrtMemFlush(mine, 3 * MiB))
		return 17;
	acltest_driver_info(&info);
	if (info.client_buffers)	/* a different file from the library's */
		return 18;
	if (aclrtFree(mine) || aclrtResetDevice(0) || aclFinalize())
		return 19;
	return 0;
}

START_TEST(child_starts_clean)
{
	unsigned char *p;
	pid_t pid;
	int st;

	ck_assert_int_eq(aclInit(NULL), 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&p, MiB, 0), 0);
	acltest_fill(p, MiB, 5);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid)
		_exit(child_checks(p));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child failed check %d", WEXITSTATUS(st));
	/* The parent's buffer and handle are intact. */
	ck_assert_uint_eq(acltest_verify(p, MiB, 5), SIZE_MAX);
	ck_assert_int_eq(aclrtMemset(p, MiB, 0, MiB), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclFinalize(), 0);
}
END_TEST

START_TEST(child_pool_is_empty)
{
	unsigned char *p, *q;
	pid_t pid;
	int st;

	/* The parent's pool holds a freed, dirty buffer... */
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&p, 64 * 1024, 2), 0);
	memset(p, 0xab, 64 * 1024);
	ck_assert_int_eq(aclrtFree(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		size_t i;

		/* ...which the child never gets: fresh, zeroed memory. */
		if (aclrtSetDevice(0) ||
		    aclrtMalloc((void **)&q, 64 * 1024, 2))
			_exit(1);
		for (i = 0; i < 64 * 1024; i++)
			if (q[i])
				_exit(2);
		_exit(aclrtFree(q) ? 3 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	/* In the parent the pool still serves it. */
	ck_assert_int_eq(aclrtMalloc((void **)&q, 64 * 1024, 2), 0);
	ck_assert_ptr_eq(q, p);
	ck_assert_int_eq(q[0], 0xab);
	ck_assert_int_eq(aclrtFree(q), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

static _Atomic int stop;

static void *churn(void *arg)
{
	(void)arg;
	aclrtSetDevice(0);
	while (!atomic_load(&stop)) {
		void *p;

		if (!aclrtMalloc(&p, 4096 + (size_t)(rand() % 100000), 2)) {
			aclrtMemset(p, 4096, 1, 4096);
			aclrtFree(p);
		}
	}
	aclrtResetDevice(0);
	return NULL;
}

START_TEST(fork_while_threads_allocate)
{
	pthread_t th[4];
	int i, st;

	ck_assert_int_eq(aclrtSetDevice(0), 0);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, churn, NULL);
	for (i = 0; i < 20; i++) {
		pid_t pid = fork();
		void *p;

		ck_assert_int_ge(pid, 0);
		if (!pid) {
			/* Every lock the library holds must be usable here. */
			if (aclrtSetDevice(0) || aclrtMalloc(&p, 8192, 2) ||
			    aclrtMemset(p, 8192, 0, 8192) || aclrtFree(p))
				child_exit(1);
			child_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "child %d: status %#x", i, st);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_fork");

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "16M", 1);
	nm_add(s, child_starts_clean, 60);
	nm_add(s, child_pool_is_empty, 60);
	nm_add(s, fork_while_threads_allocate, 120);
	return acltest_run(s);
}
