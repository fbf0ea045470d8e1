// SPDX-License-Identifier: MIT
/*
 * acltest: see acltest.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acltest.h"

const char *acltest_device_path(void)
{
	const char *p = getenv("NPU_MEM_DEVICE");

	return p && *p ? p : "/dev/" NPU_MEM_DEVICE_NAME;
}

void acltest_require_device(void)
{
	struct stat st;

	/*
	 * A missing node is a skip only where the module is not loaded: with
	 * the module there, a missing node is a bug the test must show.
	 */
	if (stat(acltest_device_path(), &st) && errno == ENOENT &&
	    access("/sys/module/npu_mem", F_OK) != 0) {
		printf("SKIP: %s does not exist (npu_mem module not loaded); "
		       "run this test in a guest: tests/vm/vm-run -- <test>\n",
		       acltest_device_path());
		exit(77);
	}
}

int acltest_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void acltest_driver_info(struct npu_mem_info *info)
{
	int fd = open(acltest_device_path(), O_RDWR | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "open %s: %s", acltest_device_path(),
		      strerror(errno));
	memset(info, 0, sizeof(*info));
	ck_assert_msg(ioctl(fd, NPU_MEM_IOCTL_GET_INFO, info) == 0,
		      "GET_INFO: %s", strerror(errno));
	close(fd);
}

uint32_t acltest_device_count(void)
{
	struct npu_mem_info info;

	acltest_driver_info(&info);
	return info.device_count ? info.device_count : 1;
}

void acltest_counters(struct acltest_counters *c)
{
	struct npu_mem_info info;

	acltest_driver_info(&info);
	c->allocated_bytes = info.allocated_bytes;
	c->buffers = info.buffers;
	c->huge_pages = info.huge_pages;
	c->normal_pages = info.normal_pages;
	c->giant_pages = info.giant_pages;
}

#define MAX_BYTES_PARAM "/sys/module/npu_mem/parameters/max_bytes"

int acltest_get_max_bytes(uint64_t *bytes)
{
	FILE *f = fopen(MAX_BYTES_PARAM, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%" SCNu64, bytes) != 1)
		ret = -EIO;
	fclose(f);
	return ret;
}

int acltest_set_max_bytes(uint64_t bytes, uint64_t *old)
{
	char buf[32];
	FILE *f;
	int ret = 0;

	if (old) {
		ret = acltest_get_max_bytes(old);
		if (ret)
			return ret;
	}
	f = fopen(MAX_BYTES_PARAM, "w");
	if (!f)
		return -errno;
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", bytes);
	if (fputs(buf, f) < 0)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

pid_t acltest_spawn(int (*fn)(int rfd, void *arg), void *arg, int *wfd)
{
	int p[2] = { -1, -1 };
	pid_t pid;

	if (wfd)
		ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		if (wfd)
			close(p[1]);
		_exit(fn(p[0], arg));
	}
	if (wfd) {
		close(p[0]);
		*wfd = p[1];
	}
	return pid;
}

int acltest_reap(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "child died (status %#x)", st);
	return WEXITSTATUS(st);
}

bool acltest_under_valgrind(void)
{
	const char *v = getenv("ACLTEST_VALGRIND");

	return v && *v && strcmp(v, "0");
}

static sigjmp_buf probe_env;

static void probe_handler(int sig)
{
	siglongjmp(probe_env, sig);
}

int acltest_probe(volatile void *addr, bool write)
{
	struct sigaction sa, old_segv, old_bus;
	volatile int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_handler;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(probe_env, 1);
	if (!sig) {
		if (write)
			*(volatile uint8_t *)addr = *(volatile uint8_t *)addr;
		else
			(void)*(volatile uint8_t *)addr;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

static inline uint8_t pattern_byte(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)(i / 4) * 2654435761u ^ seed;

	x ^= x >> 15;
	return (uint8_t)(x >> (8 * (i % 4)));
}

void acltest_fill(void *p, size_t len, uint32_t seed)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = pattern_byte(i, seed);
}

size_t acltest_verify(const void *p, size_t len, uint32_t seed)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pattern_byte(i, seed))
			return i;
	return SIZE_MAX;
}

double acltest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
