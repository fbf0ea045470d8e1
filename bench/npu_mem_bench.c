// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu_mem_bench: npu-mem against every other way a user has to get pinned,
 * DMA-able memory, measured in one run on one kernel.
 *
 *   npu_mem_bench [-o DIR] [-m MAXSIZE] [-b BUDGET_MS] [-n REPEATS] [-2] [-q]
 *                 [-B BW_BYTES] [-L LAT_BYTES] [-N MAX_LIVE] [-s SECTIONS]
 *                 [-M METHODS] [-f]
 *
 *   -o DIR      write alloc.csv, bandwidth.csv, latency.csv, live.csv,
 *               targets.csv, meta.txt and summary.txt there
 *   -m SIZE     largest allocation (default 1G, capped at MemAvailable/4)
 *   -b MS       time budget per (method, size) cell, which sets the repeat
 *               count (default 200): small sizes get many repeats (up to
 *               1000), large ones at least 5 (3 with -q)
 *   -n N        a fixed repeat count instead
 *   -2          sizes in powers of 2 (default: powers of 4, 4 KiB upwards)
 *   -q          quick: -m 64M -b 40 -B 32M -L 32M -N 10000
 *   -B SIZE     bandwidth buffer (default 256M)
 *   -L SIZE     pointer-chase buffer (default 256M)
 *   -N COUNT    most live buffers for the "flat in live buffers" test
 *               (default 100064)
 *   -P LIST     the live-buffer counts measured, ascending (default
 *               10,1000,10000,100000,100001,100064), each against an fd
 *               with 10 live
 *   -s LIST     sections to run, comma separated: alloc,bw,lat,live
 *   -M LIST     only these allocation methods (keys as in alloc.csv)
 *   -f          turn system-wide knobs (nr_hugepages, drop_caches) outside
 *               a vm-run guest too (default: only where VM_RUN is set)
 *
 * Needs root in a guest with /dev/npu-mem (tests/vm/vm-run; `make bench`).
 * Methods whose kernel interface is missing are reported "n/a".
 *
 * Every allocation row is one cycle, repeated: get memory the CPU can use
 * and a device can DMA from, write one byte per 4 KiB page (first touch),
 * release it.  The median of the repeats is reported, split into "get"
 * (allocation + mapping + touch) and "release".  The floor is memset(0)
 * over memory that is already mapped and touched: clearing pages is the
 * part of handing out fresh memory that nobody can avoid.  A second floor
 * runs the guest kernel's own clear_page() instructions the same way: under
 * emulation the two differ much more than on hardware.
 *
 * Repeats are interleaved: each round runs every method once, in a new
 * random order, so a change of load on the host (other guests, builds)
 * hits all methods alike and the ratios within a run stay meaningful.
 */
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <drm/drm.h>
#include <drm/drm_mode.h>
#include <linux/dma-heap.h>
#include <linux/npu_mem.h>
#include <linux/udmabuf.h>

#include "acl/acl.h"

#ifndef BENCH_ACL_LIB
#define BENCH_ACL_LIB "libaclmem.so.1"
#endif
/* libaclmem's pool switch: a cap in bytes, or "off" (lib/pool.h). */
#define POOL_ENV	"NPU_MEM_POOL_MAX"

#define KiB		(1ULL << 10)
#define MiB		(1ULL << 20)
#define GiB		(1ULL << 30)
#define PAGE		4096UL
#define HUGE		(2 * MiB)
#define MAX_SIZES	32
#define LINE		64

#ifndef MAP_HUGETLB
#define MAP_HUGETLB	0x40000
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE	14
#define MADV_NOHUGEPAGE	15
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS	1033
#define F_SEAL_SHRINK	0x0002
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 2U
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- options and environment ------------------------------------------- */

static struct {
	const char *outdir;
	uint64_t max_size;
	double budget_ns;
	unsigned int fixed_n;
	unsigned int nmin, nmax;
	bool pow2;
	uint64_t bw_bytes;
	uint64_t lat_bytes;
	unsigned long max_live;
	const char *sections;
	const char *methods;
	bool force;
} opt = {
	.max_size = GiB,
	.budget_ns = 200e6,
	.nmin = 5,
	.nmax = 1000,
	.bw_bytes = 256 * MiB,
	.lat_bytes = 256 * MiB,
	.max_live = 100064,
	.sections = "alloc,bw,lat,live",
};

static int npu_fd = -1;
static char thp_mode[32] = "unknown";
static const char *kclear_name = "memset";
static FILE *summary;
static uint64_t sizes[MAX_SIZES];
static unsigned int nsizes;
static uint64_t sink;

/* Print to stdout and to summary.txt. */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (summary) {
		va_start(ap, fmt);
		vfprintf(summary, fmt, ap);
		va_end(ap);
	}
}

/* Progress, to stderr only. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const char *size_str(uint64_t s, char *buf, size_t len)
{
	if (s >= GiB && !(s % GiB))
		snprintf(buf, len, "%lluG", (unsigned long long)(s / GiB));
	else if (s >= MiB && !(s % MiB))
		snprintf(buf, len, "%lluM", (unsigned long long)(s / MiB));
	else if (s >= KiB && !(s % KiB))
		snprintf(buf, len, "%lluK", (unsigned long long)(s / KiB));
	else
		snprintf(buf, len, "%llu", (unsigned long long)s);
	return buf;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K':
		return v << 10;
	case 'm': case 'M':
		return v << 20;
	case 'g': case 'G':
		return v << 30;
	}
	return v;
}

static bool section_on(const char *name)
{
	return strstr(opt.sections, name) != NULL;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

static uint64_t meminfo(const char *key)
{
	char buf[8192], *p;

	if (read_file("/proc/meminfo", buf, sizeof(buf)))
		return 0;
	p = strstr(buf, key);
	if (!p)
		return 0;
	return strtoull(p + strlen(key) + 1, NULL, 10) * KiB;
}

static void read_thp_mode(void)
{
	char buf[128], *a, *b;

	if (read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf,
		      sizeof(buf)))
		return;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b && (size_t)(b - a) < sizeof(thp_mode)) {
		*b = 0;
		strcpy(thp_mode, a + 1);
	}
}

/*
 * System-wide knobs (huge page reservation, dropping caches) are only turned
 * inside a vm-run guest, or with -f: never behind other users' backs.
 */
static bool may_tune(void)
{
	return opt.force || getenv("VM_RUN");
}

