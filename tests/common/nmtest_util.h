/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_util: helpers shared by the /dev/npu-mem ioctl tests (tests/kernel/) and
 * the UAPI layout tests (tests/host/).  Everything here is for Check test
 * programs: assertion helpers report the caller's file and line.  What
 * needs no Check (files, parameters, processes, patterns) is in
 * nmtest_sys.h, which this header includes.
 *
 * Conventions:
 *  - nm_*() wrappers of the driver's ioctls return 0 or -errno, never assert;
 *    the *_ok() variants assert success;
 *  - nm_assert_ret(expr, -EFOO) for those, nm_assert_errno(expr, EFOO) for
 *    raw syscalls (-1 and errno), nm_assert_mmap_errno() for mmap();
 *  - a "sentinel" is an unrelated live, mapped, patterned buffer: after every
 *    bad-input test, NM_SENTINEL_CHECK() proves its contents, its QUERY
 *    answer and the driver's counters were not disturbed.
 */
#ifndef NMTEST_UTIL_H
#define NMTEST_UTIL_H

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <linux/npu_mem.h>

#include "nmtest_suite.h"
#include "nmtest_sys.h"

/* Raw command numbers, for tests that encode wrong sizes or directions. */
#define NM_IOC(dir, nr, size)	_IOC((dir), NPU_MEM_IOCTL_MAGIC, (nr), (size))
#define NM_IOC_RW		(_IOC_READ | _IOC_WRITE)

/* The v1 ioctls, for tests that loop over all of them. */
struct nm_ioctl_desc {
	const char *name;
	unsigned long cmd;
	unsigned int nr;
	unsigned int dir;
	size_t size;		/* sizeof the struct, as this header has it */
	size_t v1_size;		/* its ABI 1.0 size: smaller ones are refused */
};
extern const struct nm_ioctl_desc nm_ioctls_v1[];
extern const size_t nm_n_ioctls_v1;

/* ------------------------------------------------------------------ */
/* Suite plumbing (libevdev style: one TCase per test)                */

enum nm_needs {
	NM_NEEDS_NOTHING = 0,
	NM_NEEDS_DEVICE = 1,	/* exit 77 when /dev/npu-mem is absent */
};

Suite *nm_suite(const char *name);
/* Run the suite, print the summary, return the process exit status.
 * With NM_NEEDS_DEVICE, exits 77 first when /dev/npu-mem does not exist. */
int nm_run(Suite *s, enum nm_needs needs);
void nm_require_device(void);
/* The running test cannot check what it is for here (no such device or
 * feature): say why and return from it.  The runner counts the test as
 * skipped, not passed (tests/guest/run-suites.sh, "NM-SKIP: "). */
#define nm_skip(...) do {						\
	nm_skip_note(__VA_ARGS__);					\
	return;								\
} while (0)
void nm_skip_note(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Linux 7.x refuses madvise(MADV_DOFORK) with EINVAL on every VM_SPECIAL
 * mapping, and ours are VM_DONTEXPAND (mmap.c says why): true when this
 * kernel does so (a fresh mapping of ours tried), so that the tests of
 * inherited mappings skip there instead of failing. */
bool nm_dofork_refused(void);
#define NM_DOFORK_REFUSED "the kernel refuses MADV_DOFORK on VM_DONTEXPAND mappings (7.x)"

/* ------------------------------------------------------------------ */
/* Assertions                                                          */

/* expr returns 0 or -errno (or a value); compare exactly. */
#define nm_assert_ret(expr, want) do {					\
	long _nm_r = (long)(expr);					\
	long _nm_w = (long)(want);					\
	ck_assert_msg(_nm_r == _nm_w, "%s: expected %s, got %s",	\
		      #expr, nm_retname(_nm_w), nm_retname(_nm_r));	\
} while (0)

#define nm_assert_ok(expr) nm_assert_ret(expr, 0)

/* ck_assert*() records a "mark point" (a write to Check's pipe) for every
 * assertion that holds, which under TCG costs more than most of what the
 * tests do: in loops of thousands use NM_REQUIRE, free until it fails. */
#define NM_REQUIRE(cond, ...) do {					\
	if (!(cond))							\
		ck_abort_msg(__VA_ARGS__);				\
} while (0)

/* expr is a syscall: -1 with errno == err. */
#define nm_assert_errno(expr, err) do {					\
	errno = 0;							\
	long _nm_r = (long)(expr);					\
	int _nm_e = errno;						\
	ck_assert_msg(_nm_r == -1 && _nm_e == (err),			\
		      "%s: expected -1/%s, got %ld/%s", #expr,		\
		      nm_errname(err), _nm_r,				\
		      _nm_r == -1 ? nm_errname(_nm_e) : "-");		\
} while (0)

/* expr is a syscall that must succeed (not -1). */
#define nm_assert_sys(expr) ({						\
	errno = 0;							\
	long _nm_r = (long)(expr);					\
	ck_assert_msg(_nm_r != -1, "%s failed: %s", #expr,		\
		      nm_errname(errno));				\
	_nm_r;								\
})

