// SPDX-License-Identifier: GPL-2.0-only
/*
 * reserve_fault: the zero reserve (kernel/reserve.c) when memory fails.
 * Root.  Exit 77 when the module has no reserve.
 *
 *   reserve_fault
 *
 * 1. Pressure while ALLOC takes chunks: with a full reserve, a child hogs
 *    more than MemAvailable (as much again as half the reserve), so that
 *    reclaim and the shrinker run, while this process ALLOCs 4 MiB
 *    HUGE_FIRST buffers in a loop, reads every byte of each (all zero),
 *    dirties it and frees it (its chunks are recycled, to be zeroed again).
 * 2. A refill's allocation failing, where the kernel has fail_page_alloc:
 *    the refill runs in the reserve's kernel thread, which a task filter
 *    (make-it-fail is per task) cannot name, and the module has no fault
 *    point of its own.  So the filter is off and min-order is 9: only 2 MiB
 *    allocations fail, anyone's, and only `times` of them, with the reserve
 *    empty and asked to fill and the same ALLOC loop running.  Anything else
 *    in the guest that asks for 2 MiB then (THP) falls back to small pages.
 *    After the window the reserve must fill (a starved refill retries).
 * 3. A refill starved on every kernel: reserve_bytes above MemAvailable
 *    stops it (and ALLOC) the way a failed allocation does; once it is
 *    back, the reserve must fill.
 * All: ALLOC gives a zeroed buffer or ENOMEM; the hog runs to its end;
 * with both watermarks back at 0 the reserve drains to 0 bytes; and
 * GET_INFO's allocated_bytes is back at its start.  The kernel's health
 * (no BUG, WARNING, OOM kill) is run-suites.sh's dmesg check.  The
 * watermarks are restored at exit.  Exit 1 on any violation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/npu_mem.h>

#include "nmtest_sys.h"

#define DEV_PATH	"/dev/" NPU_MEM_DEVICE_NAME
#define FPA		"/sys/kernel/debug/fail_page_alloc/"
#define BUF_SIZE	(4 * NM_MiB)
#define FAILS		"8"	/* 2 MiB allocations failed in part 2 */

static int violations;
static int ctl_fd = -1;

static void violation(const char *fmt, ...)
{
	va_list ap;

	violations++;
	printf("VIOLATION: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void info(struct npu_mem_info *i)
{
	memset(i, 0, sizeof(*i));
	if (ioctl(ctl_fd, NPU_MEM_IOCTL_GET_INFO, i)) {
		printf("GET_INFO: %s\n", strerror(errno));
		exit(1);
	}
}

static uint64_t held(void)
{
	struct npu_mem_info i;

	info(&i);
	return i.zero_reserve_bytes;
}

/* Low first: a high under the low one counts as the low one. */
static void set_reserve(uint64_t low_mb, uint64_t high_mb)
{
	if (nm_param_set("zero_reserve_low_mb", low_mb) ||
	    nm_param_set("zero_reserve_high_mb", high_mb)) {
		printf("cannot set the watermarks to %llu/%llu MiB\n",
		       (unsigned long long)low_mb, (unsigned long long)high_mb);
		exit(1);
	}
}

/* Poll (the thread fills and drains) until held() is at least / at most @b. */
static bool await_held(uint64_t b, bool at_least, double secs)
{
	double end = nm_now() + secs;
	uint64_t h;

	while (h = held(), at_least ? h < b : h > b) {
		if (nm_now() > end)
			return false;
		usleep(20000);
	}
	return true;
}

static void drained(const char *part)
{
	set_reserve(0, 0);
	if (!await_held(0, false, 60))
		violation("%s: %llu bytes in the reserve 60 s after both watermarks went to 0",
			  part, (unsigned long long)held());
}

struct loop {
	unsigned long ok, enomem;
};

/* One ALLOC: zero to the last byte, then dirtied and freed. */
static void alloc_once(struct loop *l, const char *part)
{
	struct npu_mem_alloc a = { .size = BUF_SIZE, .policy = NPU_MEM_POLICY_HUGE_FIRST };
	const uint64_t *p;
	size_t i;

	if (ioctl(ctl_fd, NPU_MEM_IOCTL_ALLOC, &a)) {
		if (errno == ENOMEM) {
			l->enomem++;
			return;
		}
		violation("%s: ALLOC: %s, not ENOMEM", part, strerror(errno));
		return;
	}
	l->ok++;
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, ctl_fd,
		 (off_t)a.buf.mmap_offset);
	if (p == MAP_FAILED) {
		if (errno != ENOMEM)
			violation("%s: mmap: %s", part, strerror(errno));
	} else {
		for (i = 0; i < a.buf.size / sizeof(*p); i++)
			if (p[i]) {
				violation("%s: ALLOC's buffer (%u huge pages) has %#llx at offset %zu",
					  part, a.buf.huge_pages,
					  (unsigned long long)p[i], i * sizeof(*p));
				break;
			}
		memset((void *)p, 0xa5, a.buf.size);
		munmap((void *)p, a.buf.size);
	}
	if (ioctl(ctl_fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ .handle = a.handle }))
		violation("%s: FREE: %s", part, strerror(errno));
}

