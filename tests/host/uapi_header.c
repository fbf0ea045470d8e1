// SPDX-License-Identifier: GPL-2.0-only
/*
 * uapi_header: <linux/npu_mem.h> is a well-behaved UAPI header: it compiles
 * on its own (first and only include) as C99, C11 and C++ (11 and 17), for
 * 32- and 64-bit userspace, with -Wall -Wextra -Werror -pedantic, and the
 * compiler itself finds no padding in it (-Wpadded), and its kernel-doc
 * describes exactly the members that exist.  Every macro and type
 * of the header is used so that expanding them is covered too.
 *
 * Runs on the host (no device), with the compiler the tests were built with
 * (NMTEST_CC / NMTEST_CXX).  Objects are only compiled.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nmtest_util.h"

#ifndef NMTEST_TOP
#error "build with -DNMTEST_TOP=<source tree> (tests/Makefile does)"
#endif
#ifndef NMTEST_CC
#define NMTEST_CC "cc"
#endif
#ifndef NMTEST_CXX
#define NMTEST_CXX "c++"
#endif

/* Uses everything the header defines; valid C and C++. */
static const char use_src[] =
	"#include <linux/npu_mem.h>\n"
	"struct npu_mem_info nm_info;\n"
	"struct npu_mem_buffer nm_buffer;\n"
	"struct npu_mem_alloc nm_alloc;\n"
	"struct npu_mem_free nm_free;\n"
	"struct npu_mem_query nm_query;\n"
	"struct npu_mem_sync nm_sync;\n"
	"struct npu_mem_export nm_export;\n"
	"struct npu_mem_ipc_export nm_ipc_export;\n"
	"struct npu_mem_ipc_set_pids nm_ipc_set_pids;\n"
	"struct npu_mem_ipc_import nm_ipc_import;\n"
	"struct npu_mem_ipc_revoke nm_ipc_revoke;\n"
	"struct npu_mem_host_register nm_host_register;\n"
	"struct npu_mem_dmabuf_import nm_dmabuf_import;\n"
	"struct npu_mem_peer nm_peer;\n"
	"enum npu_mem_policy nm_policy = NPU_MEM_POLICY_HUGE_FIRST;\n"
	"enum npu_mem_sync_dir nm_dir = NPU_MEM_SYNC_TO_DEVICE;\n"
	"const char nm_name[] = NPU_MEM_DEVICE_NAME;\n"
	"unsigned long nm_cmds[] = {\n"
	"\tNPU_MEM_IOCTL_GET_INFO, NPU_MEM_IOCTL_ALLOC, NPU_MEM_IOCTL_FREE,\n"
	"\tNPU_MEM_IOCTL_QUERY, NPU_MEM_IOCTL_SYNC, NPU_MEM_IOCTL_EXPORT,\n"
	"\tNPU_MEM_IOCTL_IPC_EXPORT, NPU_MEM_IOCTL_IPC_SET_PIDS,\n"
	"\tNPU_MEM_IOCTL_IPC_IMPORT, NPU_MEM_IOCTL_IPC_REVOKE,\n"
	"\tNPU_MEM_IOCTL_HOST_REGISTER, NPU_MEM_IOCTL_DMABUF_IMPORT,\n"
	"\tNPU_MEM_IOCTL_PEER_MAP, NPU_MEM_IOCTL_PEER_UNMAP,\n"
	"\tNPU_MEM_IOCTL_PEER_QUERY,\n"
	"};\n"
	"unsigned long long nm_vals[] = {\n"
	"\tNPU_MEM_ABI_MAJOR, NPU_MEM_ABI_MINOR, NPU_MEM_PAGE_4K,\n"
	"\tNPU_MEM_PAGE_2M, NPU_MEM_PAGE_1G, NPU_MEM_POLICY_HUGE_ONLY,\n"
	"\tNPU_MEM_POLICY_NORMAL_ONLY, NPU_MEM_POLICY_HUGE1G_ONLY,\n"
	"\tNPU_MEM_POLICY_COUNT, NPU_MEM_DEV_COHERENT, NPU_MEM_DEV_IOMMU,\n"
	"\tNPU_MEM_DEV_PCI, NPU_MEM_ALLOC_READONLY, NPU_MEM_ALLOC_VALID,\n"
	"\tNPU_MEM_BUF_READONLY, NPU_MEM_BUF_DEV_CONTIG,\n"
	"\tNPU_MEM_BUF_DEV_HIDDEN, NPU_MEM_SYNC_FROM_DEVICE,\n"
	"\tNPU_MEM_SYNC_BIDIRECTIONAL, NPU_MEM_IOCTL_MAGIC,\n"
	"\tNPU_MEM_BUF_HOST, NPU_MEM_BUF_IMPORTED, NPU_MEM_IPC_ANY_PID,\n"
	"\tNPU_MEM_IPC_KEY64, NPU_MEM_IPC_EXPORT_VALID, NPU_MEM_IPC_MAX_PIDS,\n"
	"\tNPU_MEM_HOST_READONLY, NPU_MEM_HOST_VALID, NPU_MEM_BUF_FOREIGN,\n"
	"};\n";