#define nm_assert_mmap_errno(expr, err) do {				\
	errno = 0;							\
	void *_nm_p = (expr);						\
	int _nm_e = errno;						\
	if (_nm_p != MAP_FAILED)					\
		munmap(_nm_p, 4096);					\
	ck_assert_msg(_nm_p == MAP_FAILED && _nm_e == (err),		\
		      "%s: expected MAP_FAILED/%s, got %p/%s", #expr,	\
		      nm_errname(err), _nm_p,				\
		      _nm_p == MAP_FAILED ? nm_errname(_nm_e) : "-");	\
} while (0)

/* The bytes at p (at byte base of the buffer) hold nm_fill_at(seed, base). */
#define nm_assert_pattern(p, len, seed, base) do {			\
	size_t _bad = nm_verify_at((p), (len), (seed), (base));		\
	ck_assert_msg(_bad == SIZE_MAX, "%s: pattern %#llx wrong at "	\
		      "offset %llu", #p, (unsigned long long)(seed),	\
		      (unsigned long long)((base) + _bad));		\
} while (0)

/* ------------------------------------------------------------------ */
/* Device and ioctls                                                   */

/* open(/dev/npu-mem, O_RDWR | O_CLOEXEC), asserting success. */
int nm_open(void);

int nm_ioctl(int fd, unsigned long cmd, void *arg);	/* 0 or -errno */
int nm_get_info(int fd, struct npu_mem_info *info);
int nm_alloc(int fd, uint64_t size, uint32_t policy, uint32_t flags,
	     struct npu_mem_alloc *out);
int nm_free(int fd, uint32_t handle);
int nm_query(int fd, uint32_t handle, struct npu_mem_buffer *out);

#define nm_get_info_ok(fd, info) \
	_nm_get_info_ok((fd), (info), __FILE__, __LINE__)
#define nm_alloc_ok(fd, size, policy, flags, out) \
	_nm_alloc_ok((fd), (size), (policy), (flags), (out), __FILE__, __LINE__)
#define nm_free_ok(fd, handle) _nm_free_ok((fd), (handle), __FILE__, __LINE__)
void _nm_get_info_ok(int fd, struct npu_mem_info *info, const char *f, int l);
uint32_t _nm_alloc_ok(int fd, uint64_t size, uint32_t policy, uint32_t flags,
		      struct npu_mem_alloc *out, const char *f, int l);
void _nm_free_ok(int fd, uint32_t handle, const char *f, int l);
/*
 * ALLOC a buffer the device can be addressed in by offset from dev_addr:
 * where it sees bounce buffers that are not one range, ALLOC again (up to
 * 8 tries).  Returns how many tries it took.
 */
#define nm_alloc_dev_contig_ok(fd, size, policy, flags, out) \
	_nm_alloc_dev_contig_ok((fd), (size), (policy), (flags), (out), \
				__FILE__, __LINE__)
int _nm_alloc_dev_contig_ok(int fd, uint64_t size, uint32_t policy,
			    uint32_t flags, struct npu_mem_alloc *out,
			    const char *f, int l);

/* mmap(NULL, len, prot, MAP_SHARED, fd, off): MAP_FAILED and errno on error */
void *nm_mmap(int fd, uint64_t off, size_t len, int prot);
/* Map a whole buffer read/write (or prot), asserting success. */
#define nm_map_ok(fd, a, prot) _nm_map_ok((fd), (a), (prot), __FILE__, __LINE__)
void *_nm_map_ok(int fd, const struct npu_mem_alloc *a, int prot,
		 const char *f, int l);

const char *nm_policy_name(uint32_t policy);

/* Every size/backing/flag rule of the ABI for one ALLOC result, except the
 * DEV_CONTIG <-> dev_segments == 1 relation (nm_assert_dev_contig, checked
 * on its own in alloc_policy so that one rule does not mask the others). */
#define nm_assert_buffer_sane(req, policy, flags, buf) \
	_nm_assert_buffer_sane((req), (policy), (flags), (buf), __FILE__, __LINE__)
void _nm_assert_buffer_sane(uint64_t req, uint32_t policy, uint32_t flags,
			    const struct npu_mem_buffer *b, const char *f, int l);
#define nm_assert_dev_contig(buf) _nm_assert_dev_contig((buf), __FILE__, __LINE__)
void _nm_assert_dev_contig(const struct npu_mem_buffer *b, const char *f,
			   int l);
#define nm_assert_buf_eq(a, b) _nm_assert_buf_eq((a), (b), __FILE__, __LINE__)
void _nm_assert_buf_eq(const struct npu_mem_buffer *a,
		       const struct npu_mem_buffer *b, const char *f, int l);

/* ------------------------------------------------------------------ */
/* Counters                                                            */

