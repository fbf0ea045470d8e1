/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_sys: the system helpers of the tests, without Check: files, module
 * parameters, /proc, processes, capabilities, time, patterns and errno
 * names.  Nothing here asserts: each call returns 0 or -errno (or says in
 * its comment what it returns), so programs that are not Check programs
 * (the fuzzer, the fault injector, the benchmark) can link nmtest_sys.c on
 * its own.  The Check layer (nmtest_util.h and the rest of tests/common/)
 * is built on top of it.
 */
#ifndef NMTEST_SYS_H
#define NMTEST_SYS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/npu_mem.h>

#define NM_DEV_PATH	"/dev/" NPU_MEM_DEVICE_NAME
#define NM_SYSMOD	"/sys/module/npu_mem"
#define NM_DEBUGFS	"/sys/kernel/debug/npu_mem"

#define NM_4K		4096ULL
#define NM_2M		(2ULL << 20)
#define NM_1G		(1ULL << 30)
#define NM_KiB		1024ULL
#define NM_MiB		(1ULL << 20)

#define NM_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NM_ALIGN(x, a)		(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

const char *nm_errname(int err);	/* "EINVAL", or "errno 1234" */
const char *nm_retname(long ret);	/* "0", "-EINVAL", "17" */

/* ------------------------------------------------------------------ */
/* Memory contents                                                      */

void nm_fill(void *p, size_t len, uint64_t seed);
/* Offset of the first byte that differs from nm_fill(seed), or SIZE_MAX */
size_t nm_verify(const void *p, size_t len, uint64_t seed);
/* Offset of the first non-zero byte, or SIZE_MAX */
size_t nm_nonzero(const void *p, size_t len);
/* Offset of the first byte that is not v, or SIZE_MAX */
size_t nm_first_not(const void *p, size_t len, uint8_t v);
/* Pattern relative to a base offset: the word at byte offset o of the whole
 * buffer is the same whichever part of the buffer is mapped. */
void nm_fill_at(void *p, size_t len, uint64_t seed, uint64_t base);
size_t nm_verify_at(const void *p, size_t len, uint64_t seed, uint64_t base);

/* Touch addr (read, or write when write is true) under a SIGSEGV/SIGBUS
 * handler: 0 when it worked, else the signal number. */
int nm_probe(volatile void *addr, bool write);

/* ------------------------------------------------------------------ */
/* Processes, files, system                                             */

/* waitpid with a timeout: returns the status, or -1 (and kills the child
 * with SIGKILL) when it did not end within timeout_s seconds. */
int nm_wait_timeout(pid_t pid, double timeout_s);

/* Files this process has open (entries of /proc/self/fd), or -errno */
int nm_fds_open(void);
/* "VmPin:" of /proc/self/status, in bytes: 0 or -errno/-ENOENT */
int nm_vmpin(uint64_t *bytes);
/* Integer value after "key:" in a "key: value" file; 0 or -errno/-ENOENT */
int nm_kv_file(const char *path, const char *key, uint64_t *val);
/*
 * A /proc/meminfo value, kB, after the per-CPU parts of the node counters
 * are folded in (vm.stat_refresh, as root): on 5.10 FilePmdMapped lags by
 * chunks until then.  0 or -errno/-ENOENT
 */
int nm_meminfo_kb(const char *key, uint64_t *kb);
/* The running kernel's release string, and its major * 100 + minor */
const char *nm_kernel_release(void);
int nm_kernel_version(void);
/* The same with another separator ("key value" files: ' ') */
int nm_key_file(const char *path, const char *key, char sep, uint64_t *val);
int nm_fdinfo(int fd, const char *key, uint64_t *val);
/* Whole file into a malloc'd NUL-terminated string (NULL and errno) */
char *nm_read_file(const char *path);
int nm_write_file(const char *path, const char *text);
/* Exactly len bytes through a pipe or file: 0, or -EPIPE (the other end
 * went away, or an error) */
int nm_read_full(int fd, void *buf, size_t len);
int nm_write_full(int fd, const void *buf, size_t len);
/* A file holding one (signed: fault-injection's "times" may be -1) number,
 * in any base strtol reads: 0 or -errno */
int nm_read_long(const char *path, long *val);
/* Module parameter as an integer: 0 or -errno */
int nm_param_get(const char *name, uint64_t *val);
int nm_param_set(const char *name, uint64_t val);
/* The zero reserve's counters of debugfs npu_mem/usage on one line to
 * @out (taken, recycled, refilled, given back), as what a test exercised */
void nm_print_reserve_counters(FILE *out, const char *prefix);

/* Drop capabilities (CAP_* numbers, as a mask of 1ULL << cap) from the
 * effective, permitted and inheritable sets of the calling thread. */
int nm_drop_caps(uint64_t caps);

/* Mount debugfs in a private mount namespace of this process if it is not
 * mounted; returns 0 or -errno. */
int nm_debugfs_mount(void);

/* Run `sh -c cmd` with stderr folded into stdout; returns the exit status
 * (-1 when it could not run) and, when out is not NULL, the output in a
 * malloc'd string. */
int nm_shell(const char *cmd, char **out);

double nm_now(void);			/* CLOCK_MONOTONIC seconds */
/* $name as a number (strtoull base 0); def when unset, empty or not a
 * number. */
uint64_t nm_env_u64(const char *name, uint64_t def);
uint64_t nm_rand64(uint64_t *state);	/* splitmix64 */

/* ------------------------------------------------------------------ */
/* Runs that must do a minimum of work                                  */

/*
 * A race or stress that runs for some seconds and then demands a minimum
 * of work done (ALLOCs, handles freed by the other thread, rounds of each
 * kind) cannot take that minimum from the clock: under TCG, beside another
 * guest or a CPU hog, the same seconds hold several times less work, and
 * such a test fails by chance.  A span goes on for at least its seconds
 * and then until its minimums are met, but never past a ceiling; only a
 * run that reaches the ceiling short of them fails them.  The ceiling is
 * max(10 x the seconds, 300 s), not over 420 s (so the test reports
 * within the runner's per-program limit, 600 s) unless the seconds are:
 * NPU_MEM_CEILING_SECONDS sets it.
 */
struct nm_span {
	double t0;
	double min_end;		/* t0 + the seconds asked for */
	double max_end;		/* t0 + the ceiling */
};

/* The ceiling of a span of secs seconds: for Check and child timeouts,
 * which should be this plus a margin. */
double nm_span_ceiling(double secs);
void nm_span_start(struct nm_span *sp, double secs);
/* Go on working?  enough: the minimums are met.  True before the seconds
 * are over, and after them while !enough and the ceiling is not reached. */
bool nm_span_more(const struct nm_span *sp, bool enough);
/* The ceiling has passed (a run short of its minimums fails). */
bool nm_span_over(const struct nm_span *sp);
double nm_span_secs(const struct nm_span *sp);	/* seconds since start */

/*
 * In a forked child, where Check's assertions cannot report: print
 * "FILE:LINE: WHO: message" and exit with a status made from the line
 * (2 to 201), so that the parent's check of the status names the place.
 */
#define NM_CHILD_CHECK(who, cond, ...) do {				\
	if (!(cond)) {							\
		printf("%s:%d: %s: ", __FILE__, __LINE__, (who));	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fflush(stdout);						\
		_exit(__LINE__ % 200 + 2);				\
	}								\
} while (0)

#endif /* NMTEST_SYS_H */
