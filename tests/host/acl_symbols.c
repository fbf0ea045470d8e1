// SPDX-License-Identifier: MIT
/*
 * libaclmem.so.1 exports exactly the intended interface: the dynamic symbol
 * table (nm -D --defined-only) holds these names, each at version
 * ACLMEM_1.0, and nothing else; the soname is libaclmem.so.1.  A symbol
 * that leaks (a helper without hidden visibility missing from the version
 * script's local: *) or one that disappears fails here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acltest.h"

#ifndef ACLTEST_TOP
#error "build with -DACLTEST_TOP=..."
#endif

#define LIB ACLTEST_TOP "/build/lib/libaclmem.so.1"

static const char *const expected[] = {
	"aclFinalize", "aclInit", "aclmem_acl_error", "aclmem_alloc",
	"aclmem_close", "aclmem_export", "aclmem_free", "aclmem_get_info",
	"aclmem_map", "aclmem_open", "aclmem_query", "aclmem_sync",
	"aclmem_unmap", "aclrtCreateStream", "aclrtDestroyStream",
	"aclrtDestroyStreamForce", "aclrtFree", "aclrtFreeHost",
	"aclrtGetDevice", "aclrtGetDeviceCount", "aclrtGetMemInfo",
	"aclrtGetRunMode", "aclrtMalloc", "aclrtMallocAlign32",
	"aclrtMallocCached", "aclrtMallocHost", "aclrtMemFlush",
	"aclrtMemInvalidate", "aclrtMemcpy", "aclrtMemcpyAsync",
	"aclrtMemset", "aclrtMemsetAsync", "aclrtPointerGetAttributes",
	"aclrtResetDevice", "aclrtResetDeviceForce", "aclrtSetDevice",
	"aclrtSynchronizeDevice", "aclrtSynchronizeStream",
};

#define NEXP (sizeof(expected) / sizeof(expected[0]))

START_TEST(exported_symbols_exact)
{
	char line[512], name[256], type[8];
	bool seen[NEXP] = { false };
	int extra = 0;
	size_t i, n = 0;
	FILE *p;

	p = popen("nm -D --defined-only " LIB, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *at;

		/* "0000000000001234 T aclInit@@ACLMEM_1.0" */
		if (sscanf(line, "%*s %7s %255s", type, name) != 2)
			continue;
		if (!strcmp(type, "A") && !strcmp(name, "ACLMEM_1.0"))
			continue;	/* the version node itself */
		at = strstr(name, "@@");
		ck_assert_msg(at && !strcmp(at, "@@ACLMEM_1.0"),
			      "%s: not at the default version ACLMEM_1.0", name);
		*at = '\0';
		ck_assert_msg(!strcmp(type, "T"), "%s is a %s symbol, not code",
			      name, type);
		for (i = 0; i < NEXP; i++)
			if (!strcmp(name, expected[i]))
				break;
		if (i == NEXP) {
			printf("unexpected export: %s\n", name);
			extra++;
		} else {
			ck_assert_msg(!seen[i], "%s exported twice", name);
			seen[i] = true;
			n++;
		}
	}
	ck_assert_int_eq(pclose(p), 0);
	for (i = 0; i < NEXP; i++)
		if (!seen[i])
			printf("missing export: %s\n", expected[i]);
	ck_assert_int_eq(extra, 0);
	ck_assert_uint_eq(n, NEXP);
}
END_TEST

START_TEST(soname)
{
	char line[512];
	bool found = false;
	FILE *p = popen("readelf -d " LIB, "r");

	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "(SONAME)") &&
		    strstr(line, "[libaclmem.so.1]"))
			found = true;
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(found, "no SONAME libaclmem.so.1");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_symbols");

	acltest_add(s, exported_symbols_exact, 30);
	acltest_add(s, soname, 30);
	return acltest_run(s);
}