static void pressure(uint64_t want_mb)
{
	struct loop l = { 0 };
	uint64_t avail_kb = 0, hog, h;
	int st;
	pid_t pid;

	set_reserve(want_mb, want_mb);
	if (!await_held(want_mb * NM_MiB, true, 60))
		printf("pressure: the reserve holds %llu MiB, not %llu, after 60 s (going on)\n",
		       (unsigned long long)(held() / NM_MiB), (unsigned long long)want_mb);
	h = held();
	nm_meminfo_kb("MemAvailable", &avail_kb);
	hog = avail_kb * 1024 + h / 2;
	printf("pressure: MemAvailable %llu MiB, reserve %llu MiB: hog of %llu MiB\n",
	       (unsigned long long)(avail_kb >> 10), (unsigned long long)(h / NM_MiB),
	       (unsigned long long)(hog / NM_MiB));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("fork: %s\n", strerror(errno));
		exit(1);
	}
	if (!pid) {
		char *m = malloc(hog);

		if (!m)
			_exit(2);
		for (uint64_t off = 0; off < hog; off += 4096)
			m[off] = 1;
		_exit(0);
	}
	while (waitpid(pid, &st, WNOHANG) == 0)
		alloc_once(&l, "pressure");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		violation("pressure: the hog did not run to its end: status %#x", st);
	printf("pressure: %lu ALLOCs, %lu ENOMEM; reserve %llu MiB after the hog\n",
	       l.ok, l.enomem, (unsigned long long)(held() / NM_MiB));
	drained("pressure");
}

/* debugfs's count of chunks the thread made; false without debugfs */
static bool refilled(uint64_t *n)
{
	return nm_kv_file("/sys/kernel/debug/npu_mem/usage", "zero_reserve_refilled", n) == 0;
}

/*
 * A refill starved on every kernel: while MemAvailable is under the
 * module's reserve_bytes the thread makes no chunk (the same way out as a
 * failed allocation: it retries each second), and ALLOC refuses.  Then
 * the reserve must fill once reserve_bytes is back.
 */
static void refill_starved(uint64_t want_mb, uint64_t total_ram)
{
	struct loop l = { 0 };
	uint64_t old, made0, made = 0;
	double end;

	if (nm_param_get("reserve_bytes", &old)) {
		printf("refill starved: no reserve_bytes parameter\n");
		return;
	}
	drained("refill starved (before)");
	/* Not held(): it counts a chunk while the thread tries to make it. */
	if (!refilled(&made0)) {
		printf("refill starved: not run, no debugfs npu_mem/usage\n");
		return;
	}
	made = made0;
	if (nm_param_set("reserve_bytes", total_ram)) {
		printf("cannot set reserve_bytes\n");
		exit(1);
	}
	set_reserve(want_mb, want_mb);
	/* Two of the thread's retries at least, ALLOCs alongside. */
	end = nm_now() + 2.5;
	while (nm_now() < end && made == made0) {
		alloc_once(&l, "refill starved");
		refilled(&made);
	}
	nm_param_set("reserve_bytes", old);
	if (made != made0)
		violation("refill starved: the reserve made %llu chunks while MemAvailable was under reserve_bytes",
			  (unsigned long long)(made - made0));
	printf("refill starved: %lu ALLOCs, %lu ENOMEM while starved\n", l.ok, l.enomem);
	if (!await_held(want_mb * NM_MiB, true, 60))
		violation("refill starved: the reserve holds %llu MiB, not %llu, 60 s after reserve_bytes went back",
			  (unsigned long long)(held() / NM_MiB), (unsigned long long)want_mb);
	alloc_once(&l, "refill starved");
	drained("refill starved");
}

