// SPDX-License-Identifier: MIT
/*
 * aclInit's JSON configuration reader (lib/config.c) on the host: CANN's
 * codes for a missing file, bad JSON, over-deep nesting and a bad default
 * device, and "defaultDevice" read as documented.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"
#include "../../lib/config.h"

static char path[] = "/tmp/acl_mem_config_XXXXXX";

static const char *file(const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static int load(const char *text)
{
	return aclmem_config_load(file(text));
}

START_TEST(codes)
{
	char deep[128] = "", arrays[64] = "";
	int i;

	ck_assert_int_eq(aclmem_config_load(NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclmem_config_load(""), ACL_SUCCESS);
	ck_assert_int_eq(aclmem_config_load("/nonexistent/acl.json"),
			 ACL_ERROR_INVALID_FILE);
	ck_assert_int_eq(load(""), ACL_SUCCESS);
	ck_assert_int_eq(load("{}"), ACL_SUCCESS);
	ck_assert_int_eq(load(" {\"dump\": {\"dump_path\": \"x\"}}\n"),
			 ACL_SUCCESS);
	ck_assert_int_eq(load("{\"a\":"), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(load("{} x"), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(load("[1]"), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(load("not json"), ACL_ERROR_PARSE_FILE);
	/* "{" and "[" may each nest 10 deep, not 11. */
	for (i = 0; i < 9; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "{}");
	for (i = 0; i < 9; i++)
		strcat(deep, "}");
	ck_assert_int_eq(load(deep), ACL_SUCCESS);
	memmove(deep + 5, deep, strlen(deep) + 1);
	memcpy(deep, "{\"a\":", 5);
	strcat(deep, "}");
	ck_assert_int_eq(load(deep), ACL_ERROR_PARSE_FILE);
	strcpy(arrays, "{\"a\":");
	for (i = 0; i < 10; i++)
		strcat(arrays, "[");
	for (i = 0; i < 10; i++)
		strcat(arrays, "]");
	strcat(arrays, "}");
	ck_assert_int_eq(load(arrays), ACL_SUCCESS);
}
END_TEST

START_TEST(default_device)
{
	ck_assert_int_eq(load("{}"), ACL_SUCCESS);
	ck_assert_int_eq(aclmem_config_default_device(), -1);
	ck_assert_int_eq(load("{\"defaultDevice\":{\"default_device\":\"0\"}}"),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclmem_config_default_device(), 0);
	ck_assert_int_eq(load("{\"defaultDevice\":{\"default_device\":3}}"),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclmem_config_default_device(), 3);
	/* A bad value leaves the configuration in force as it was. */
	ck_assert_int_eq(load("{\"defaultDevice\":{\"default_device\":\"x\"}}"),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(load("{\"defaultDevice\":{\"default_device\":\"-1\"}}"),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(load("{\"defaultDevice\":{}}"),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(load("{\"defaultDevice\":\"0\"}"),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(load("{\"defaultDevice\":{\"default_device\":\"0\""),
			 ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(aclmem_config_default_device(), 3);
	aclmem_config_reset();
	ck_assert_int_eq(aclmem_config_default_device(), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_mem_config");
	int fd = mkstemp(path), ret;

	if (fd < 0)
		return 77;
	close(fd);
	nm_add(s, codes, 30);
	nm_add(s, default_device, 30);
	ret = acltest_run(s);
	unlink(path);
	return ret;
}
