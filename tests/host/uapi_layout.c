// SPDX-License-Identifier: GPL-2.0-only
/*
 * uapi_layout: the v1 structs of <linux/npu_mem.h> have exactly the layout
 * recorded in tests/common/nmtest_abi_layout.h, for 64-bit and 32-bit
 * userspace alike, with no implicit hole or padding anywhere, only __u32 and
 * __u64 members, and ioctl numbers encoding those sizes.
 *
 * Runs on the host (no device).  Needs the compiler the tests were built with
 * (NMTEST_CC, with -m32 support from gcc-multilib), nm and pahole (dwarves).
 * The 32-bit objects are only compiled and inspected, never executed, so this
 * works where the host kernel cannot run 32-bit programs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nmtest_util.h"
#include "nmtest_abi_layout.h"	/* the _Static_asserts hold for this build */

#ifndef NMTEST_TOP
#error "build with -DNMTEST_TOP=<source tree> (tests/Makefile does)"
#endif
#ifndef NMTEST_CC
#define NMTEST_CC "cc"
#endif

static char tmpdir[64];

static void mk_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nmtest-layout.XXXXXX");
	ck_assert_msg(mkdtemp(tmpdir), "mkdtemp: %s", nm_errname(errno));
}

static void rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	nm_shell(cmd, NULL);
}

static void write_text(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_msg(f, "fopen %s: %s", path, nm_errname(errno));
	fputs(text, f);
	ck_assert(fclose(f) == 0);
}

/* Run a shell command in tmpdir; assert exit status 0; return its output. */
static char *run_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *run_ok(const char *fmt, ...)
{
	char *cmd, *full, *out;
	va_list ap;
	int st;

	va_start(ap, fmt);
	ck_assert(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	ck_assert(asprintf(&full, "cd '%s' && %s", tmpdir, cmd) >= 0);
	st = nm_shell(full, &out);
	ck_assert_msg(st == 0, "`%s` exited %d:\n%.3000s", cmd, st,
		      out ? out : "");
	free(cmd);
	free(full);
	return out;
}

/* Probe: one object per ABI that encodes every size and offset as the size
 * of a symbol (read back with nm -S), and defines one variable of each
 * struct so that its debug info has all of them (for pahole). */
static const char probe_src[] =
	"#include <linux/npu_mem.h>\n"
	"#include \"nmtest_abi_layout.h\"\n"
	"#define S(s, size) char nm_size__##s[sizeof(struct s)];"
	" struct s nm_var__##s;\n"
	"#define F(s, f, off, size)"
	" char nm_off__##s##__##f[offsetof(struct s, f) + 1];"
	" char nm_fsz__##s##__##f[sizeof(((struct s *)0)->f)];\n"
	"NM_ABI_STRUCTS(S)\n"
	"NM_ABI_FIELDS(F)\n"
	"#define I(cmd, dir, nr, s) unsigned int nm_cmd__##cmd = cmd;\n"
	"NM_ABI_IOCTLS(I)\n";

static void build_probe(const char *bits)
{
	char *out;

	write_text("probe.c", probe_src);
	out = run_ok("%s -m%s -std=gnu11 -g -O0 -fno-common -Wall -Wextra "
		     "-Werror -I'%s/include/uapi' -I'%s/tests/common' "
		     "-c probe.c -o probe%s.o",
		     NMTEST_CC, bits, NMTEST_TOP, NMTEST_TOP, bits);
	free(out);
}

struct sym {
	char name[96];
	unsigned long long size;
};

static size_t read_syms(const char *bits, struct sym *syms, size_t max)
{
	char *out = run_ok("nm -S --defined-only probe%s.o", bits), *line,
	     *save = NULL;
	size_t n = 0;

	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr, size;
		char type, name[96];

		if (sscanf(line, "%llx %llx %c %95s", &addr, &size, &type,
			   name) != 4 || strncmp(name, "nm_", 3))
			continue;
		ck_assert(n < max);
		snprintf(syms[n].name, sizeof(syms[n].name), "%s", name);
		syms[n].size = size;
		n++;
	}
	free(out);
	return n;
}

