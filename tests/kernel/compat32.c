// SPDX-License-Identifier: GPL-2.0-only
/*
 * compat32: 32-bit userspace works the same (ioctls through .compat_ioctl,
 * mmap through mmap2).  Runs build/tests/kernel-m32/compat32_helper, a
 * static 32-bit program (tests/kernel/m32/compat32_helper.c: i386 on
 * x86_64, armhf on arm64), one subcommand
 * per test: GET_INFO, ALLOC/QUERY/FREE, mmap (whole, partial, MAP_PRIVATE,
 * too long, FREE while mapped; mmap offsets reachable through mmap2's 2^44
 * limit), the error rules (ENOTTY, EINVAL, E2BIG, EFAULT, sizes, page-end
 * placement) and GUP I/O.  Across ABIs on one open file: a buffer the
 * 64-bit side allocated QUERYs to the same 48 bytes from the 32-bit side,
 * and the other way round.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_util.h"

static char helper[PATH_MAX + 32];

static void find_helper(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	ck_assert(n > 0);
	self[n] = 0;
	slash = strrchr(self, '/');
	ck_assert(slash);
	*slash = 0;
	/* build/tests/kernel/compat32 -> build/tests/kernel-m32/ */
	snprintf(helper, sizeof(helper), "%s-m32/compat32_helper", self);
	ck_assert_msg(access(helper, X_OK) == 0, "%s: %s (make -C tests, "
		      "or make arm64, builds it)", helper,
		      nm_errname(errno));
}

/* Run the helper with args, fd 3 = fd3 (or none); return its output. */
static char *run_helper(int fd3, const char *a1, const char *a2)
{
	int out[2], st;
	char *buf = calloc(1, 65536);
	size_t len = 0;
	pid_t pid;

	find_helper();
	ck_assert(buf);
	ck_assert_int_eq(pipe(out), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(out[1], 2);
		if (fd3 >= 0 && dup2(fd3, 3) != 3)
			_exit(126);
		execl(helper, helper, a1, a2, (char *)NULL);
		printf("exec %s: %s\n", helper, strerror(errno));
		_exit(127);
	}
	close(out[1]);
	for (;;) {
		ssize_t n = read(out[0], buf + len, 65535 - len);

		if (n <= 0)
			break;
		len += n;
	}
	close(out[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	printf("compat32_helper %s%s%s:\n%s", a1, a2 ? " " : "", a2 ? a2 : "",
	       buf);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "32-bit helper '%s' failed (status %#x):\n%.2000s", a1,
		      st, buf);
	return buf;
}

static void simple(const char *cmd)
{
	struct nm_counters start;
	int obs = nm_open();

	nm_counters(obs, &start);
	free(run_helper(-1, cmd, NULL));
	nm_assert_counters_now(obs, &start);
	close(obs);
}

START_TEST(compat_get_info)
{
	simple("info");
}
END_TEST

START_TEST(compat_alloc_query_free)
{
	simple("alloc");
}
END_TEST

START_TEST(compat_mmap)
{
	simple("mmap");
}
END_TEST

START_TEST(compat_errors)
{
	simple("errors");
}
END_TEST

START_TEST(compat_io)
{
	simple("io");
}
END_TEST

static void tohex(const void *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", ((const uint8_t *)p)[i]);
}

START_TEST(compat_same_buffer_both_abis)
{
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	char want[2 * sizeof(q) + 1], arg[16], *out, *sp;
	unsigned long h32;
	int fd = nm_open();

	/* 64-bit ALLOC, 32-bit QUERY */
	nm_alloc_ok(fd, 5 * NM_MiB + 3, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	tohex(&a.buf, sizeof(a.buf), want);
	snprintf(arg, sizeof(arg), "%u", a.handle);
	out = run_helper(fd, "query", arg);
	ck_assert_msg(!strncmp(out, want, strlen(want)),
		      "32-bit QUERY of a 64-bit buffer:\n%s\nwant\n%s", out,
		      want);
	free(out);
	/* 32-bit ALLOC, 64-bit QUERY */
	out = run_helper(fd, "alloc-hex", NULL);
	h32 = strtoul(out, &sp, 10);
	ck_assert(h32 && *sp == ' ');
	nm_assert_ok(nm_query(fd, h32, &q));
	tohex(&q, sizeof(q), want);
	ck_assert_msg(!strncmp(sp + 1, want, strlen(want)),
		      "64-bit QUERY of a 32-bit buffer:\n%s\nwant\n%s", sp + 1,
		      want);
	nm_assert_buffer_sane(3 * NM_MiB + 1, NPU_MEM_POLICY_HUGE_FIRST, 0, &q);
	free(out);
	nm_free_ok(fd, h32);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("compat32");

	nm_add(s, compat_get_info, 30);
	nm_add(s, compat_alloc_query_free, 30);
	nm_add(s, compat_mmap, 60);
	nm_add(s, compat_errors, 30);
	nm_add(s, compat_io, 60);
	nm_add(s, compat_same_buffer_both_abis, 30);
	return nm_run(s, NM_NEEDS_DEVICE);
}