struct nm_counters {
	uint64_t allocated_bytes;
	uint64_t huge_pages;
	uint64_t normal_pages;
	uint64_t giant_pages;
	uint64_t buffers;
	uint64_t client_buffers;	/* of the fd they were read through */
	uint64_t client_bytes;
};

#define nm_counters(fd, c) _nm_counters((fd), (c), __FILE__, __LINE__)
void _nm_counters(int fd, struct nm_counters *c, const char *f, int l);
/* All seven fields equal */
#define nm_assert_counters_eq(a, b) \
	_nm_assert_counters_eq((a), (b), true, __FILE__, __LINE__)
/* Global fields only (different fds, or client fields known to differ) */
#define nm_assert_global_eq(a, b) \
	_nm_assert_counters_eq((a), (b), false, __FILE__, __LINE__)
void _nm_assert_counters_eq(const struct nm_counters *a,
			    const struct nm_counters *b, bool client,
			    const char *f, int l);
/* Re-read through fd and compare with *c */
#define nm_assert_counters_now(fd, c) do {				\
	struct nm_counters _nm_now;					\
	nm_counters((fd), &_nm_now);					\
	nm_assert_counters_eq((c), &_nm_now);				\
} while (0)
#define nm_assert_global_now(fd, c) do {				\
	struct nm_counters _nm_now;					\
	nm_counters((fd), &_nm_now);					\
	nm_assert_global_eq((c), &_nm_now);				\
} while (0)
/* The counters a live buffer adds (c += b, or c -= b with sign -1). */
void nm_counters_add(struct nm_counters *c, const struct npu_mem_buffer *b,
		     int sign, bool client);
void nm_counters_print(const char *tag, const struct nm_counters *c);

/* ------------------------------------------------------------------ */
/* Sentinel: an unrelated live buffer that bad input must not disturb  */

struct nm_sentinel {
	int fd;
	struct npu_mem_alloc alloc[2];	/* one NORMAL_ONLY, one HUGE_FIRST */
	uint8_t *map[2];
	uint8_t *expect[2];		/* what map[] must hold */
	uint64_t seed;
	struct nm_counters counters;	/* after the sentinel's allocations */
};

/* Allocate, map and fill the sentinel buffers in fd; snapshot counters. */
void nm_sentinel_init(struct nm_sentinel *s, int fd);
#define NM_SENTINEL_CHECK(s) nm_sentinel_check((s), __FILE__, __LINE__)
void nm_sentinel_check(struct nm_sentinel *s, const char *f, int l);
/* Take the counters again: for tests that keep buffers of their own live
 * across the bad calls they check. */
void nm_sentinel_resnap(struct nm_sentinel *s);
/* Unmap and free (asserting), then counters are the pre-init ones. */
void nm_sentinel_fini(struct nm_sentinel *s);

/* ------------------------------------------------------------------ */
/* Guard pages (tt-kmd style)                                           */

struct nm_guard {
	void *base;
	size_t len;
};
/* Memory for an object of len bytes whose last `overhang` bytes are in a
 * PROT_NONE page: overhang 0 puts the object flush at the end of a R/W page
 * followed by a PROT_NONE page.  The object is zeroed. */
void *nm_guard_place(struct nm_guard *g, size_t len, size_t overhang);
/* Make the R/W page(s) read-only */
void nm_guard_readonly(struct nm_guard *g);
void nm_guard_release(struct nm_guard *g);
/* An address that is certainly unmapped (mmap + munmap of 2 pages). */
void *nm_unmapped_addr(void);

/* ------------------------------------------------------------------ */
/* Processes, files, system                                             */

/* Wait for pid, assert it exited with status 0; msg names the child. */
#define nm_wait_ok(pid, msg) _nm_wait_ok((pid), (msg), __FILE__, __LINE__)
void _nm_wait_ok(pid_t pid, const char *msg, const char *f, int l);
/* Poll GET_INFO through fd until no chunk of a freed buffer is retained
 * (the module rescans them about every second), for at most secs: 0, or
 * -ETIMEDOUT with the bytes still retained in *left. */
int nm_await_no_retained(int fd, double secs, uint64_t *left);
/* "VmPin:" of /proc/self/status, in bytes (asserting it is there) */
uint64_t nm_vmpin_bytes(void);
/* Unload the module and load it again as vm-run loaded it (its job file
 * names it and its parameters), waiting for the files of earlier tests'
 * children to close: 0, or -1 with a reason to skip in why (not in a
 * vm-run guest, still in use after a minute); asserts that it loads. */
int nm_reload_module(char *why, size_t len);
/* An unchecked fixture that saves the max_bytes parameter before a test
 * and puts it back after, even after a test that died. */
extern const struct nm_fixture nm_max_bytes_fx;
/* Fail the running test if the kernel logged a bad page, BUG or WARNING
 * since vm-run's test-start marker (for suites whose last test checks
 * that no page refcount went wrong anywhere before it). */
void nm_assert_dmesg_clean(void);

#endif /* NMTEST_UTIL_H */
