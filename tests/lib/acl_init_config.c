// SPDX-License-Identifier: MIT
/*
 * aclInit's configuration file, in a process with the device: with
 * {"defaultDevice":{"default_device":"0"}} calls made without aclrtSetDevice
 * work on every thread, as in CANN; without it they get
 * ACL_ERROR_RT_CONTEXT_NULL; a file that is not JSON is refused with
 * ACL_ERROR_PARSE_FILE and a missing one with ACL_ERROR_INVALID_FILE,
 * and after a refused aclInit a good one still works.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

static char path[64];

static void write_config(const char *text)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/acl-config-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void teardown(void)
{
	aclFinalize();
	if (path[0])
		unlink(path);
	path[0] = '\0';
}

static void *malloc_on_thread(void *arg)
{
	void *p = NULL;
	long ret;

	(void)arg;
	ret = aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY);
	if (!ret)
		ret = aclrtFree(p);
	return (void *)ret;
}

START_TEST(default_device_sets_implicitly)
{
	int32_t dev = -1;
	pthread_t t;
	void *ret, *p;

	write_config("{\"defaultDevice\": {\"default_device\": \"0\"}}\n");
	ck_assert_int_eq(aclInit(path), ACL_SUCCESS);
	/* No aclrtSetDevice anywhere. */
	ck_assert_int_eq(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), 0);
	ck_assert_int_eq(aclrtGetDevice(&dev), 0);
	ck_assert_int_eq(dev, 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, malloc_on_thread, NULL), 0);
	pthread_join(t, &ret);
	ck_assert_int_eq((long)ret, 0);
}
END_TEST

START_TEST(no_default_device_no_context)
{
	pthread_t t;
	void *ret, *p;

	write_config("{\"dump\": {}}\n");
	ck_assert_int_eq(aclInit(path), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&p, 4096, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(pthread_create(&t, NULL, malloc_on_thread, NULL), 0);
	pthread_join(t, &ret);
	ck_assert_int_eq((long)ret, ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

START_TEST(bad_files_refused)
{
	void *p;

	write_config("{\"defaultDevice\": ");
	ck_assert_int_eq(aclInit(path), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
	/* Nothing was half set up: a good configuration still goes in. */
	unlink(path);
	write_config("{\"defaultDevice\": {\"default_device\": \"0\"}}");
	ck_assert_int_eq(aclInit(path), ACL_SUCCESS);
	ck_assert_int_eq(aclInit(path), ACL_ERROR_REPEAT_INITIALIZE);
	ck_assert_int_eq(aclrtMalloc(&p, 64, 0), 0);
	ck_assert_int_eq(aclrtFree(p), 0);
	/* aclFinalize forgets it. */
	ck_assert_int_eq(aclFinalize(), 0);
	ck_assert_int_eq(aclrtMalloc(&p, 64, 0), ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

static const struct nm_fixture fixture = {
	.teardown = teardown,
};

int main(void)
{
	Suite *s = suite_create("acl_init_config");

	acltest_require_device();
	nm_add_fx(s, default_device_sets_implicitly, 30, &fixture);
	nm_add_fx(s, no_default_device_no_context, 30, &fixture);
	nm_add_fx(s, bad_files_refused, 30, &fixture);
	return acltest_run(s);
}