static void fpa(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FPA "%s", file);
	if (nm_write_file(path, val)) {
		printf("cannot set %s to %s\n", path, val);
		exit(1);
	}
}

static void refill_failure(uint64_t want_mb)
{
	struct loop l = { 0 };
	long left = -1;
	double end;

	drained("refill failure (before)");
	fpa("probability", "0");
	fpa("task-filter", "N");
	fpa("min-order", "9");
	fpa("ignore-gfp-wait", "N");
	fpa("ignore-gfp-highmem", "N");
	fpa("interval", "1");
	fpa("space", "0");
	fpa("verbose", "0");
	fpa("times", FAILS);
	fpa("probability", "100");
	set_reserve(want_mb, want_mb);
	/* The window: until every failure was injected, ALLOCs alongside. */
	end = nm_now() + 60;
	while (nm_read_long(FPA "times", &left) == 0 && left > 0 && nm_now() < end)
		alloc_once(&l, "refill failure");
	fpa("probability", "0");
	fpa("task-filter", "Y");
	fpa("min-order", "0");
	printf("refill failure: %ld of " FAILS " failures left unused; %lu ALLOCs, %lu ENOMEM; reserve %llu MiB at the window's end\n",
	       left, l.ok, l.enomem, (unsigned long long)(held() / NM_MiB));
	if (!await_held(want_mb * NM_MiB, true, 60))
		violation("refill failure: the reserve holds %llu MiB, not %llu, 60 s after the failures",
			  (unsigned long long)(held() / NM_MiB), (unsigned long long)want_mb);
	alloc_once(&l, "refill failure");
	drained("refill failure");
}

int main(void)
{
	uint64_t low, high, want_mb;
	struct npu_mem_info i0, i1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (nm_param_get("zero_reserve_low_mb", &low) ||
	    nm_param_get("zero_reserve_high_mb", &high)) {
		printf("npu_mem has no zero reserve (or it is not loaded)\n");
		return 77;
	}
	ctl_fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0) {
		printf("%s: %s\n", DEV_PATH, strerror(errno));
		return 1;
	}
	info(&i0);
	/* An eighth of RAM, at most 64 MiB per node: the guest keeps its memory. */
	want_mb = i0.total_ram / 8 / NM_MiB / 2 * 2;
	if (want_mb > 64)
		want_mb = 64;
	if (want_mb < 8)
		want_mb = 8;

	pressure(want_mb);
	refill_starved(want_mb, i0.total_ram);
	if (access(FPA "probability", W_OK) == 0)
		refill_failure(want_mb);
	else
		printf("refill failure: not run, no fail_page_alloc (scripts/debug-kernel.sh builds a kernel with it)\n");

	info(&i1);
	if (i1.allocated_bytes != i0.allocated_bytes || i1.buffers != i0.buffers)
		violation("%llu bytes in %llu buffers allocated at the end, %llu in %llu at the start",
			  (unsigned long long)i1.allocated_bytes, (unsigned long long)i1.buffers,
			  (unsigned long long)i0.allocated_bytes, (unsigned long long)i0.buffers);
	set_reserve(low, high);
	nm_print_reserve_counters(stdout, "zero reserve since load, chunks:");
	printf("reserve_fault: %s: %d violations\n", violations ? "FAIL" : "PASS", violations);
	return violations ? 1 : 0;
}