static long hugetlb_count(void)
{
	char buf[32];

	if (read_file("/proc/sys/vm/nr_hugepages", buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* Reserve @n 2 MiB hugetlb pages; returns how many the kernel has now. */
static long hugetlb_reserve(long n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", n);
	if (may_tune())
		write_file("/proc/sys/vm/nr_hugepages", buf);
	return hugetlb_count();
}

/* Give the buddy allocator back what the page cache took, and defragment. */
static void drop_caches(void)
{
	if (!may_tune())
		return;
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
	write_file("/proc/sys/vm/compact_memory", "1");
}

/*
 * Kernel tracing around chosen npu-mem cycles (bench/trace.sh sets up the
 * function_graph tracer, NPU_MEM_BENCH_TRACE=1 asks for this): tracing is
 * switched on only for those cycles, each announced in the trace.
 */
static int trace_on_fd = -1, trace_marker_fd = -1;

static void trace_init(void)
{
	if (!getenv("NPU_MEM_BENCH_TRACE"))
		return;
	trace_on_fd = open("/sys/kernel/tracing/tracing_on", O_WRONLY | O_CLOEXEC);
	trace_marker_fd = open("/sys/kernel/tracing/trace_marker",
			       O_WRONLY | O_CLOEXEC);
	if (trace_on_fd < 0 || trace_marker_fd < 0)
		note("tracing requested but /sys/kernel/tracing is not usable");
}

static void trace_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace_begin(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	if (trace_on_fd < 0 || trace_marker_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(trace_on_fd, "1", 1) == 1 && n > 0)
		write(trace_marker_fd, buf, strlen(buf));
}

static void trace_end(void)
{
	if (trace_on_fd >= 0 && write(trace_on_fd, "0", 1) != 1)
		trace_on_fd = -1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void shuffle(unsigned int *v, unsigned int n)
{
	unsigned int i, j, t;

	for (i = n; i > 1; i--) {
		j = (unsigned int)(rng() % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v. */
static double median_u64(uint64_t *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n & 1 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static unsigned int repeats_for(double budget_ns, uint64_t est_ns,
				unsigned int nmin, unsigned int nmax)
{
	double n;

	if (opt.fixed_n)
		return opt.fixed_n;
	n = budget_ns / (est_ns ? (double)est_ns : 1.0);
	if (n < nmin)
		return nmin;
	if (n > nmax)
		return nmax;
	return (unsigned int)n;
}

/* ---- memory primitives --------------------------------------------------- */

/* First touch: one byte written per 4 KiB page. */
static void touch(void *p, uint64_t size)
{
	volatile char *c = p;
	uint64_t off;

	for (off = 0; off < size; off += PAGE)
		c[off] = 1;
}

static uint64_t sum_read(const void *p, uint64_t size)
{
	const uint64_t *w = p;
	uint64_t a = 0, b = 0, c = 0, d = 0, i, n = size / 8;

	for (i = 0; i + 4 <= n; i += 4) {
		a += w[i];
		b += w[i + 1];
		c += w[i + 2];
		d += w[i + 3];
	}
	return a + b + c + d;
}

/*
 * The x86 kernel's clear_page() variants (arch/x86/lib/clear_page_64.S),
 * one 4 KiB page per call as the kernel does; chosen like the kernel's
 * alternatives: ERMS, else REP_GOOD, else the unrolled loop.
 */
#if defined(__x86_64__)
static void kclear_orig(void *page)
{
	__asm__ __volatile__(
		"xorl %%eax, %%eax\n\t"
		"movl $64, %%ecx\n"
		"1:\n\t"
		"decl %%ecx\n\t"
		"movq %%rax, (%0)\n\t"
		"movq %%rax, 8(%0)\n\t"
		"movq %%rax, 16(%0)\n\t"
		"movq %%rax, 24(%0)\n\t"
		"movq %%rax, 32(%0)\n\t"
		"movq %%rax, 40(%0)\n\t"
		"movq %%rax, 48(%0)\n\t"
		"movq %%rax, 56(%0)\n\t"
		"leaq 64(%0), %0\n\t"
		"jnz 1b\n\t"
		: "+r"(page) : : "rax", "rcx", "cc", "memory");
}

static void kclear_rep(void *page)
{
	__asm__ __volatile__(
		"xorl %%eax, %%eax\n\t"
		"movl $512, %%ecx\n\t"
		"rep stosq\n\t"
		: "+D"(page) : : "rax", "rcx", "cc", "memory");
}

static void kclear_erms(void *page)
{
	__asm__ __volatile__(
		"xorl %%eax, %%eax\n\t"
		"movl $4096, %%ecx\n\t"
		"rep stosb\n\t"
		: "+D"(page) : : "rax", "rcx", "cc", "memory");
}
#else
static void kclear_orig(void *page)
{
	memset(page, 0, PAGE);
}
#define kclear_rep kclear_orig
#define kclear_erms kclear_orig
#endif

static void (*kclear_page)(void *page) = kclear_orig;

static void pick_kclear(void)
{
	static char buf[65536];
	char *flags;

#if defined(__x86_64__)
	kclear_name = "clear_page_orig";
	if (read_file("/proc/cpuinfo", buf, sizeof(buf)))
		return;
	flags = strstr(buf, "\nflags");
	if (!flags)
		return;
	flags[strcspn(flags + 1, "\n") + 1] = 0;
	strcat(flags, " ");
	if (strstr(flags, " erms ")) {
		kclear_page = kclear_erms;
		kclear_name = "clear_page_erms";
	} else if (strstr(flags, " rep_good ")) {
		kclear_page = kclear_rep;
		kclear_name = "clear_page_rep";
	}
#else
	(void)buf;
	(void)flags;
#endif
}

static void *map_anon(uint64_t size, int extra_flags)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* An anonymous mapping aligned to 2 MiB, so THP can back all of it. */
static void *map_anon_aligned(uint64_t size)
{
	uint64_t len = size + HUGE;
	char *p = map_anon(len, 0), *a;

	if (!p)
		return NULL;
	a = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (a > p)
		munmap(p, a - p);
	if (a + size < p + len)
		munmap(a + size, p + len - (a + size));
	return a;
}

static int npu_alloc(int fd, uint64_t size, uint32_t policy,
		     struct npu_mem_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
	a->policy = policy;
	return ioctl(fd, NPU_MEM_IOCTL_ALLOC, a) ? -errno : 0;
}

static int npu_free(int fd, uint32_t handle)
{
	struct npu_mem_free f = { .handle = handle };

	return ioctl(fd, NPU_MEM_IOCTL_FREE, &f) ? -errno : 0;
}

/* A mapped npu-mem buffer; the handle goes at once (the VMA keeps it). */
static void *npu_map_buffer(uint64_t size, uint32_t policy, uint64_t *maplen,
			    struct npu_mem_buffer *kb)
{
	struct npu_mem_alloc a;
	void *p;

	if (npu_fd < 0 || npu_alloc(npu_fd, size, policy, &a))
		return NULL;
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, npu_fd,
		 a.buf.mmap_offset);
	npu_free(npu_fd, a.handle);
	if (p == MAP_FAILED)
		return NULL;
	*maplen = a.buf.size;
	if (kb)
		*kb = a.buf;
	return p;
}

/* ---- allocation methods --------------------------------------------------- */

/* npu-mem cycles also time each step. */
enum { PH_ALLOC, PH_MMAP, PH_TOUCH, PH_MUNMAP, PH_FREE, NPHASES };
static const char *const phase_names[NPHASES] = {
	"ALLOC ioctl", "mmap", "touch", "munmap", "FREE ioctl",
};

struct sample {
	uint64_t get;		/* ns: allocate + map + first touch */
	uint64_t rel;		/* ns: unmap + free */
	uint64_t phase[NPHASES];
};

struct method;
typedef int (*once_fn)(struct method *m, uint64_t size, struct sample *s);

struct method {
	const char *key;	/* CSV and plot name */
	const char *label;	/* table name */
	int (*setup)(struct method *m);			/* per run: 0 or n/a */
	int (*prepare)(struct method *m, uint64_t size);	/* per size, untimed */
	once_fn once;
	void (*finish)(struct method *m);		/* per size */
	void (*teardown)(struct method *m);		/* per run */
	bool alternative;	/* counts in "faster than every alternative" */
	uint32_t policy;	/* npu-mem policy */
	int map_flags;		/* npu-mem: mmap flags besides MAP_SHARED */
	const char *pool;	/* libaclmem: NPU_MEM_POOL_MAX, NULL = default */
	int fd;
	int req, resp;		/* libaclmem child: request/response pipes */
	pid_t child;
	long hugetlb_saved;
	uint32_t huge, normal;	/* npu-mem: page mix of the last buffer */
	bool active;
	bool warm;		/* untimed cycle before each timed one */
	bool trace;		/* trace the next cycle (npu-mem rows) */
	bool warms_itself;	/* once() does the warm cycle (child) */
	char na[96];		/* why the method is n/a */
};

struct cell {
	int status;		/* 0 ok, else -errno of the first failure */
	unsigned int n;
	double med, min, max, get, rel;
	double phase[NPHASES];		/* npu-mem rows: median per step */
	uint32_t huge_min, normal_max;	/* npu-mem rows: worst page mix seen */
	char note[160];
};

/* Memory the floors write over: mapped and touched before each size. */
static void *floor_buf;
static uint64_t floor_len;

static int npu_setup(struct method *m)
{
	if (npu_fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/npu-mem");
		return -ENODEV;
	}
	return 0;
}

static int npu_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t[NPHASES + 1];
	struct npu_mem_alloc a;
	unsigned int i;
	void *p;
	int ret;

	if (m->trace)
		trace_begin("bench: %s cycle of %llu bytes", m->key,
			    (unsigned long long)size);
	t[0] = now_ns();
	ret = npu_alloc(npu_fd, size, m->policy, &a);
	if (ret) {
		trace_end();
		return ret;
	}
	t[1] = now_ns();
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | m->map_flags, npu_fd, a.buf.mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		npu_free(npu_fd, a.handle);
		return ret;
	}
	t[2] = now_ns();
	touch(p, size);
	t[3] = now_ns();
	munmap(p, a.buf.size);
	t[4] = now_ns();
	npu_free(npu_fd, a.handle);
	t[5] = now_ns();
	if (m->trace)
		trace_end();
	s->get = t[3] - t[0];
	s->rel = t[5] - t[3];
	for (i = 0; i < NPHASES; i++)
		s->phase[i] = t[i + 1] - t[i];
	m->huge = a.buf.huge_pages;
	m->normal = a.buf.normal_pages;
	return 0;
}

/*
 * libaclmem, loaded at run time so a half-built library only costs its
 * rows.  It reads its pool switch once per process, so each setting runs
 * in a child of its own that serves "one cycle of this size" requests over
 * a pipe: the parent interleaves them with the other methods.
 */
static struct {
	void *dl;
	__typeof__(aclInit) *init;
	__typeof__(aclFinalize) *finalize;
	__typeof__(aclrtSetDevice) *set_device;
	__typeof__(aclrtResetDevice) *reset_device;
	__typeof__(aclrtMallocCached) *malloc_cached;
	__typeof__(aclrtFree) *free;
} acl;

struct acl_req {
	uint64_t size;		/* 0: exit */
	uint64_t warm;		/* run an untimed cycle first */
};

struct acl_resp {
	int ret;
	uint64_t get, rel;
	char why[96];
};

static int acl_load(char *why, size_t len)
{
	const char *path = getenv("NPU_MEM_BENCH_ACL_LIB");

	acl.dl = dlopen(path ? path : BENCH_ACL_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!acl.dl)
		acl.dl = dlopen("libaclmem.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!acl.dl) {
		snprintf(why, len, "libaclmem not loadable");
		return -ENOENT;
	}
	acl.init = dlsym(acl.dl, "aclInit");
	acl.finalize = dlsym(acl.dl, "aclFinalize");
	acl.set_device = dlsym(acl.dl, "aclrtSetDevice");
	acl.reset_device = dlsym(acl.dl, "aclrtResetDevice");
	acl.malloc_cached = dlsym(acl.dl, "aclrtMallocCached");
	acl.free = dlsym(acl.dl, "aclrtFree");
	if (!acl.init || !acl.set_device || !acl.malloc_cached || !acl.free) {
		snprintf(why, len, "libaclmem lacks the ACL calls");
		return -EOPNOTSUPP;
	}
	if (acl.init(NULL) != ACL_SUCCESS || acl.set_device(0) != ACL_SUCCESS) {
		snprintf(why, len, "aclInit/aclrtSetDevice failed");
		return -EIO;
	}
	return 0;
}

static int acl_cycle(uint64_t size, struct sample *s)
{
	uint64_t t0, t1, t2;
	void *p = NULL;
	aclError e;

	t0 = now_ns();
	e = acl.malloc_cached(&p, size, ACL_MEM_MALLOC_HUGE_FIRST);
	if (e != ACL_SUCCESS)
		return -ENOMEM;
	touch(p, size);
	t1 = now_ns();
	e = acl.free(p);
	t2 = now_ns();
	if (e != ACL_SUCCESS)
		return -EIO;
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

static void __attribute__((noreturn)) acl_child(struct method *m, int req,
						int resp)
{
	struct acl_resp r = { 0 };
	struct acl_req q;

	if (m->pool)
		setenv(POOL_ENV, m->pool, 1);
	r.ret = acl_load(r.why, sizeof(r.why));
	if (write_full(resp, &r, sizeof(r)) || r.ret)
		_exit(0);
	while (!read_full(req, &q, sizeof(q)) && q.size) {
		struct sample s = { 0 };

		memset(&r, 0, sizeof(r));
		if (q.warm)
			r.ret = acl_cycle(q.size, &s);
		if (!r.ret)
			r.ret = acl_cycle(q.size, &s);
		r.get = s.get;
		r.rel = s.rel;
		if (write_full(resp, &r, sizeof(r)))
			break;
	}
	if (acl.reset_device)
		acl.reset_device(0);
	if (acl.finalize)
		acl.finalize();
	_exit(0);
}

static int acl_setup(struct method *m)
{
	struct acl_resp r;
	int req[2], resp[2];

	if (pipe2(req, O_CLOEXEC) || pipe2(resp, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	m->child = fork();
	if (m->child < 0)
		return -errno;
	if (!m->child) {
		close(req[1]);
		close(resp[0]);
		acl_child(m, req[0], resp[1]);
	}
	close(req[0]);
	close(resp[1]);
	m->req = req[1];
	m->resp = resp[0];
	if (read_full(m->resp, &r, sizeof(r))) {
		snprintf(r.why, sizeof(r.why), "libaclmem child died");
		r.ret = -ECHILD;
	}
	if (r.ret) {
		snprintf(m->na, sizeof(m->na), "%s", r.why);
		close(m->req);
		close(m->resp);
		waitpid(m->child, NULL, 0);
		m->child = 0;
	}
	return r.ret;
}

static int acl_once(struct method *m, uint64_t size, struct sample *s)
{
	struct acl_req q = { .size = size, .warm = m->warm };
	struct acl_resp r;

	if (write_full(m->req, &q, sizeof(q)) ||
	    read_full(m->resp, &r, sizeof(r)))
		return -ECHILD;
	s->get = r.get;
	s->rel = r.rel;
	return r.ret;
}

static void acl_teardown(struct method *m)
{
	struct acl_req q = { 0 };

	if (!m->child)
		return;
	write_full(m->req, &q, sizeof(q));
	close(m->req);
	close(m->resp);
	waitpid(m->child, NULL, 0);
	m->child = 0;
}

/* mmap(MAP_ANONYMOUS | MAP_POPULATE) + mlock: the usual pinned host memory. */
static int anon_cycle(uint64_t size, struct sample *s)
{
	uint64_t t0, t1, t2;
	void *p;

	t0 = now_ns();
	p = map_anon(size, MAP_POPULATE);
	if (!p)
		return -errno;
	if (mlock(p, size)) {
		int ret = -errno;

		munmap(p, size);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

static int anon_once(struct method *m, uint64_t size, struct sample *s)
{
	(void)m;
	return anon_cycle(size, s);
}

/* The same with THP off for this process, whatever the system setting. */
static int anon4k_once(struct method *m, uint64_t size, struct sample *s)
{
	int ret;

	(void)m;
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		return -errno;
	ret = anon_cycle(size, s);
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	return ret;
}

static int hugetlb_setup(struct method *m)
{
	m->hugetlb_saved = hugetlb_count();
	if (m->hugetlb_saved < 0) {
		snprintf(m->na, sizeof(m->na), "no hugetlb");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Reserve the huge pages for this size (untimed), as a user would. */
static int hugetlb_prepare(struct method *m, uint64_t size)
{
	long want = m->hugetlb_saved + (long)((size + HUGE - 1) / HUGE);

	if (hugetlb_reserve(want) < want) {
		snprintf(m->na, sizeof(m->na), "cannot reserve %ld huge pages",
			 want);
		return -ENOMEM;
	}
	return 0;
}

static void hugetlb_finish(struct method *m)
{
	hugetlb_reserve(m->hugetlb_saved);
}

static int hugetlb_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t len = (size + HUGE - 1) & ~(HUGE - 1), t0, t1, t2;
	void *p;

	(void)m;
	t0 = now_ns();
	p = map_anon(len, MAP_HUGETLB | MAP_POPULATE);
	if (!p)
		return -errno;
	if (mlock(p, len)) {
		int ret = -errno;

		munmap(p, len);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, len);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

static int thp_setup(struct method *m)
{
	if (!strcmp(thp_mode, "never") || !strcmp(thp_mode, "unknown")) {
		snprintf(m->na, sizeof(m->na), "THP %s", thp_mode);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* THP on request: madvise(MADV_HUGEPAGE), fault in by touching, mlock. */
static int thp_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t0, t1, t2;
	void *p;
	int ret;

	(void)m;
	t0 = now_ns();
	p = map_anon_aligned(size);
	if (!p)
		return -errno;
	if (madvise(p, size, MADV_HUGEPAGE))
		goto fail;
	touch(p, size);
	if (mlock(p, size))
		goto fail;
	t1 = now_ns();
	munmap(p, size);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
fail:
	ret = -errno;
	munmap(p, size);
	return ret;
}

/* vgem: a dumb buffer, exported as a dma-buf, mapped through the dma-buf. */
static int vgem_setup(struct method *m)
{
	char path[32], name[32];
	int i;

	for (i = 0; i < 64; i++) {
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem")) {
			m->fd = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(m->na, sizeof(m->na), "no vgem device (modprobe vgem)");
	return -ENODEV;
}

static void fd_teardown(struct method *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

static int vgem_once(struct method *m, uint64_t size, struct sample *s)
{
	struct drm_mode_create_dumb c = {
		.width = 1024, .bpp = 32, .height = (uint32_t)(size / PAGE),
	};
	struct drm_prime_handle ph = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_gem_close gc = { 0 };
	uint64_t t0, t1, t2;
	void *p;
	int ret;

	t0 = now_ns();
	if (ioctl(m->fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	ph.handle = gc.handle = c.handle;
	if (ioctl(m->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph)) {
		ret = -errno;
		goto close_gem;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ph.fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(ph.fd);
		goto close_gem;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	close(ph.fd);
	ioctl(m->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
close_gem:
	ioctl(m->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	return ret;
}

/* The upstream system dma-buf heap. */
static int heap_setup(struct method *m)
{
	m->fd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/dma_heap/system");
		return -errno;
	}
	return 0;
}

static int heap_once(struct method *m, uint64_t size, struct sample *s)
{
	struct dma_heap_allocation_data d = {
		.len = size, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	uint64_t t0, t1, t2;
	void *p;
	int ret;

	t0 = now_ns();
	if (ioctl(m->fd, DMA_HEAP_IOCTL_ALLOC, &d))
		return -errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, d.fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(d.fd);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	close(d.fd);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

/* udmabuf: a sealed memfd turned into a dma-buf, mapped through it. */
static int udmabuf_setup(struct method *m)
{
	m->fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (m->fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/udmabuf");
		return -errno;
	}
	return 0;
}

static int udmabuf_once(struct method *m, uint64_t size, struct sample *s)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	uint64_t t0, t1, t2;
	int mfd, dfd, ret;
	void *p;

	t0 = now_ns();
	mfd = memfd_create("bench", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0)
		return -errno;
	if (ftruncate(mfd, size) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK))
		goto fail_memfd;
	c.memfd = mfd;
	dfd = ioctl(m->fd, UDMABUF_CREATE, &c);
	if (dfd < 0)
		goto fail_memfd;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(dfd);
		close(mfd);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	close(dfd);
	close(mfd);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
fail_memfd:
	ret = -errno;
	close(mfd);
	return ret;
}

/* The floor: memset(0) over memory already mapped and touched. */
static int floor_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t0 = now_ns();

	(void)m;
	memset(floor_buf, 0, size);
	__asm__ __volatile__("" : : "r"(floor_buf) : "memory");
	s->get = now_ns() - t0;
	s->rel = 0;
	return 0;
}

/* The same bytes cleared with the guest kernel's clear_page(), page by page. */
static int kclear_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t0 = now_ns(), off;

	(void)m;
	for (off = 0; off < size; off += PAGE)
		kclear_page((char *)floor_buf + off);
	s->get = now_ns() - t0;
	s->rel = 0;
	return 0;
}

enum {
	M_FLOOR, M_KCLEAR, M_NPU_HF, M_NPU_HF_POP, M_NPU_HO, M_NPU_NO, M_ACL_OFF,
	M_ACL_ON,
	M_ANON, M_ANON4K, M_HUGETLB, M_THP, M_VGEM, M_HEAP, M_UDMABUF,
	NMETHODS
};

static char anon_label[64], kclear_label[64];

static struct method methods[NMETHODS] = {
	[M_FLOOR] = { "floor", "floor: memset(0), mapped mem",
		.once = floor_once },
	[M_KCLEAR] = { "floor_kclear", kclear_label, .once = kclear_once },
	[M_NPU_HF] = { "npu_huge_first", "npu-mem ioctl HUGE_FIRST",
		npu_setup, NULL, npu_once, .policy = NPU_MEM_POLICY_HUGE_FIRST },
	/* The same with the mapping made at mmap rather than at first touch. */
	[M_NPU_HF_POP] = { "npu_huge_first_populate",
		"npu-mem HUGE_FIRST, populate", npu_setup, NULL, npu_once,
		.policy = NPU_MEM_POLICY_HUGE_FIRST, .map_flags = MAP_POPULATE },
	[M_NPU_HO] = { "npu_huge_only", "npu-mem ioctl HUGE_ONLY",
		npu_setup, NULL, npu_once, .policy = NPU_MEM_POLICY_HUGE_ONLY },
	[M_NPU_NO] = { "npu_normal_only", "npu-mem ioctl NORMAL_ONLY",
		npu_setup, NULL, npu_once, .policy = NPU_MEM_POLICY_NORMAL_ONLY },
	[M_ACL_OFF] = { "acl_pool_off", "aclrtMallocCached, pool off",
		acl_setup, NULL, acl_once, NULL, acl_teardown, .pool = "off",
		.warms_itself = true },
	[M_ACL_ON] = { "acl_pool_on", "aclrtMallocCached, pool on",
		acl_setup, NULL, acl_once, NULL, acl_teardown,
		.warms_itself = true },
	[M_ANON] = { "anon_populate_mlock", anon_label,
		.once = anon_once, .alternative = true },
	[M_ANON4K] = { "anon_populate_mlock_4k", "mmap POPULATE+mlock, THP off",
		.once = anon4k_once, .alternative = true },
	[M_HUGETLB] = { "hugetlb", "mmap HUGETLB POPULATE+mlock",
		hugetlb_setup, hugetlb_prepare, hugetlb_once, hugetlb_finish,
		.alternative = true },
	[M_THP] = { "thp_madvise", "THP madvise+touch+mlock",
		thp_setup, NULL, thp_once, .alternative = true },
	[M_VGEM] = { "vgem", "vgem dumb+PRIME export+mmap",
		vgem_setup, NULL, vgem_once, NULL, fd_teardown,
		.alternative = true, .fd = -1 },
	[M_HEAP] = { "dma_heap_system", "dma-heap system+mmap",
		heap_setup, NULL, heap_once, NULL, fd_teardown,
		.alternative = true, .fd = -1 },
	[M_UDMABUF] = { "udmabuf", "udmabuf(memfd)+mmap",
		udmabuf_setup, NULL, udmabuf_once, NULL, fd_teardown,
		.alternative = true, .fd = -1 },
};

static struct cell cells[NMETHODS][MAX_SIZES];

static bool method_on(const struct method *m)
{
	return !opt.methods || strstr(opt.methods, m->key);
}

static bool is_npu(unsigned int i)
{
	return i == M_NPU_HF || i == M_NPU_HF_POP || i == M_NPU_HO ||
	       i == M_NPU_NO;
}

static void cell_fail(struct cell *c, int ret, const char *why)
{
	c->status = ret;
	snprintf(c->note, sizeof(c->note), "%s", why);
}

/* Per-size state, so only what one size needs is held at a time. */
static int prepare_size(uint64_t size)
{
	drop_caches();
	floor_len = size;
	floor_buf = map_anon_aligned(size);
	if (!floor_buf)
		return -ENOMEM;
	madvise(floor_buf, size, MADV_HUGEPAGE);
	memset(floor_buf, 1, size);
	return 0;
}

static void finish_size(void)
{
	if (floor_buf)
		munmap(floor_buf, floor_len);
	floor_buf = NULL;
}

/*
 * Verdicts use medians; the best-of (minimum) ratios next to them
 * are a cross-check: preemption of the emulator by other load on the host
 * only ever adds time, so minima are the least disturbed samples.
 */

/*
 * One size: prepare every method, one warm-up cycle each (it also tells
 * the cost), then N rounds, each running every method once in a random
 * order.  N comes from the time budget: many for small sizes, few for large.
 *
 * A method whose cycle is short runs an untimed cycle right before each
 * timed one.  Under TCG the switch to and from the libaclmem children
 * flushes the emulated TLB, and the first cycle after it costs up to 2x
 * more at small sizes; an application allocating in a loop does not pay
 * that.  Long cycles (large sizes) do not notice, and skip it.
 */
#define WARM_BELOW_NS	20000000ULL

static void run_size(unsigned int j)
{
	uint64_t size = sizes[j], est = 0, t_start = now_ns();
	uint64_t *tot[NMETHODS] = { 0 }, *get[NMETHODS] = { 0 }, *rel[NMETHODS] = { 0 };
	uint64_t *ph[NPHASES] = { 0 }, *ph_all;
	unsigned int order[NMETHODS], live = 0, i, k, q, r, n;
	bool on[NMETHODS] = { 0 }, prepared[NMETHODS] = { 0 };
	char sz[24], why[160];
	struct sample s;
	int ret;

	size_str(size, sz, sizeof(sz));
	if (prepare_size(size)) {
		for (i = 0; i < NMETHODS; i++)
			cell_fail(&cells[i][j], -ENOMEM, "n/a: no memory for the floor");
		return;
	}
	for (i = 0; i < NMETHODS; i++) {
		struct method *m = &methods[i];
		struct cell *c = &cells[i][j];

		c->huge_min = UINT32_MAX;
		if (!m->active)
			continue;
		m->na[0] = 0;
		ret = m->prepare ? m->prepare(m, size) : 0;
		prepared[i] = !ret;
		/* Warm-up; a second one if short, the first pays one-time costs. */
		if (!ret)
			ret = m->once(m, size, &s);
		if (!ret && s.get + s.rel < 100000000ULL)
			ret = m->once(m, size, &s);
		if (ret) {
			snprintf(why, sizeof(why), "n/a: %s",
				 !prepared[i] && m->na[0] ? m->na : strerror(-ret));
			cell_fail(c, ret, why);
			note("%6s %-30s %s", sz, m->label, why);
			continue;
		}
		on[i] = true;
		order[live++] = i;
		est += s.get + s.rel;
		m->warm = s.get + s.rel < WARM_BELOW_NS;
		if (m->warm)
			est += s.get + s.rel;
	}
	n = repeats_for(opt.budget_ns * live, est, opt.nmin, opt.nmax);
	ph_all = calloc((size_t)n * NPHASES * NMETHODS, sizeof(uint64_t));
	for (i = 0; i < NMETHODS; i++) {
		if (!on[i])
			continue;
		if (!ph_all) {
			cell_fail(&cells[i][j], -ENOMEM, "n/a: out of memory");
			on[i] = false;
			continue;
		}
		tot[i] = calloc(n, sizeof(uint64_t));
		get[i] = calloc(n, sizeof(uint64_t));
		rel[i] = calloc(n, sizeof(uint64_t));
		if (!tot[i] || !get[i] || !rel[i]) {
			cell_fail(&cells[i][j], -ENOMEM, "n/a: out of memory");
			on[i] = false;
		}
	}
	for (r = 0; r < n; r++) {
		shuffle(order, live);
		for (k = 0; k < live; k++) {
			struct method *m = &methods[order[k]];
			struct cell *c = &cells[order[k]][j];

			if (!on[order[k]])
				continue;
			ret = 0;
			if (m->warm && !m->warms_itself)
				ret = m->once(m, size, &s);
			m->trace = !r && is_npu(order[k]);
			if (!ret)
				ret = m->once(m, size, &s);
			m->trace = false;
			if (ret) {
				snprintf(why, sizeof(why), "n/a: %s in round %u",
					 strerror(-ret), r);
				cell_fail(c, ret, why);
				on[order[k]] = false;
				continue;
			}
			tot[order[k]][r] = s.get + s.rel;
			get[order[k]][r] = s.get;
			rel[order[k]][r] = s.rel;
			if (is_npu(order[k])) {
				for (q = 0; q < NPHASES; q++)
					ph_all[((size_t)order[k] * NPHASES + q) * n + r] =
						s.phase[q];
				if (m->huge < c->huge_min)
					c->huge_min = m->huge;
				if (m->normal > c->normal_max)
					c->normal_max = m->normal;
			}
		}
	}
	for (i = 0; i < NMETHODS; i++) {
		struct cell *c = &cells[i][j];

		if (on[i]) {
			c->status = 0;
			c->n = n;
			c->med = median_u64(tot[i], n);
			c->min = (double)tot[i][0];
			c->max = (double)tot[i][n - 1];
			c->get = median_u64(get[i], n);
			c->rel = median_u64(rel[i], n);
			c->note[0] = 0;
			for (k = 0; is_npu(i) && k < NPHASES; k++) {
				ph[k] = ph_all + ((size_t)i * NPHASES + k) * n;
				c->phase[k] = median_u64(ph[k], n);
			}
		}
		if (prepared[i] && methods[i].finish)
			methods[i].finish(&methods[i]);
		free(tot[i]);
		free(get[i]);
		free(rel[i]);
	}
	free(ph_all);
	finish_size();
	note("%6s: %u methods x %u rounds in %.1f s", sz, live, n,
	     (now_ns() - t_start) / 1e9);
}

static void run_alloc(void)
{
	unsigned int i, j;
	int ret;

	snprintf(kclear_label, sizeof(kclear_label), "floor: %s", kclear_name);
	for (i = 0; i < NMETHODS; i++) {
		struct method *m = &methods[i];

		if (!method_on(m)) {
			for (j = 0; j < nsizes; j++)
				cell_fail(&cells[i][j], -ENODATA, "not selected");
			continue;
		}
		ret = m->setup ? m->setup(m) : 0;
		if (ret) {
			char why[160];

			snprintf(why, sizeof(why), "n/a: %s",
				 m->na[0] ? m->na : strerror(-ret));
			for (j = 0; j < nsizes; j++)
				cell_fail(&cells[i][j], ret, why);
			note("%-30s %s", m->label, why);
			continue;
		}
		m->active = true;
	}
	for (j = 0; j < nsizes; j++)
		run_size(j);
	for (i = 0; i < NMETHODS; i++)
		if (methods[i].active && methods[i].teardown)
			methods[i].teardown(&methods[i]);
}

/* ---- bandwidth ------------------------------------------------------------ */

static const char *const bw_ops[] = { "write_memset", "read_sum", "copy_memcpy" };

struct bw_buf {
	const char *name;
	void *p;
	uint64_t len;		/* mapping length */
	bool npu, munmap;
	char why[96];
	char pages[48];
	double med_ns[ARRAY_SIZE(bw_ops)];
	double best_ns[ARRAY_SIZE(bw_ops)];
	unsigned int n;
};

static struct bw_buf bw[4];
static unsigned int nbw;

static uint64_t bw_pass(void *p, uint64_t size, unsigned int op, unsigned int r)
{
	uint64_t t0 = now_ns();

	switch (op) {
	case 0:
		memset(p, (int)(r & 0x7f), size);
		break;
	case 1:
		sink += sum_read(p, size);
		break;
	default:
		memcpy((char *)p + size / 2, p, size / 2);
		break;
	}
	__asm__ __volatile__("" : : "r"(p) : "memory");
	return now_ns() - t0;
}

static void bw_add_npu(const char *name, uint32_t policy, uint64_t size)
{
	struct bw_buf *b = &bw[nbw++];
	struct npu_mem_buffer kb;

	b->name = name;
	b->npu = true;
	b->p = npu_map_buffer(size, policy, &b->len, &kb);
	if (!b->p)
		snprintf(b->why, sizeof(b->why), "npu-mem allocation failed");
	else
		snprintf(b->pages, sizeof(b->pages), "2M x%u, 4K x%u",
			 kb.huge_pages, kb.normal_pages);
}

static void run_bandwidth(void)
{
	uint64_t size = opt.bw_bytes, est = 0, *t[ARRAY_SIZE(bw)][ARRAY_SIZE(bw_ops)];
	unsigned int order[ARRAY_SIZE(bw) * ARRAY_SIZE(bw_ops)], nord = 0;
	unsigned int i, o, r, k, n;
	struct bw_buf *b;

	drop_caches();
	bw_add_npu("npu_huge_first", NPU_MEM_POLICY_HUGE_FIRST, size);
	bw_add_npu("npu_normal_only", NPU_MEM_POLICY_NORMAL_ONLY, size);
	/* malloc'd memory as a program gets it: THP as the system says. */
	b = &bw[nbw++];
	b->name = "malloc";
	b->p = malloc(size);
	snprintf(b->pages, sizeof(b->pages), "THP %s", thp_mode);
	/* And with 4 KiB pages, the mapping npu-mem has now. */
	b = &bw[nbw++];
	b->name = "anon_4k";
	b->munmap = true;
	b->len = size;
	b->p = map_anon_aligned(size);
	if (b->p)
		madvise(b->p, size, MADV_NOHUGEPAGE);
	snprintf(b->pages, sizeof(b->pages), "MADV_NOHUGEPAGE");

	for (i = 0; i < nbw; i++) {
		b = &bw[i];
		if (!b->p) {
			if (!b->why[0])
				snprintf(b->why, sizeof(b->why), "no memory");
			continue;
		}
		memset(b->p, 1, size);
		for (o = 0; o < ARRAY_SIZE(bw_ops); o++) {
			est += bw_pass(b->p, size, o, 0);	/* warm-up */
			order[nord++] = i * ARRAY_SIZE(bw_ops) + o;
		}
	}
	n = repeats_for(opt.budget_ns * 2 * nord, est, opt.nmin > 3 ? 11 : 5, 64);
	for (i = 0; i < nbw; i++)
		for (o = 0; o < ARRAY_SIZE(bw_ops); o++)
			t[i][o] = calloc(n, sizeof(uint64_t));
	for (r = 0; r < n; r++) {
		shuffle(order, nord);
		for (k = 0; k < nord; k++) {
			i = order[k] / ARRAY_SIZE(bw_ops);
			o = order[k] % ARRAY_SIZE(bw_ops);
			if (t[i][o])
				t[i][o][r] = bw_pass(bw[i].p, size, o, r + 1);
		}
	}
	for (i = 0; i < nbw; i++) {
		b = &bw[i];
		for (o = 0; o < ARRAY_SIZE(bw_ops); o++) {
			if (b->p && t[i][o]) {
				b->med_ns[o] = median_u64(t[i][o], n);
				b->best_ns[o] = (double)t[i][o][0];
				b->n = n;
			}
			free(t[i][o]);
		}
		if (b->p && (b->npu || b->munmap))
			munmap(b->p, b->len);
		else
			free(b->p);
		b->p = NULL;
		if (b->n)
			note("bandwidth %-16s write %.3f read %.3f copy %.3f GB/s",
			     b->name, size / b->med_ns[0], size / b->med_ns[1],
			     size / 2 / b->med_ns[2]);
	}
}

/* ---- random access latency ------------------------------------------------- */

struct lat_buf {
	const char *name;
	void *p;
	uint64_t len;
	bool hugetlb;
	char why[96];
	char pages[48];
	double ns;
	unsigned int n;
};

static struct lat_buf lat[5];
static unsigned int nlat;

/* A random cycle through every line (Sattolo), written as pointers. */
static void lat_link(char *base, const uint32_t *perm, uint64_t lines)
{
	uint64_t i;

	for (i = 0; i < lines; i++)
		*(void **)(base + (uint64_t)perm[i] * LINE) =
			base + (uint64_t)perm[(i + 1) % lines] * LINE;
}

static uint64_t lat_chase(void *start, uint64_t steps, void **end)
{
	uint64_t i, t0 = now_ns();
	void **q = start;

	for (i = 0; i < steps; i++)
		q = *q;
	*end = q;
	return now_ns() - t0;
}

static void run_latency(void)
{
	uint64_t size = opt.lat_bytes, lines = size / LINE, i, j, est = 0;
	uint64_t steps = lines < (1ULL << 20) ? lines : (1ULL << 20);
	long saved = hugetlb_count(), want = (long)(size / HUGE);
	unsigned int order[ARRAY_SIZE(lat)], nord = 0, k, r, n;
	uint64_t *t[ARRAY_SIZE(lat)] = { 0 };
	struct npu_mem_buffer kb;
	uint32_t *perm, tmp;
	struct lat_buf *b;
	void *end = NULL;

	perm = malloc(lines * sizeof(*perm));
	if (!perm) {
		note("latency: no memory for the permutation");
		return;
	}
	for (i = 0; i < lines; i++)
		perm[i] = (uint32_t)i;
	for (i = lines - 1; i > 0; i--) {
		j = rng() % i;
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	drop_caches();

	b = &lat[nlat++];
	b->name = "npu_huge_first";
	b->p = npu_map_buffer(size, NPU_MEM_POLICY_HUGE_FIRST, &b->len, &kb);
	if (b->p)
		snprintf(b->pages, sizeof(b->pages), "2M x%u, 4K x%u",
			 kb.huge_pages, kb.normal_pages);
	b = &lat[nlat++];
	b->name = "npu_normal_only";
	b->p = npu_map_buffer(size, NPU_MEM_POLICY_NORMAL_ONLY, &b->len, &kb);
	if (b->p)
		snprintf(b->pages, sizeof(b->pages), "4K x%u", kb.normal_pages);
	b = &lat[nlat++];
	b->name = "anon_4k";
	b->len = size;
	b->p = map_anon_aligned(size);
	if (b->p)
		madvise(b->p, size, MADV_NOHUGEPAGE);
	snprintf(b->pages, sizeof(b->pages), "MADV_NOHUGEPAGE");
	b = &lat[nlat++];
	b->name = "thp_madvise";
	b->len = size;
	b->p = map_anon_aligned(size);
	if (b->p)
		madvise(b->p, size, MADV_HUGEPAGE);
	snprintf(b->pages, sizeof(b->pages), "MADV_HUGEPAGE");
	b = &lat[nlat++];
	b->name = "hugetlb_2m";
	b->hugetlb = true;
	b->len = size;
	if (saved >= 0 && hugetlb_reserve(saved + want) >= saved + want)
		b->p = map_anon(size, MAP_HUGETLB | MAP_POPULATE);
	else
		snprintf(b->why, sizeof(b->why), "cannot reserve huge pages");
	snprintf(b->pages, sizeof(b->pages), "hugetlb 2M");

	for (k = 0; k < nlat; k++) {
		b = &lat[k];
		if (!b->p) {
			if (!b->why[0])
				snprintf(b->why, sizeof(b->why), "allocation failed");
			continue;
		}
		memset(b->p, 0, size);
		lat_link(b->p, perm, lines);
		est += lat_chase((char *)b->p + (uint64_t)perm[0] * LINE, steps,
				 &end);
		sink += (uintptr_t)end;
		order[nord++] = k;
	}
	free(perm);
	n = repeats_for(opt.budget_ns * 2 * nord, est, opt.nmin > 3 ? 7 : 5, 15);
	for (k = 0; k < nlat; k++)
		t[k] = calloc(n, sizeof(uint64_t));
	for (r = 0; r < n; r++) {
		shuffle(order, nord);
		for (k = 0; k < nord; k++) {
			b = &lat[order[k]];
			if (t[order[k]])
				t[order[k]][r] = lat_chase(b->p, steps, &end);
			sink += (uintptr_t)end;
		}
	}
	for (k = 0; k < nlat; k++) {
		b = &lat[k];
		if (b->p && t[k]) {
			b->n = n;
			b->ns = median_u64(t[k], n) / steps;
			note("latency %-16s %8.1f ns/access", b->name, b->ns);
		}
		free(t[k]);
		if (b->p)
			munmap(b->p, b->len);
		b->p = NULL;
	}
	if (saved >= 0)
		hugetlb_reserve(saved);
}

/* ---- cost flat in live buffers ---------------------------------------------- */

static const char *const live_ops[] = { "alloc_free", "alloc_mmap_touch_unmap_free" };

/*
 * At each point, the fd under test holds N live buffers and a reference fd
 * holds 10; short blocks of cycles alternate between the two in random
 * order, so both see the same load on the host and the ratio is fair.
 * Every live buffer of both fds exists throughout: what differs is the
 * per-fd tables (handles, mmap offsets); the global registry is the same.
 */
struct live_result {
	unsigned long live;
	double med_ns[ARRAY_SIZE(live_ops)];	/* fd with N live */
	double ref_ns[ARRAY_SIZE(live_ops)];	/* reference fd, 10 live */
	unsigned int n;
	int status;
};

static struct live_result live_res[20];
static unsigned int nlive;

static int live_cycle(int fd, bool full, uint64_t *ns)
{
	struct npu_mem_alloc a;
	uint64_t t0 = now_ns();
	void *p;
	int ret;

	ret = npu_alloc(fd, PAGE, NPU_MEM_POLICY_HUGE_FIRST, &a);
	if (ret)
		return ret;
	if (full) {
		p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, a.buf.mmap_offset);
		if (p == MAP_FAILED) {
			ret = -errno;
			npu_free(fd, a.handle);
			return ret;
		}
		touch(p, PAGE);
		munmap(p, a.buf.size);
	}
	ret = npu_free(fd, a.handle);
	*ns = now_ns() - t0;
	return ret;
}

static void live_point(int fd, int ref_fd, unsigned long live)
{
	unsigned int blocks = opt.budget_ns < 100e6 ? 10 : 40, per = 25;
	unsigned int n = blocks * per, b, i, o, side, sides[2] = { 0, 1 };
	struct live_result *r = &live_res[nlive++];
	uint64_t *t[2][ARRAY_SIZE(live_ops)], ns;
	int fds[2] = { fd, ref_fd }, ret = 0;

	r->live = live;
	for (side = 0; side < 2; side++)
		for (o = 0; o < ARRAY_SIZE(live_ops); o++)
			t[side][o] = calloc(n, sizeof(uint64_t));
	for (side = 0; side < 2; side++)
		for (o = 0; o < ARRAY_SIZE(live_ops); o++)
			if (!t[side][o])
				ret = -ENOMEM;
	for (i = 0; i < 20 && !ret; i++)	/* warm-up */
		for (o = 0; o < 2 * ARRAY_SIZE(live_ops) && !ret; o++)
			ret = live_cycle(fds[o & 1], o >> 1, &ns);
	for (b = 0; b < blocks && !ret; b++) {
		shuffle(sides, 2);
		for (side = 0; side < 2 && !ret; side++) {
			unsigned int sd = sides[side];

			for (i = 0; i < per && !ret; i++) {
				for (o = 0; o < ARRAY_SIZE(live_ops) && !ret; o++) {
					bool tr = !b && i < 5 && !sd;

					if (tr)
						trace_begin("bench: live %lu %s", live,
							    live_ops[o]);
					ret = live_cycle(fds[sd], o,
							 &t[sd][o][b * per + i]);
					if (tr)
						trace_end();
				}
			}
		}
	}
	if (ret) {
		r->status = ret;
		note("live %lu: %s", live, strerror(-ret));
	} else {
		r->n = n;
		for (o = 0; o < ARRAY_SIZE(live_ops); o++) {
			r->med_ns[o] = median_u64(t[0][o], n);
			r->ref_ns[o] = median_u64(t[1][o], n);
		}
		note("live %7lu: alloc+free %.2f us (10 live: %.2f), full cycle %.2f us (%.2f)",
		     live, r->med_ns[0] / 1e3, r->ref_ns[0] / 1e3,
		     r->med_ns[1] / 1e3, r->ref_ns[1] / 1e3);
	}
	for (side = 0; side < 2; side++)
		for (o = 0; o < ARRAY_SIZE(live_ops); o++)
			free(t[side][o]);
}

/* 100001 and 100064: the cost depends on the exact count (see the README). */
static unsigned long live_points[16] = { 10, 1000, 10000, 100000, 100001, 100064 };
static unsigned int nlive_points = 6;

static int live_fill(int fd, unsigned long *have, unsigned long want)
{
	struct npu_mem_alloc a;

	while (*have < want) {
		if (npu_alloc(fd, PAGE, NPU_MEM_POLICY_HUGE_FIRST, &a)) {
			note("live: stopped at %lu buffers: %s", *have,
			     strerror(errno));
			return -errno;
		}
		(*have)++;
	}
	return 0;
}

static void run_live(void)
{
	unsigned long have = 0, ref_have = 0, k;
	int fd, ref_fd;

	if (npu_fd < 0)
		return;
	/* Clients of their own, so their tables hold exactly these buffers. */
	fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	ref_fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ref_fd < 0 || live_fill(ref_fd, &ref_have, 10))
		goto out;
	for (k = 0; k < nlive_points && live_points[k] <= opt.max_live; k++) {
		if (live_fill(fd, &have, live_points[k]))
			break;
		live_point(fd, ref_fd, have);
	}
out:
	if (fd >= 0)
		close(fd);
	if (ref_fd >= 0)
		close(ref_fd);
}

/* ---- targets ---------------------------------------------------------------- */

struct target {
	char name[48];
	char row[80];
	double value, limit;
	bool higher_better;
	bool known;
	char detail[160];
};

static struct target targets[256];
static unsigned int ntargets;

static struct target *add_target(const char *name, const char *row,
				 double value, double limit, bool higher_better,
				 bool known, const char *detail)
{
	struct target *t;

	if (ntargets >= ARRAY_SIZE(targets))
		return NULL;
	t = &targets[ntargets++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->row, sizeof(t->row), "%s", row);
	snprintf(t->detail, sizeof(t->detail), "%s", detail ? detail : "");
	t->value = value;
	t->limit = limit;
	t->higher_better = higher_better;
	t->known = known;
	return t;
}

static const char *verdict(const struct target *t)
{
	if (!t->known)
		return "n/a";
	if (t->higher_better)
		return t->value >= t->limit ? "PASS" : "MISS";
	return t->value <= t->limit ? "PASS" : "MISS";
}

static bool ok(const struct cell *c)
{
	return !c->status && c->n;
}

/* The target verdict printed next to an allocation row, or "". */
static const char *alloc_mark(unsigned int i, unsigned int j, char *buf,
			      size_t len)
{
	const struct cell *c = &cells[i][j], *hf = &cells[M_NPU_HF][j];
	const struct cell *fl = &cells[M_FLOOR][j];
	unsigned int k, lost = 0;
	double r;

	buf[0] = 0;
	if (i == M_NPU_HF && sizes[j] >= 64 * MiB && ok(c) && ok(fl)) {
		r = c->med / fl->med;
		for (k = 0; k < NMETHODS; k++)
			if (methods[k].alternative && ok(&cells[k][j]) &&
			    cells[k][j].med < c->med)
				lost++;
		snprintf(buf, len, "%s %.2fx floor (<=1.3); %s: %u faster; 2M x%u + 4K x%u",
			 r <= 1.3 ? "PASS" : "MISS", r, lost ? "MISS" : "PASS",
			 lost, c->huge_min, c->normal_max);
	} else if (i == M_ACL_ON && sizes[j] <= MiB && ok(c) && ok(hf)) {
		r = hf->med / c->med;
		snprintf(buf, len, "%s %.1fx faster than ioctl (>=20)",
			 r >= 20 ? "PASS" : "MISS", r);
	} else if (is_npu(i) && ok(c)) {
		snprintf(buf, len, "pages: 2M x%u + 4K x%u", c->huge_min,
			 c->normal_max);
	}
	return buf;
}

static void alloc_targets(void)
{
	char sz[24], row[80], det[160];
	unsigned int j, k;

	for (j = 0; j < nsizes; j++) {
		const struct cell *hf = &cells[M_NPU_HF][j];
		const struct cell *fl = &cells[M_FLOOR][j];
		const struct cell *kc = &cells[M_KCLEAR][j];
		const struct cell *on = &cells[M_ACL_ON][j];

		size_str(sizes[j], sz, sizeof(sz));
		if (sizes[j] >= 64 * MiB) {
			snprintf(row, sizeof(row), "npu_huge_first %s / floor", sz);
			if (ok(hf) && ok(kc) && ok(fl))
				snprintf(det, sizeof(det),
					 "%.2fx the kernel's clear_page floor; best-of %.2fx floor",
					 hf->med / kc->med, hf->min / fl->min);
			else
				det[0] = 0;
			add_target("large: <= 1.3x floor", row,
				   ok(hf) && ok(fl) ? hf->med / fl->med : 0, 1.3,
				   false, ok(hf) && ok(fl), det);
			for (k = 0; k < NMETHODS; k++) {
				const struct cell *c = &cells[k][j];

				if (!methods[k].alternative || !ok(c))
					continue;
				snprintf(row, sizeof(row), "npu_huge_first %s / %s",
					 sz, methods[k].key);
				snprintf(det, sizeof(det), "best-of %.2f",
					 ok(hf) ? hf->min / c->min : 0);
				add_target("large: faster than alternative", row,
					   ok(hf) ? hf->med / c->med : 0, 1.0,
					   false, ok(hf), det);
			}
		}
		if (sizes[j] <= MiB) {
			snprintf(row, sizeof(row),
				 "ioctl HUGE_FIRST %s / acl_pool_on %s", sz, sz);
			if (ok(on) && ok(hf))
				snprintf(det, sizeof(det), "best-of %.1f",
					 hf->min / on->min);
			else
				snprintf(det, sizeof(det), "%s", on->note[0] ?
					 on->note : "pool on: n/a (not implemented)");
			add_target("small: pool >= 20x ioctl", row,
				   ok(on) && ok(hf) ? hf->med / on->med : 0, 20,
				   true, ok(on) && ok(hf), det);
		}
	}
}

/* ---- reporting -------------------------------------------------------------- */

static FILE *open_out(const char *name)
{
	char path[4096];
	FILE *f;

	if (!opt.outdir)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", opt.outdir, name);
	f = fopen(path, "w");
	if (!f)
		note("cannot write %s: %s", path, strerror(errno));
	return f;
}

static void ratio_str(char *buf, size_t len, const struct cell *c,
		      const struct cell *ref)
{
	if (ok(ref))
		snprintf(buf, len, "%.2f", c->med / ref->med);
	else
		snprintf(buf, len, "-");
}

static void report_alloc(void)
{
	FILE *csv = open_out("alloc.csv");
	char sz[24], mark[160], r1[16], r2[16], r3[16];
	unsigned int i, j;

	out("\n== Allocation: get + first touch + release, median of N interleaved rounds ==\n");
	out("%-5s %-31s %4s %11s %10s %10s %7s %7s %7s  %s\n", "size", "method",
	    "n", "median_us", "get_us", "rel_us", "x_npu", "x_floor", "x_kclr",
	    "target / notes");
	if (csv)
		fprintf(csv, "method,label,size,n,median_ns,min_ns,max_ns,get_ns,"
			"release_ns,ratio_npu,ratio_floor,ratio_kclear,huge_pages,"
			"normal_pages,status\n");
	for (j = 0; j < nsizes; j++) {
		const struct cell *hf = &cells[M_NPU_HF][j];
		const struct cell *fl = &cells[M_FLOOR][j];
		const struct cell *kc = &cells[M_KCLEAR][j];

		size_str(sizes[j], sz, sizeof(sz));
		for (i = 0; i < NMETHODS; i++) {
			const struct cell *c = &cells[i][j];

			if (!method_on(&methods[i]))
				continue;
			if (!ok(c)) {
				out("%-5s %-31s %4s %11s %10s %10s %7s %7s %7s  %s\n",
				    sz, methods[i].label, "-", "n/a", "", "", "",
				    "", "", c->note);
				if (csv)
					fprintf(csv, "%s,\"%s\",%" PRIu64 ",0,,,,,,,,,,,\"%s\"\n",
						methods[i].key, methods[i].label,
						sizes[j], c->note);
				continue;
			}
			ratio_str(r1, sizeof(r1), c, hf);
			ratio_str(r2, sizeof(r2), c, fl);
			ratio_str(r3, sizeof(r3), c, kc);
			out("%-5s %-31s %4u %11.1f %10.1f %10.1f %7s %7s %7s  %s\n",
			    sz, methods[i].label, c->n, c->med / 1e3,
			    c->get / 1e3, c->rel / 1e3, r1, r2, r3,
			    alloc_mark(i, j, mark, sizeof(mark)));
			if (csv) {
				fprintf(csv, "%s,\"%s\",%" PRIu64 ",%u,%.0f,%.0f,%.0f,%.0f,%.0f,%s,%s,%s,",
					methods[i].key, methods[i].label,
					sizes[j], c->n, c->med, c->min, c->max,
					c->get, c->rel, ok(hf) ? r1 : "",
					ok(fl) ? r2 : "", ok(kc) ? r3 : "");
				if (is_npu(i))
					fprintf(csv, "%u,%u,ok\n", c->huge_min,
						c->normal_max);
				else
					fprintf(csv, ",,ok\n");
			}
		}
		out("\n");
	}
	if (csv)
		fclose(csv);

	/* The same medians as a matrix, for reading across sizes. */
	out("== Allocation matrix: median us per cycle ==\n%-31s", "method");
	for (j = 0; j < nsizes; j++)
		out(" %9s", size_str(sizes[j], sz, sizeof(sz)));
	out("\n");
	for (i = 0; i < NMETHODS; i++) {
		if (!method_on(&methods[i]))
			continue;
		out("%-31s", methods[i].label);
		for (j = 0; j < nsizes; j++) {
			const struct cell *c = &cells[i][j];

			if (ok(c))
				out(" %9.*f", c->med < 1e7 ? 1 : 0, c->med / 1e3);
			else
				out(" %9s", "n/a");
		}
		out("\n");
	}
}

/* Where an npu-mem cycle spends its time: medians of each step. */
static void report_phases(void)
{
	static const unsigned int which[] = { M_NPU_HF, M_NPU_HF_POP, M_NPU_HO,
					      M_NPU_NO };
	FILE *csv = open_out("npu_phases.csv");
	unsigned int w, j, k;
	char sz[24];

	out("\n== npu-mem cycle by step, median us (x_kclr: ALLOC / kernel clear_page floor) ==\n");
	out("%-5s %-26s", "size", "policy");
	for (k = 0; k < NPHASES; k++)
		out(" %11s", phase_names[k]);
	out(" %7s\n", "x_kclr");
	if (csv)
		fprintf(csv, "method,size,alloc_ns,mmap_ns,touch_ns,munmap_ns,free_ns,kclear_ns\n");
	for (j = 0; j < nsizes; j++) {
		const struct cell *kc = &cells[M_KCLEAR][j];

		size_str(sizes[j], sz, sizeof(sz));
		for (w = 0; w < ARRAY_SIZE(which); w++) {
			const struct cell *c = &cells[which[w]][j];

			if (!ok(c))
				continue;
			out("%-5s %-26s", sz, methods[which[w]].label);
			for (k = 0; k < NPHASES; k++)
				out(" %11.1f", c->phase[k] / 1e3);
			if (ok(kc))
				out(" %7.2f\n", c->phase[PH_ALLOC] / kc->med);
			else
				out(" %7s\n", "-");
			if (csv)
				fprintf(csv, "%s,%" PRIu64 ",%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
					methods[which[w]].key, sizes[j],
					c->phase[0], c->phase[1], c->phase[2],
					c->phase[3], c->phase[4],
					ok(kc) ? kc->med : 0);
		}
	}
	if (csv)
		fclose(csv);
}

static void report_bw(void)
{
	const struct bw_buf *ref = NULL;
	unsigned int i, o;
	FILE *csv;

	if (!nbw)
		return;
	csv = open_out("bandwidth.csv");
	for (i = 0; i < nbw; i++)
		if (!strcmp(bw[i].name, "malloc") && bw[i].n)
			ref = &bw[i];
	out("\n== CPU bandwidth over a %llu MiB buffer, median of N interleaved rounds ==\n",
	    (unsigned long long)(opt.bw_bytes / MiB));
	out("%-16s %-13s %3s %10s %8s %8s %8s  %-26s %s\n", "memory", "op", "n",
	    "median_ms", "GB/s", "x_malloc", "best_x", "backing",
	    "target (on medians)");
	if (csv)
		fprintf(csv, "memory,op,bytes,n,median_ns,best_ns,gbps,ratio_malloc,ratio_malloc_best,backing,status\n");
	for (i = 0; i < nbw; i++) {
		const struct bw_buf *b = &bw[i];

		for (o = 0; o < ARRAY_SIZE(bw_ops); o++) {
			double bytes = o == 2 ? opt.bw_bytes / 2.0 : opt.bw_bytes;
			char ratio[16] = "-", best[16] = "-", mark[64] = "", row[80];
			double v;

			if (!b->n) {
				out("%-16s %-13s %3s %10s %8s %8s %8s  %s\n", b->name,
				    bw_ops[o], "-", "n/a", "", "", "", b->why);
				if (csv)
					fprintf(csv, "%s,%s,%llu,0,,,,,,,\"%s\"\n",
						b->name, bw_ops[o],
						(unsigned long long)opt.bw_bytes,
						b->why);
				continue;
			}
			v = ref ? ref->med_ns[o] / b->med_ns[o] : 0;
			if (ref) {
				snprintf(ratio, sizeof(ratio), "%.3f", v);
				snprintf(best, sizeof(best), "%.3f",
					 ref->best_ns[o] / b->best_ns[o]);
			}
			if (ref && !strcmp(b->name, "npu_huge_first")) {
				snprintf(row, sizeof(row), "%s %s / malloc",
					 b->name, bw_ops[o]);
				add_target("bandwidth >= 0.95x malloc", row, v,
					   0.95, true, true, NULL);
				snprintf(mark, sizeof(mark), "%s %.3fx malloc (>=0.95)",
					 v >= 0.95 ? "PASS" : "MISS", v);
			}
			out("%-16s %-13s %3u %10.2f %8.3f %8s %8s  %-26s %s\n",
			    b->name, bw_ops[o], b->n, b->med_ns[o] / 1e6,
			    bytes / b->med_ns[o], ratio, best, b->pages, mark);
			if (csv)
				fprintf(csv, "%s,%s,%llu,%u,%.0f,%.0f,%.4f,%s,%s,\"%s\",ok\n",
					b->name, bw_ops[o],
					(unsigned long long)opt.bw_bytes, b->n,
					b->med_ns[o], b->best_ns[o],
					bytes / b->med_ns[o], ref ? ratio : "",
					ref ? best : "", b->pages);
		}
	}
	if (csv)
		fclose(csv);
}

static void report_lat(void)
{
	const struct lat_buf *ref = NULL;
	unsigned int i;
	FILE *csv;

	if (!nlat)
		return;
	csv = open_out("latency.csv");
	for (i = 0; i < nlat; i++)
		if (!strcmp(lat[i].name, "npu_huge_first") && lat[i].n)
			ref = &lat[i];
	out("\n== Random access: pointer chase over %llu MiB, 64 B lines, median ==\n",
	    (unsigned long long)(opt.lat_bytes / MiB));
	out("%-16s %3s %10s %7s  %s\n", "backing", "n", "ns/access", "x_npu",
	    "pages");
	if (csv)
		fprintf(csv, "backing,bytes,n,ns_per_access,ratio_npu,pages,status\n");
	for (i = 0; i < nlat; i++) {
		const struct lat_buf *b = &lat[i];
		char ratio[16] = "-";

		if (!b->n) {
			out("%-16s %3s %10s %7s  %s\n", b->name, "-", "n/a", "",
			    b->why);
			if (csv)
				fprintf(csv, "%s,%llu,0,,,,\"%s\"\n", b->name,
					(unsigned long long)opt.lat_bytes, b->why);
			continue;
		}
		if (ref)
			snprintf(ratio, sizeof(ratio), "%.2f", b->ns / ref->ns);
		out("%-16s %3u %10.1f %7s  %s\n", b->name, b->n, b->ns, ratio,
		    b->pages);
		if (csv)
			fprintf(csv, "%s,%llu,%u,%.2f,%s,\"%s\",ok\n", b->name,
				(unsigned long long)opt.lat_bytes, b->n, b->ns,
				ref ? ratio : "", b->pages);
	}
	if (csv)
		fclose(csv);
}

static void report_live(void)
{
	unsigned int i, o;
	FILE *csv;

	if (!nlive)
		return;
	csv = open_out("live.csv");
	out("\n== A 4 KiB buffer with N others live in its fd, vs an fd with 10 live, interleaved ==\n");
	out("%-8s %-28s %5s %10s %11s %7s  %s\n", "live", "op", "n", "median_us",
	    "10-live_us", "x_10", "target");
	if (csv)
		fprintf(csv, "live,op,n,median_ns,ref10_median_ns,ratio_10,status\n");
	for (i = 0; i < nlive; i++) {
		const struct live_result *r = &live_res[i];

		for (o = 0; o < ARRAY_SIZE(live_ops); o++) {
			char mark[64] = "", row[80];
			double v = r->n ? r->med_ns[o] / r->ref_ns[o] : 0;

			if (!r->n) {
				out("%-8lu %-28s %5s %10s\n", r->live, live_ops[o],
				    "-", "n/a");
				continue;
			}
			if (r->live == 100000) {
				snprintf(row, sizeof(row), "%s: 100000 / 10 live",
					 live_ops[o]);
				add_target("live: 100k <= 1.5x 10", row, v, 1.5,
					   false, true, NULL);
				snprintf(mark, sizeof(mark), "%s %.2fx (<=1.5)",
					 v <= 1.5 ? "PASS" : "MISS", v);
			}
			out("%-8lu %-28s %5u %10.2f %11.2f %7.2f  %s\n", r->live,
			    live_ops[o], r->n, r->med_ns[o] / 1e3,
			    r->ref_ns[o] / 1e3, v, mark);
			if (csv)
				fprintf(csv, "%lu,%s,%u,%.0f,%.0f,%.3f,ok\n", r->live,
					live_ops[o], r->n, r->med_ns[o],
					r->ref_ns[o], v);
		}
	}
	if (csv)
		fclose(csv);
}

static void report_targets(void)
{
	FILE *csv = open_out("targets.csv");
	unsigned int i, pass = 0, miss = 0, na = 0;

	out("\n== Targets ==\n");
	out("%-5s %-30s %-44s %9s %7s  %s\n", "", "target", "row", "value",
	    "limit", "notes");
	if (csv)
		fprintf(csv, "target,row,value,limit,result,detail\n");
	for (i = 0; i < ntargets; i++) {
		const struct target *t = &targets[i];
		const char *v = verdict(t);
		char val[16] = "-", lim[16];

		if (!strcmp(v, "PASS"))
			pass++;
		else if (!strcmp(v, "MISS"))
			miss++;
		else
			na++;
		if (t->known)
			snprintf(val, sizeof(val), "%.3f", t->value);
		snprintf(lim, sizeof(lim), "%s%.2f", t->higher_better ? ">=" : "<=",
			 t->limit);
		out("%-5s %-30s %-44s %9s %7s  %s\n", v, t->name, t->row, val, lim,
		    t->detail);
		if (csv)
			fprintf(csv, "\"%s\",\"%s\",%s,%s,%s,\"%s\"\n", t->name,
				t->row, t->known ? val : "", lim, v, t->detail);
	}
	out("targets: %u PASS, %u MISS, %u n/a\n", pass, miss, na);
	if (csv)
		fclose(csv);
}

static void write_meta(double secs)
{
	FILE *f = open_out("meta.txt");
	struct npu_mem_info info = { 0 };
	char cpu[256] = "?", *p, buf[4096];
	struct utsname u;

	if (!f)
		return;
	uname(&u);
	p = read_file("/proc/cpuinfo", buf, sizeof(buf)) ? NULL :
	    strstr(buf, "model name");
	p = p ? strchr(p, ':') : NULL;
	if (p) {
		snprintf(cpu, sizeof(cpu), "%s", p + 2);
		cpu[strcspn(cpu, "\n")] = 0;
	}
	if (npu_fd >= 0)
		ioctl(npu_fd, NPU_MEM_IOCTL_GET_INFO, &info);
	fprintf(f, "kernel=%s\nmachine=%s\ncpu=%s\ncpus=%ld\n", u.release,
		u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "mem_total=%llu\nthp_enabled=%s\nkernel_clear_page=%s\n",
		(unsigned long long)meminfo("MemTotal"), thp_mode, kclear_name);
	fprintf(f, "npu_dev_flags=%#x\n", info.dev_flags);
	fprintf(f, "pool_on=%s=%s\n", POOL_ENV,
		getenv(POOL_ENV) ? getenv(POOL_ENV) : "(unset: library default)");
	fprintf(f, "max_size=%llu\nbudget_ms=%.0f\nbw_bytes=%llu\nlat_bytes=%llu\n",
		(unsigned long long)opt.max_size, opt.budget_ns / 1e6,
		(unsigned long long)opt.bw_bytes, (unsigned long long)opt.lat_bytes);
	fprintf(f, "emulated=%s\nseconds=%.1f\n",
		getenv("VM_RUN") ? "yes (QEMU TCG guest, tests/vm/vm-run)" : "unknown",
		secs);
	fclose(f);
}

/* ---- main ------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: npu_mem_bench [-o DIR] [-m MAXSIZE] [-b BUDGET_MS] [-n N] [-2] [-q]\n"
		"                     [-B BW_BYTES] [-L LAT_BYTES] [-N MAX_LIVE] [-P LIST]\n"
		"                     [-s alloc,bw,lat,live] [-M method,...] [-f]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t avail, cap, s, t_start = now_ns();
	int c;

	while ((c = getopt(argc, argv, "o:m:b:n:2qB:L:N:P:s:M:fh")) != -1) {
		switch (c) {
		case 'o':
			opt.outdir = optarg;
			break;
		case 'm':
			opt.max_size = parse_size(optarg);
			break;
		case 'b':
			opt.budget_ns = atof(optarg) * 1e6;
			break;
		case 'n':
			opt.fixed_n = (unsigned int)atoi(optarg);
			break;
		case '2':
			opt.pow2 = true;
			break;
		case 'q':
			opt.max_size = 64 * MiB;
			opt.budget_ns = 40e6;
			opt.nmin = 3;
			opt.bw_bytes = 32 * MiB;
			opt.lat_bytes = 32 * MiB;
			opt.max_live = 10000;
			break;
		case 'B':
			opt.bw_bytes = parse_size(optarg);
			break;
		case 'L':
			opt.lat_bytes = parse_size(optarg);
			break;
		case 'N':
			opt.max_live = strtoul(optarg, NULL, 0);
			break;
		case 's':
			opt.sections = optarg;
			break;
		case 'M':
			opt.methods = optarg;
			break;
		case 'f':
			opt.force = true;
			break;
		case 'P': {
			char *tok, *save = NULL;

			nlive_points = 0;
			for (tok = strtok_r(optarg, ",", &save);
			     tok && nlive_points < ARRAY_SIZE(live_points);
			     tok = strtok_r(NULL, ",", &save))
				live_points[nlive_points++] = strtoul(tok, NULL, 0);
			break;
		}
		default:
			usage();
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (opt.outdir) {
		char path[4096];

		mkdir(opt.outdir, 0755);
		snprintf(path, sizeof(path), "%s/summary.txt", opt.outdir);
		summary = fopen(path, "w");
	}

	/*
	 * At the largest size the floor's buffer, a hugetlb reservation and
	 * the buffer being measured are held at once, plus the pool's cache.
	 */
	avail = meminfo("MemAvailable");
	cap = avail / 4;
	if (avail && opt.max_size > cap) {
		for (s = opt.max_size; s > cap && s > PAGE; s /= 2)
			;
		note("largest size %llu MiB -> %llu MiB (MemAvailable %llu MiB)",
		     (unsigned long long)(opt.max_size / MiB),
		     (unsigned long long)(s / MiB),
		     (unsigned long long)(avail / MiB));
		opt.max_size = s;
	}
	if (opt.bw_bytes > opt.max_size)
		opt.bw_bytes = opt.max_size;
	if (opt.lat_bytes > opt.max_size)
		opt.lat_bytes = opt.max_size;
	for (s = PAGE; s <= opt.max_size && nsizes < MAX_SIZES; s *= opt.pow2 ? 2 : 4)
		sizes[nsizes++] = s;

	read_thp_mode();
	pick_kclear();
	trace_init();
	snprintf(anon_label, sizeof(anon_label), "mmap POPULATE+mlock, THP %s",
		 thp_mode);
	npu_fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (npu_fd < 0)
		note("/dev/%s: %s: npu-mem rows are n/a", NPU_MEM_DEVICE_NAME,
		     strerror(errno));

	if (section_on("alloc")) {
		run_alloc();
		alloc_targets();
	}
	if (section_on("bw"))
		run_bandwidth();
	if (section_on("lat"))
		run_latency();
	if (section_on("live"))
		run_live();

	out("npu_mem_bench: kernel %s, THP %s, kernel zeroes with %s, sizes %llu KiB .. %llu MiB\n",
	    getenv("VM_KVER") ? getenv("VM_KVER") : "?", thp_mode, kclear_name,
	    (unsigned long long)(sizes[0] / KiB),
	    (unsigned long long)(opt.max_size / MiB));
	if (getenv("VM_RUN"))
		out("QEMU TCG guest: absolute times are not hardware times; compare ratios within this run.\n");
	if (section_on("alloc")) {
		report_alloc();
		report_phases();
	}
	report_bw();
	report_lat();
	report_live();
	report_targets();
	write_meta((now_ns() - t_start) / 1e9);
	if (summary)
		fclose(summary);
	if (npu_fd >= 0)
		close(npu_fd);
	return 0;
}
