/* SPDX-License-Identifier: MIT */
/*
 * acltest: helpers for the libaclmem Check programs (tests/lib, tests/host).
 * Only libc, Check and the UAPI header are used here: every program in
 * tests/ links every .c file of tests/common, including ones that do not
 * link libaclmem.  Tests are registered with nm_add() (nmtest_suite.h);
 * the fixture most suites share is in acltest_device.h.
 */
#ifndef ACLTEST_H
#define ACLTEST_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/npu_mem.h>

#include "nmtest_suite.h"

/* Path the library opens: $NPU_MEM_DEVICE or /dev/npu-mem. */
const char *acltest_device_path(void);

/*
 * Exit 77 (skip) with a message when the device node is genuinely absent
 * (ENOENT); any other state of the node is the test's business.
 */
void acltest_require_device(void);

/* The running test cannot check what it is for here: say why and return;
 * the runners count it as skipped ("NM-SKIP: " lines, as nm_skip). */
#define acltest_skip(...) do {						\
	printf("NM-SKIP: %s: ", tcase_name());				\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
	return;								\
} while (0)

/* Run the suite; returns the exit status (0 when every test passed). */
int acltest_run(Suite *s);

/*
 * The driver's global counters, read through a file of its own (so the
 * library's state is not involved): allocated_bytes, buffers, pages.
 */
struct acltest_counters {
	uint64_t allocated_bytes;
	uint64_t buffers;
	uint64_t huge_pages;
	uint64_t normal_pages;
	uint64_t giant_pages;
};
void acltest_counters(struct acltest_counters *c);
/* GET_INFO through a file of its own; asserts success. */
void acltest_driver_info(struct npu_mem_info *info);
/*
 * NPUs the module serves (GET_INFO's device_count; 1 from a module before
 * ABI 1.3): the first device id every call refuses (107001).
 */
uint32_t acltest_device_count(void);

/*
 * The module's max_bytes parameter (0: no cap but RAM), through sysfs;
 * 0 or -errno.  The previous value is returned in *old when old is set.
 */
int acltest_set_max_bytes(uint64_t bytes, uint64_t *old);
int acltest_get_max_bytes(uint64_t *bytes);

/*
 * True under tests/lib/run.sh's valgrind pass (ACLTEST_VALGRIND=1): tests
 * then skip deliberate touches of unmapped memory, which memcheck would
 * rightly count as errors.
 */
bool acltest_under_valgrind(void);

/*
 * Fork a child that runs fn(rfd, arg) and exits with what it returns.
 * rfd is the read end of a pipe whose write end the parent gets in *wfd,
 * for what the child is to wait for (a key, a go); with wfd NULL there is
 * no pipe and rfd is -1.
 */
pid_t acltest_spawn(int (*fn)(int rfd, void *arg), void *arg, int *wfd);
/* Wait for pid; asserts it exited rather than died, returns its status. */
int acltest_reap(pid_t pid);

/* Touch addr; 0 when it worked, else the signal (SIGSEGV/SIGBUS) raised. */
int acltest_probe(volatile void *addr, bool write);

/* Deterministic patterns. */
void acltest_fill(void *p, size_t len, uint32_t seed);
/* Offset of the first byte differing from acltest_fill(seed), or SIZE_MAX. */
size_t acltest_verify(const void *p, size_t len, uint32_t seed);

double acltest_now(void);

#endif /* ACLTEST_H */
