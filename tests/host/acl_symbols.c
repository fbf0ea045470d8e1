// SPDX-License-Identifier: MIT
/*
 * libaclmem.so.1 exports exactly the intended interface: the dynamic symbol
 * table (nm -D --defined-only) holds the first release's names, each at
 * version ACLMEM_1.0 (frozen: listed here by hand), the names the version
 * script adds in each later node (ACLMEM_1.1 to ACLMEM_1.9), each at its
 * node's version, and nothing else; a first-release name that a later
 * node redefines (superseded[]) keeps its ACLMEM_1.0 version beside the
 * new default one, for programs linked before; every
 * export is declared in a public header; the soname is libaclmem.so.1.  A
 * symbol that leaks (a helper without hidden visibility missing from the
 * version script's local: *) or one that disappears fails here.
 */
#include <ctype.h>
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

/*
 * The later nodes' names, read from the version script: the script
 * is where a new function is added, and this test checks that each one
 * named there really is exported, at that version, and declared in a
 * public header (a name for a function that does not exist, or a typo, is
 * silently ignored by the linker).
 */
#define MAP ACLTEST_TOP "/lib/libaclmem.map"
#define MAXNEW 512

static const char *const later_nodes[] = { "ACLMEM_1.1", "ACLMEM_1.2",
						"ACLMEM_1.3", "ACLMEM_1.4", "ACLMEM_1.5",
						"ACLMEM_1.6", "ACLMEM_1.7", "ACLMEM_1.8",
						"ACLMEM_1.9" };

/* First-release names a later node redefines (lib/native.c's symver). */
static const char *const superseded[] = { "aclmem_get_info" };

static bool is_superseded(const char *name)
{
	for (size_t i = 0; i < sizeof(superseded) / sizeof(superseded[0]); i++)
		if (!strcmp(name, superseded[i]))
			return true;
	return false;
}

static size_t read_node(const char *node, char names[][64], size_t max)
{
	char line[256], word[64];
	bool in = false;
	size_t n = 0;
	FILE *f = fopen(MAP, "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (!in) {
			in = sscanf(line, "%63s", word) == 1 &&
			     !strcmp(word, node);
			continue;
		}
		if (strchr(line, '}'))
			break;
		if (sscanf(line, " %63[A-Za-z0-9_];", word) == 1 &&
		    strcmp(word, "global") && strcmp(word, "local")) {
			ck_assert_uint_lt(n, max);
			strcpy(names[n++], word);
		}
	}
	fclose(f);
	return n;
}

static char *slurp_headers(void)
{
	size_t cap = 1 << 20, len = 0, got;
	char *buf = malloc(cap);
	FILE *p = popen("cat " ACLTEST_TOP "/include/acl/*.h "
			ACLTEST_TOP "/include/acl/ops/*.h "
			ACLTEST_TOP "/include/aclmem/*.h", "r");

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(p);
	while ((got = fread(buf + len, 1, cap - 1 - len, p)) > 0)
		len += got;
	buf[len] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	return buf;
}

static bool declared(const char *headers, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = strstr(headers, name); p; p = strstr(p + 1, name))
		if ((p == headers || !(p[-1] == '_' || isalnum((unsigned char)p[-1]))) &&
		    p[n] == '(')
			return true;
	return false;
}

START_TEST(exported_symbols_exact)
{
	static char added[MAXNEW][64];
	const char *added_node[MAXNEW];
	char line[512], name[256], type[8];
	bool seen[NEXP] = { false }, seen_new[MAXNEW] = { false };
	size_t i, n = 0, n_new = 0, nadded;
	char *headers = slurp_headers();
	int extra = 0, missing = 0;
	FILE *p;

	nadded = 0;
	for (i = 0; i < sizeof(later_nodes) / sizeof(later_nodes[0]); i++) {
		size_t k, got = read_node(later_nodes[i], added + nadded,
					  MAXNEW - nadded);

		ck_assert_msg(got > 0, "no names in node %s", later_nodes[i]);
		for (k = 0; k < got; k++)
			added_node[nadded + k] = later_nodes[i];
		nadded += got;
	}
	p = popen("nm -D --defined-only " LIB, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *at;

		/* "0000000000001234 T aclInit@@ACLMEM_1.0" */
		if (sscanf(line, "%*s %7s %255s", type, name) != 2)
			continue;
		if (!strcmp(type, "A") && !strncmp(name, "ACLMEM_1.", 9))
			continue;	/* the version nodes themselves */
		at = strstr(name, "@@");
		if (!at) {
			/* the old version of a superseded name */
			at = strchr(name, '@');
			ck_assert_msg(at, "%s: no version", name);
			*at = '\0';
			ck_assert_msg(is_superseded(name) &&
				      !strcmp(at + 1, "ACLMEM_1.0"),
				      "%s@%s: not the default version", name,
				      at + 1);
			for (i = 0; i < NEXP; i++)
				if (!strcmp(name, expected[i]))
					break;
			ck_assert_msg(i < NEXP && !seen[i],
				      "%s@ACLMEM_1.0 unexpected", name);
			seen[i] = true;
			n++;
			continue;
		}
		*at = '\0';
		ck_assert_msg(!strcmp(type, "T"), "%s is a %s symbol, not code",
			      name, type);
		ck_assert_msg(declared(headers, name),
			      "%s exported but declared in no public header",
			      name);
		for (i = 0; i < NEXP; i++)
			if (!strcmp(name, expected[i]) && !is_superseded(name))
				break;
		if (i < NEXP) {
			ck_assert_msg(!strcmp(at + 2, "ACLMEM_1.0"),
				      "%s moved from ACLMEM_1.0 to %s", name,
				      at + 2);
			ck_assert_msg(!seen[i], "%s exported twice", name);
			seen[i] = true;
			n++;
			continue;
		}
		for (i = 0; i < nadded; i++)
			if (!strcmp(name, added[i]))
				break;
		if (i == nadded) {
			printf("unexpected export: %s\n", name);
			extra++;
			continue;
		}
		ck_assert_msg(!strcmp(at + 2, added_node[i]),
			      "%s at %s, not %s", name, at + 2, added_node[i]);
		ck_assert_msg(!seen_new[i], "%s exported twice", name);
		seen_new[i] = true;
		n_new++;
	}
	ck_assert_int_eq(pclose(p), 0);
	for (i = 0; i < NEXP; i++)
		if (!seen[i])
			printf("missing export: %s\n", expected[i]);
	for (i = 0; i < nadded; i++)
		if (!seen_new[i]) {
			printf("in the version script, not exported: %s\n",
			       added[i]);
			missing++;
		}
	free(headers);
	ck_assert_int_eq(extra, 0);
	ck_assert_int_eq(missing, 0);
	ck_assert_uint_eq(n, NEXP);
	ck_assert_uint_eq(n_new, nadded);
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

	nm_add(s, exported_symbols_exact, 30);
	nm_add(s, soname, 30);
	return acltest_run(s);
}