START_TEST(layout_native)
{
	/* The _Static_asserts already hold (this file compiled); say it at
	 * run time too, with the numbers. */
#define S(s, size)							\
	ck_assert_uint_eq(sizeof(struct s), size);			\
	printf("struct %-16s %3zu bytes\n", #s, sizeof(struct s));
#define F(s, f, off, size)						\
	ck_assert_uint_eq(offsetof(struct s, f), off);			\
	ck_assert_uint_eq(sizeof(((struct s *)0)->f), size);
	NM_ABI_STRUCTS(S)
	NM_ABI_FIELDS(F)
#undef S
#undef F
}
END_TEST

START_TEST(layout_m64_static_asserts)
{
	mk_tmpdir();
	build_probe("64");
	rm_tmpdir();
}
END_TEST

START_TEST(layout_m32_static_asserts)
{
	mk_tmpdir();
	build_probe("32");
	rm_tmpdir();
}
END_TEST

START_TEST(layout_m32_equals_m64)
{
	static struct sym s32[256], s64[256];
	size_t n32, n64, nexp = 0;

#define S(s, size) nexp++;
#define F(s, f, off, size) nexp += 2;
	NM_ABI_STRUCTS(S)
	NM_ABI_FIELDS(F)
#undef S
#undef F
	mk_tmpdir();
	build_probe("32");
	build_probe("64");
	n32 = read_syms("32", s32, NM_ARRAY_SIZE(s32));
	n64 = read_syms("64", s64, NM_ARRAY_SIZE(s64));
	/* size/offset symbols, plus the struct variables and commands */
	ck_assert_msg(n64 >= nexp, "only %zu layout symbols in probe64.o, "
		      "want %zu", n64, nexp);
	ck_assert_uint_eq(n32, n64);
	for (size_t i = 0; i < n64; i++) {
		size_t j;

		for (j = 0; j < n32; j++)
			if (!strcmp(s64[i].name, s32[j].name))
				break;
		ck_assert_msg(j < n32, "%s missing from the -m32 probe",
			      s64[i].name);
		ck_assert_msg(s64[i].size == s32[j].size,
			      "%s: %llu with -m64, %llu with -m32 "
			      "(nm_size=sizeof, nm_off=offsetof+1, "
			      "nm_fsz=member size)", s64[i].name,
			      s64[i].size, s32[j].size);
	}
	printf("%zu sizes/offsets identical with -m32 and -m64\n", n64);
	rm_tmpdir();
}
END_TEST

/*
 * pahole: no struct may have a hole, tail padding, a member with padding
 * inside, or be packed-looking; members are __u32, __u64 (arrays of them)
 * or struct npu_mem_buffer, in the order of the table.
 */
static void pahole_check(const char *bits)
{
	char *out, *line, *save = NULL, cur[64] = "";
	size_t fi = 0, nstructs = 0;
	static const struct {
		const char *s, *f;
	} fields[] = {
#define F(s, f, off, size) { #s, #f },
		NM_ABI_FIELDS(F)
#undef F
	};

	mk_tmpdir();
	build_probe(bits);
	out = run_ok("pahole probe%s.o", bits);
	printf("pahole -m%s:\n%s", bits, out);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char type[80], type2[64], name[64];

		ck_assert_msg(!strstr(line, "XXX") && !strstr(line, "padding") &&
			      !strstr(line, "holes:") &&
			      !strstr(line, "packed") &&
			      !strstr(line, "bit hole"),
			      "-m%s: pahole reports a hole or padding: %.200s",
			      bits, line);
		if (sscanf(line, "struct %63s {", cur) == 1) {
			nstructs++;
			continue;
		}
		if (!strncmp(line, "};", 2) || !strncmp(line, "}", 1)) {
			cur[0] = 0;
			continue;
		}
		if (!cur[0] || !strstr(line, "/*") || line[0] != '\t' ||
		    line[1] == '/')
			continue;
		/* "<tab>__u64 name[4]; <comment: offset size>" or
		 * "<tab>struct npu_mem_buffer buf; ..." */
		if (sscanf(line, " struct %63s %63[^;];", type2, name) == 2) {
			snprintf(type, sizeof(type), "struct %s", type2);
		} else {
			ck_assert_msg(sscanf(line, " %63s %63[^;];", type,
					     name) == 2,
				      "cannot parse pahole line: %s", line);
		}
		char *br = strchr(name, '[');

		if (br)
			*br = 0;
		ck_assert_msg(!strcmp(type, "__u32") || !strcmp(type, "__u64") ||
			      !strcmp(type, "struct npu_mem_buffer"),
			      "struct %s member %s has type %s (only __u32, "
			      "__u64 allowed)", cur, name, type);
		ck_assert_msg(fi < NM_ARRAY_SIZE(fields),
			      "struct %s has more members than the table "
			      "(%s)", cur, name);
		ck_assert_msg(!strcmp(cur, fields[fi].s) &&
			      !strcmp(name, fields[fi].f),
			      "member %d is %s.%s, the table has %s.%s "
			      "(structs must only grow at their end)",
			      (int)fi, cur, name, fields[fi].s, fields[fi].f);
		fi++;
	}
	ck_assert_msg(fi == NM_ARRAY_SIZE(fields),
		      "pahole listed %zu members, the table has %zu", fi,
		      NM_ARRAY_SIZE(fields));
	ck_assert_uint_ge(nstructs, 7);
	free(out);
	rm_tmpdir();
}