static void compile(const char *compiler, const char *lang,
		    const char *flags)
{
	char dir[] = "/tmp/nmtest-hdr.XXXXXX", path[64], *cmd, *out;
	FILE *f;
	int st;

	ck_assert_msg(mkdtemp(dir), "mkdtemp: %s", nm_errname(errno));
	snprintf(path, sizeof(path), "%s/use.%s", dir,
		 !strcmp(lang, "c") ? "c" : "cc");
	f = fopen(path, "w");
	ck_assert(f);
	fputs(use_src, f);
	ck_assert(fclose(f) == 0);
	ck_assert(asprintf(&cmd, "%s -x %s %s -Wall -Wextra -Werror "
			   "-I'%s/include/uapi' -c '%s' -o '%s/use.o'; "
			   "r=$?; rm -rf '%s'; exit $r",
			   compiler, lang, flags, NMTEST_TOP, path, dir,
			   dir) >= 0);
	st = nm_shell(cmd, &out);
	printf("%s -> %d\n", cmd, st);
	ck_assert_msg(st == 0, "header does not compile cleanly:\n%s\n%.3000s",
		      cmd, out ? out : "");
	free(out);
	free(cmd);
}

START_TEST(c99_pedantic_m64)
{
	compile(NMTEST_CC, "c", "-m64 -std=c99 -pedantic");
}
END_TEST

START_TEST(c99_pedantic_m32)
{
	compile(NMTEST_CC, "c", "-m32 -std=c99 -pedantic");
}
END_TEST

START_TEST(c11_pedantic)
{
	compile(NMTEST_CC, "c", "-std=c11 -pedantic -Wconversion -Wshadow "
		"-Wstrict-prototypes -Wmissing-prototypes");
}
END_TEST

START_TEST(cxx11_pedantic)
{
	compile(NMTEST_CXX, "c++", "-std=c++11 -pedantic");
}
END_TEST

START_TEST(cxx17_pedantic_m32)
{
	compile(NMTEST_CXX, "c++", "-m32 -std=c++17 -pedantic");
}
END_TEST

START_TEST(wpadded_m64)
{
	compile(NMTEST_CC, "c", "-m64 -std=c99 -Wpadded");
}
END_TEST

START_TEST(wpadded_m32)
{
	compile(NMTEST_CC, "c", "-m32 -std=c99 -Wpadded");
}
END_TEST

/* Blank out comments so that prose does not trip the token checks. */
static void strip_comments(char *t)
{
	for (char *p = t; *p; p++) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");

			e = e ? e + 2 : p + strlen(p);
			for (; p < e; p++)
				if (*p != '\n')
					*p = ' ';
			p--;
		} else if (p[0] == '/' && p[1] == '/') {
			for (; *p && *p != '\n'; p++)
				*p = ' ';
			p--;
		}
	}
}

START_TEST(no_libc_types)
{
	/* UAPI headers use __u32/__u64 only: no <stdint.h> types, no long,
	 * bool or size_t, no libc includes (checked on the
	 * header's own text, comments removed). */
	char *text, *p;
	static const char *const banned[] = {
		"uint8_t", "uint16_t", "uint32_t", "uint64_t", "int32_t",
		"int64_t", "size_t", "bool", "unsigned long", " long ",
		"#include <std", "#include <sys/",
	};

	ck_assert(asprintf(&p, "%s/include/uapi/linux/npu_mem.h",
			   NMTEST_TOP) >= 0);
	text = nm_read_file(p);
	ck_assert_msg(text, "%s: %s", p, nm_errname(errno));
	strip_comments(text);
	for (size_t i = 0; i < NM_ARRAY_SIZE(banned); i++)
		ck_assert_msg(!strstr(text, banned[i]),
			      "npu_mem.h contains \"%s\"", banned[i]);
	ck_assert_msg(strstr(text, "#include <linux/types.h>"),
		      "npu_mem.h must include <linux/types.h>");
	free(text);
	free(p);
}
END_TEST

START_TEST(kernel_doc_clean)
{
	/* Every struct member documented, nothing documented that is not
	 * there: scripts/kernel-doc from the newest installed kbuild. */
	char *out = NULL, *cmd;
	int st;

	ck_assert(asprintf(&cmd, "kd=$(ls -d /usr/lib/linux-kbuild-*/scripts/"
			   "kernel-doc /usr/src/linux-headers-*/scripts/"
			   "kernel-doc 2>/dev/null | sort -V | tail -n1); "
			   "[ -n \"$kd\" ] || exit 77; "
			   "perl \"$kd\" -none -Wall "
			   "'%s/include/uapi/linux/npu_mem.h'",
			   NMTEST_TOP) >= 0);
	st = nm_shell(cmd, &out);
	if (st == 77) {
		nm_skip_note("no scripts/kernel-doc installed "
			     "(linux-headers / linux-kbuild)");
	} else {
		ck_assert_msg(st == 0 && !strstr(out, "warning") &&
			      !strstr(out, "error"),
			      "kernel-doc on npu_mem.h (exit %d):\n%.3000s", st,
			      out);
	}
	free(out);
	free(cmd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("uapi_header");

	nm_add(s, c99_pedantic_m64, 60);
	nm_add(s, c99_pedantic_m32, 60);
	nm_add(s, c11_pedantic, 60);
	nm_add(s, cxx11_pedantic, 60);
	nm_add(s, cxx17_pedantic_m32, 60);
	nm_add(s, wpadded_m64, 60);
	nm_add(s, wpadded_m32, 60);
	nm_add(s, no_libc_types, 10);
	nm_add(s, kernel_doc_clean, 60);
	return nm_run(s, NM_NEEDS_NOTHING);
}
