// SPDX-License-Identifier: MIT
/*
 * The public headers compile pedantically and link: a program written only
 * against <acl/acl.h> (tests/host/data/acl_header_user.c) is built as C99,
 * C11 and C++11 with -Wall -Wextra -Werror -pedantic and linked against
 * libaclmem (which proves the C++ declarations have C linkage); the native
 * header compiles as C99 and C++11 too.  Needs gcc and g++ (host only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "acltest.h"

#ifndef ACLTEST_TOP
#error "build with -DACLTEST_TOP=..."
#endif

static char out_dir[] = "/tmp/acl_headers.XXXXXX";

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	printf("+ %s\n", cmd);
	fflush(stdout);
	st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

#define INC	"-I" ACLTEST_TOP "/include"
#define USER	ACLTEST_TOP "/tests/host/data/acl_header_user.c"
#define LINK	"-L" ACLTEST_TOP "/build/lib -laclmem"
#define STRICT	"-Wall -Wextra -Werror -pedantic"

static void build(const char *compiler_std, const char *lang)
{
	char exe[256];

	snprintf(exe, sizeof(exe), "%s/user_%s", out_dir, lang);
	ck_assert_int_eq(sh("%s " STRICT " " INC " -o %s " USER " " LINK,
			    compiler_std, exe), 0);
	/* Run without arguments: it only checks its constants, no device. */
	ck_assert_int_eq(sh("LD_LIBRARY_PATH=" ACLTEST_TOP "/build/lib %s%s",
			    exe, ""), 0);
}

START_TEST(c99)
{
	build("gcc -std=c99", "c99");
}
END_TEST

START_TEST(c11)
{
	build("gcc -std=c11", "c11");
}
END_TEST

START_TEST(cxx11)
{
	build("g++ -std=c++11 -x c++", "cxx11");
}
END_TEST

START_TEST(native_header)
{
	static const char src[] =
		"#include <aclmem/aclmem.h>\n"
		"int main(void) { struct npu_mem_buffer b; b.size = 0;\n"
		"  return aclmem_acl_error(-22) == 107000 && b.size == 0 ? 0 : 1; }\n";
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/native.c", out_dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(src, f);
	fclose(f);
	ck_assert_int_eq(sh("gcc -std=c99 " STRICT " " INC " -I" ACLTEST_TOP
			    "/include/uapi -o %s/native %s " LINK, out_dir,
			    path), 0);
	ck_assert_int_eq(sh("g++ -std=c++11 -x c++ " STRICT " " INC " -I"
			    ACLTEST_TOP "/include/uapi -o %s/native_cxx %s "
			    LINK, out_dir, path), 0);
	ck_assert_int_eq(sh("LD_LIBRARY_PATH=" ACLTEST_TOP "/build/lib %s/native%s",
			    out_dir, ""), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_headers");
	int ret;

	if (!mkdtemp(out_dir)) {
		perror("mkdtemp");
		return 1;
	}
	nm_add(s, c99, 120);
	nm_add(s, c11, 120);
	nm_add(s, cxx11, 120);
	nm_add(s, native_header, 120);
	ret = acltest_run(s);
	sh("rm -rf %s%s", out_dir, "");
	return ret;
}