START_TEST(pahole_no_holes_m64)
{
	pahole_check("64");
}
END_TEST

START_TEST(pahole_no_holes_m32)
{
	pahole_check("32");
}
END_TEST

START_TEST(ioctl_numbers)
{
	/* Encodings are _Static_asserted; print and re-check at run time. */
#define I(cmd, dir, nr, s)						\
	ck_assert_uint_eq(_IOC_TYPE(cmd), 0xB9);			\
	ck_assert_uint_eq(_IOC_NR(cmd), nr);				\
	ck_assert_uint_eq(_IOC_DIR(cmd), dir);				\
	ck_assert_uint_eq(_IOC_SIZE(cmd), sizeof(struct s));		\
	printf("%-24s %#010lx nr %#04x size %3u\n", #cmd,		\
	       (unsigned long)(cmd), nr, (unsigned)_IOC_SIZE(cmd));
	NM_ABI_IOCTLS(I)
#undef I
	/* And the nm_ioctls_v1 table the kernel tests use agrees. */
	ck_assert_uint_eq(nm_n_ioctls_v1, 6);
	for (size_t i = 0; i < nm_n_ioctls_v1; i++) {
		const struct nm_ioctl_desc *d = &nm_ioctls_v1[i];

		ck_assert_uint_eq(d->cmd, NM_IOC(d->dir, d->nr, d->size));
	}
}
END_TEST

START_TEST(flag_and_enum_values)
{
	/* Values are ABI too. */
	ck_assert_uint_eq(NPU_MEM_PAGE_4K, 1ULL << 12);
	ck_assert_uint_eq(NPU_MEM_PAGE_2M, 1ULL << 21);
	ck_assert_uint_eq(NPU_MEM_PAGE_1G, 1ULL << 30);
	ck_assert_int_eq(NPU_MEM_POLICY_HUGE_FIRST, 0);
	ck_assert_int_eq(NPU_MEM_POLICY_HUGE_ONLY, 1);
	ck_assert_int_eq(NPU_MEM_POLICY_NORMAL_ONLY, 2);
	ck_assert_int_eq(NPU_MEM_POLICY_HUGE1G_ONLY, 3);
	ck_assert_int_eq(NPU_MEM_POLICY_COUNT, 4);
	ck_assert_uint_eq(NPU_MEM_ALLOC_READONLY, 1);
	ck_assert_uint_eq(NPU_MEM_ALLOC_VALID, 1);
	ck_assert_uint_eq(NPU_MEM_BUF_READONLY, 1);
	ck_assert_uint_eq(NPU_MEM_BUF_DEV_CONTIG, 2);
	ck_assert_uint_eq(NPU_MEM_BUF_DEV_HIDDEN, 4);
	ck_assert_uint_eq(NPU_MEM_DEV_COHERENT, 1);
	ck_assert_uint_eq(NPU_MEM_DEV_IOMMU, 2);
	ck_assert_uint_eq(NPU_MEM_DEV_PCI, 4);
	ck_assert_int_eq(NPU_MEM_SYNC_TO_DEVICE, 1);
	ck_assert_int_eq(NPU_MEM_SYNC_FROM_DEVICE, 2);
	ck_assert_int_eq(NPU_MEM_SYNC_BIDIRECTIONAL, 3);
	ck_assert_str_eq(NPU_MEM_DEVICE_NAME, "npu-mem");
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("uapi_layout");

	nm_add(s, layout_native, 10);
	nm_add(s, layout_m64_static_asserts, 60);
	nm_add(s, layout_m32_static_asserts, 60);
	nm_add(s, layout_m32_equals_m64, 60);
	nm_add(s, pahole_no_holes_m64, 60);
	nm_add(s, pahole_no_holes_m32, 60);
	nm_add(s, ioctl_numbers, 10);
	nm_add(s, flag_and_enum_values, 10);
	return nm_run(s, NM_NEEDS_NOTHING);
}
