// SPDX-License-Identifier: GPL-2.0-only
/*
 * fault_inject: every allocation path of npu_mem through injected failures.
 * Needs a kernel with FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC,
 * FAULT_INJECTION_USERCOPY and FAULT_INJECTION_DEBUG_FS (the debug kernel
 * of scripts/debug-kernel.sh); elsewhere it exits 77 (skip).  Root.
 *
 *   fault_inject [-p PATH-PREFIX] [-q]
 *
 * Paths: open; ALLOC of each policy (HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY) at
 * several sizes; HOST_REGISTER of anonymous memory (read-write and
 * read-only); mmap of the device; SYNC; EXPORT; mmap, DMA_BUF_IOCTL_SYNC
 * and vgem import of the dma-buf; IPC_EXPORT, IPC_SET_PIDS and IPC_IMPORT
 * (into a second open file); FREE, QUERY, GET_INFO; ALLOC for each other
 * NPU and PEER_MAP of NPU 0's buffer for NPU 1, where the module serves
 * several (a failed PEER_MAP leaves no mapping: PEER_QUERY says ENXIO);
 * and an allocation killed by SIGKILL half-way (the EINTR path, seen from
 * outside).
 *
 * Two ways of failing, both aimed at this process only:
 *  1. systematic (the "fail the Nth" technique syzkaller uses): for
 *     N = 1, 2, ... write N to /proc/thread-self/fail-nth, make the call,
 *     and the Nth fault-injection point the call reaches (a slab allocation,
 *     a page allocation, a copy to or from user space) fails.  A clean run
 *     first counts the points T of the call; N covers 1..64 and T-63..T
 *     (the undo paths at the end of a call) and a sample in between;
 *  2. random: failslab and fail_page_alloc with task-filter=Y, this task's
 *     make-it-fail=1 around the call only, interval=1, times=-1, space=0,
 *     ignore-gfp-wait=N (and ignore-gfp-highmem=N, min-order=0 for pages),
 *     at probabilities 5, 25 and 100 %.
 * verbose=0 everywhere: injected failures must not print stacks.
 *
 * After every attempt: the call either succeeded (and its result works: a
 * buffer is zeroed and QUERY agrees, a mapping reads and writes, a dma-buf
 * has the buffer's size) or failed with an errno the call documents for
 * that failure (ENOMEM for memory, EFAULT for a failed copy); then, once the
 * test's own objects are released, GET_INFO's global counters, this
 * process's VmPin and its number of open fds are back where they were.
 * When a call that creates a handle or an fd fails at its very end (the
 * copy to user space), nothing of it may remain even before cleanup.
 * Reports per path: fault points per call, injected failures exercised
 * (failed cleanly / absorbed by the kernel, e.g. a huge page falling back
 * to small ones), and random-mode injections.  Exit 1 on any violation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <drm/drm.h>
#include <linux/dma-buf.h>
#include <linux/npu_mem.h>

#include "nmtest_sys.h"

#define DEV_PATH	"/dev/" NPU_MEM_DEVICE_NAME
#define DBG		"/sys/kernel/debug"
#define PAGE		4096ULL
#define HUGE		(2ULL << 20)
#define BIG		1000000U	/* "never": fail-nth for counting */

static int quiet;
static int violations;
static char attempt_desc[64];	/* which injection, for the reports */

static void violation(const char *path, const char *fmt, ...)
{
	va_list ap;

	violations++;
	printf("VIOLATION: %s [%s]: ", path, attempt_desc);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Fault-injection controls                                             */

/* A number from a debugfs or sysfs file, -1 where there is none. */
static long read_long(const char *path)
{
	long v;

	return nm_read_long(path, &v) ? -1 : v;
}

static void attr_set(const char *attr, const char *file, const char *val)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), DBG "/%s/%s", attr, file);
	ret = nm_write_file(path, val);
	if (ret) {
		printf("cannot set %s to %s: %s\n", path, val, strerror(-ret));
		exit(1);
	}
}

static const char *const attrs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };

static void fi_setup(void)
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		attr_set(attrs[i], "probability", "0");
		attr_set(attrs[i], "interval", "1");
		attr_set(attrs[i], "times", "-1");
		attr_set(attrs[i], "space", "0");
		attr_set(attrs[i], "verbose", "0");
		attr_set(attrs[i], "task-filter", "Y");
	}
	attr_set("failslab", "ignore-gfp-wait", "N");
	attr_set("fail_page_alloc", "ignore-gfp-wait", "N");
	attr_set("fail_page_alloc", "ignore-gfp-highmem", "N");
	attr_set("fail_page_alloc", "min-order", "0");
}

/*
 * failslab aims at the caches marked at boot (slub_debug=A): every cache
 * but kmemleak's own and radix_tree_node (configs/x86_64-debug.conf).  A
 * failure in kmemleak's metadata only degrades kmemleak, with a message the
 * harness would take for a report; one in radix_tree_node's allocations
 * from DMA-API debugging's cacheline tracking switches DMA-API debugging
 * off for the rest of the boot, and its checks are what the error paths
 * under test need most.  (The price: XArray node allocations do not fail.)
 * Without the boot marks every cache is a target.
 */
static void fi_cache_filter(void)
{
	long mark = read_long("/sys/kernel/slab/kmalloc-64/failslab");
	long spared = read_long("/sys/kernel/slab/radix_tree_node/failslab");

	if (mark == 1 && spared == 0) {
		attr_set("failslab", "cache-filter", "Y");
		printf("failslab: caches marked at boot (slub_debug=A), sparing kmemleak's and radix_tree_node\n");
	} else {
		printf("failslab: every cache (no slub_debug=A marks at boot)\n");
	}
}

static void fi_teardown(void)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		attr_set(attrs[i], "probability", "0");
	attr_set("failslab", "cache-filter", "N");
}

/* This thread's fail-nth and make-it-fail, kept open so that setting them
 * costs nothing that could itself be a fault-injection point. */
static int nth_fd = -1, mif_fd = -1;

static void nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len) {
		printf("fail-nth: %s\n", strerror(errno));
		exit(1);
	}
}

/*
 * Was the armed failure consumed?  Reading fail-nth copies to user space,
 * which is itself a fault point while the count runs: a read that fails
 * (EFAULT) or returns non-zero means the call did not reach the Nth point.
 * Returns the count left (0: the failure was injected), then disarms.
 */
static unsigned int nth_disarm(void)
{
	char buf[16] = "";
	ssize_t n = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	unsigned int left = n > 0 ? strtoul(buf, NULL, 10) : 1;

	/* The write's own copy may count down too; a second write settles it. */
	pwrite(nth_fd, "0", 1, 0);
	pwrite(nth_fd, "0", 1, 0);
	return left;
}

static void mif(bool on)
{
	if (pwrite(mif_fd, on ? "1" : "0", 1, 0) != 1) {
		printf("make-it-fail: %s\n", strerror(errno));
		exit(1);
	}
}

/* ------------------------------------------------------------------ */
/* The driver                                                           */

static int ctl_fd = -1;		/* a client of its own, for global counters */

struct counters {
	uint64_t bytes, huge, normal, buffers;
};

static void counters(struct counters *c)
{
	struct npu_mem_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(ctl_fd, NPU_MEM_IOCTL_GET_INFO, &info)) {
		printf("GET_INFO: %s\n", strerror(errno));
		exit(1);
	}
	c->bytes = info.allocated_bytes;
	c->huge = info.huge_pages;
	c->normal = info.normal_pages;
	c->buffers = info.buffers;
}

/* ------------------------------------------------------------------ */
/* Paths                                                                 */

#define P_FD		1	/* the path gets a device fd */
#define P_BUF		2	/* ... and a buffer in it */
#define P_DMABUF	4	/* ... exported as a dma-buf */
#define P_VGEM		8	/* ... and the vgem card */
#define P_HOST		16	/* an anonymous mapping of size, patterned */
#define P_KEY		32	/* the buffer exported by key, a second fd */

struct ctx {
	uint32_t policy;
	uint64_t size;
	uint32_t device;	/* the NPU to ALLOC for */
	int fd;			/* the path's device fd */
	struct npu_mem_alloc a;	/* its prepared buffer (P_BUF) */
	bool has_buf;
	int dfd;		/* prepared dma-buf (P_DMABUF) */
	int vgem;
	/* what the call made */
	struct npu_mem_alloc out;
	bool has_out;
	void *map;
	size_t maplen;
	int newfd;
	uint32_t gem;
	int probe_fd;		/* lowest free fd number before the call */
	uint8_t *host;		/* P_HOST: the memory to register */
	uint32_t host_flags;
	struct npu_mem_host_register hr;
	bool has_hr;
	uint64_t key[2];	/* P_KEY: the buffer's key ... */
	int fd2;		/* ... and another open file to import into */
	struct npu_mem_ipc_import im;
	bool has_im;
	struct npu_mem_dmabuf_import di;	/* DMABUF_IMPORT's answer */
	bool has_di;
};

struct path {
	char name[48];
	int prep;
	long (*call)(struct ctx *);	/* 0 or -errno */
	int (*verify)(struct ctx *);	/* 0 when the result works */
	const int *errnos;		/* documented for an injected failure */
	uint32_t policy;
	uint64_t size;
	uint32_t device;
	/* results */
	unsigned int points, tried, injected, failed, absorbed;
	unsigned int prob_runs, prob_injected, prob_failed;
	unsigned int n_enomem, n_efault, n_other;
};

static const int E_MEM[] = { ENOMEM, 0 };
static const int E_MEM_FAULT[] = { ENOMEM, EFAULT, 0 };
static const int E_FAULT[] = { EFAULT, 0 };

static long ret_of(long r)
{
	return r < 0 ? -errno : 0;
}

static bool vgem_ok;

static int open_vgem(void)
{
	char path[32], name[16];
	int i, fd;

	for (i = 0; i < 8; i++) {
		struct drm_version v;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&v, 0, sizeof(v));
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (ioctl(fd, DRM_IOCTL_VERSION, &v) == 0 && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/* Touch a mapping at both ends of every page: zero, then writable. */
static int check_map(uint8_t *p, size_t len, bool write)
{
	size_t i;

	for (i = 0; i < len; i += PAGE)
		if (p[i] || p[i + PAGE - 1])
			return 1;
	if (write) {
		p[0] = 0x5a;
		p[len - 1] = 0xa5;
		if (p[0] != 0x5a || p[len - 1] != 0xa5)
			return 1;
		p[0] = p[len - 1] = 0;
	}
	return 0;
}

static long call_open(struct ctx *c)
{
	c->newfd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	return c->newfd < 0 ? -errno : 0;
}

static int verify_open(struct ctx *c)
{
	struct npu_mem_info info;

	memset(&info, 0, sizeof(info));
	return ioctl(c->newfd, NPU_MEM_IOCTL_GET_INFO, &info) || info.client_buffers;
}

static long call_alloc(struct ctx *c)
{
	long r;

	memset(&c->out, 0, sizeof(c->out));
	c->out.size = c->size;
	c->out.policy = c->policy;
	c->out.device = c->device;
	r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_ALLOC, &c->out));
	c->has_out = r == 0;
	return r;
}

static int verify_alloc(struct ctx *c)
{
	struct npu_mem_query q = { .handle = c->out.handle };
	uint64_t unit = c->policy == NPU_MEM_POLICY_HUGE_ONLY ? HUGE : PAGE;
	const struct npu_mem_buffer *b = &c->out.buf;
	uint8_t *p;
	int bad;

	if (ioctl(c->fd, NPU_MEM_IOCTL_QUERY, &q) || q.buf.size != b->size ||
	    b->size != (c->size + unit - 1) / unit * unit ||
	    (uint64_t)b->huge_pages * HUGE + (uint64_t)b->normal_pages * PAGE != b->size ||
	    (c->policy == NPU_MEM_POLICY_NORMAL_ONLY && b->huge_pages) ||
	    (c->policy == NPU_MEM_POLICY_HUGE_ONLY && b->normal_pages))
		return 1;
	p = mmap(NULL, b->size, PROT_READ, MAP_SHARED, c->fd, (off_t)b->mmap_offset);
	if (p == MAP_FAILED)
		return 1;
	bad = check_map(p, b->size, false);
	munmap(p, b->size);
	return bad;
}

/* The byte the prepared host memory holds at offset i. */
static uint8_t host_byte(size_t i)
{
	return (uint8_t)(i * 131 + (i >> 12) + 7);
}

static long call_host_register(struct ctx *c)
{
	long r;

	memset(&c->hr, 0, sizeof(c->hr));
	c->hr.addr = (uint64_t)(uintptr_t)c->host;
	c->hr.size = c->size;
	c->hr.flags = c->host_flags;
	r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_HOST_REGISTER, &c->hr));
	c->has_hr = r == 0;
	return r;
}

/* QUERY agrees, the handle is host memory of that size, the bytes are intact. */
static int verify_host_register(struct ctx *c)
{
	struct npu_mem_query q = { .handle = c->hr.handle };
	size_t i;

	if (ioctl(c->fd, NPU_MEM_IOCTL_QUERY, &q) || q.buf.size != c->size ||
	    c->hr.buf.size != c->size || !(q.buf.flags & NPU_MEM_BUF_HOST) ||
	    q.buf.normal_pages * PAGE != c->size || q.buf.mmap_offset)
		return 1;
	for (i = 0; i < c->size; i++)
		if (c->host[i] != host_byte(i))
			return 1;
	return 0;
}

static long call_mmap(struct ctx *c)
{
	c->maplen = c->a.buf.size;
	c->map = mmap(NULL, c->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		      (off_t)c->a.buf.mmap_offset);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return -errno;
	}
	return 0;
}

static int verify_map(struct ctx *c)
{
	return check_map(c->map, c->maplen, true);
}

static long call_sync(struct ctx *c)
{
	struct npu_mem_sync s = {
		.handle = c->a.handle, .direction = NPU_MEM_SYNC_BIDIRECTIONAL,
		.offset = 0, .length = c->a.buf.size,
	};

	return ret_of(ioctl(c->fd, NPU_MEM_IOCTL_SYNC, &s));
}

static long call_export(struct ctx *c)
{
	struct npu_mem_export e = { .handle = c->a.handle, .flags = O_RDWR | O_CLOEXEC };
	long r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_EXPORT, &e));

	if (!r)
		c->newfd = (int)e.fd;
	return r;
}

static int verify_export(struct ctx *c)
{
	return lseek(c->newfd, 0, SEEK_END) != (off_t)c->a.buf.size;
}

static long call_ipc_export(struct ctx *c)
{
	struct npu_mem_ipc_export e = { .handle = c->a.handle };
	long r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_IPC_EXPORT, &e));

	if (!r) {
		c->key[0] = e.key[0];
		c->key[1] = e.key[1];
	}
	return r;
}

/* The key works: another open file imports the same buffer with it. */
static int verify_ipc_export(struct ctx *c)
{
	struct npu_mem_ipc_import im = { .key = { c->key[0], c->key[1] } };
	int fd = open(DEV_PATH, O_RDWR | O_CLOEXEC), bad;

	if (fd < 0)
		return 1;
	bad = ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, &im) ||
	      im.buf.size != c->a.buf.size ||
	      !(im.buf.flags & NPU_MEM_BUF_IMPORTED);
	close(fd);
	return bad;
}

/* This process on the key's allow-list: then it may import. */
static long call_ipc_set_pids(struct ctx *c)
{
	int32_t self = getpid();
	struct npu_mem_ipc_set_pids s = {
		.key = { c->key[0], c->key[1] },
		.pids = (uintptr_t)&self, .count = 1,
	};

	return ret_of(ioctl(c->fd, NPU_MEM_IOCTL_IPC_SET_PIDS, &s));
}

static int verify_ipc_set_pids(struct ctx *c)
{
	return verify_ipc_export(c);
}

static long call_ipc_import(struct ctx *c)
{
	long r;

	memset(&c->im, 0, sizeof(c->im));
	c->im.key[0] = c->key[0];
	c->im.key[1] = c->key[1];
	r = ret_of(ioctl(c->fd2, NPU_MEM_IOCTL_IPC_IMPORT, &c->im));
	c->has_im = r == 0;
	if (r) {
		/* attempt() looks at the first file only: nothing of the
		 * failed import may remain in the second either */
		struct npu_mem_info info;

		memset(&info, 0, sizeof(info));
		if (ioctl(c->fd2, NPU_MEM_IOCTL_GET_INFO, &info) == 0 &&
		    info.client_buffers)
			violation("ipc_import", "failed (%s), yet the importing "
				  "file has %llu buffers",
				  strerrorname_np((int)-r) ?: "?",
				  (unsigned long long)info.client_buffers);
	}
	return r;
}

/* The import is the buffer: QUERY agrees, and it maps (zeroed). */
static int verify_ipc_import(struct ctx *c)
{
	struct npu_mem_query q = { .handle = c->im.handle };
	uint8_t *p;
	int bad;

	if (ioctl(c->fd2, NPU_MEM_IOCTL_QUERY, &q) ||
	    q.buf.size != c->a.buf.size || c->im.buf.size != c->a.buf.size ||
	    !(q.buf.flags & NPU_MEM_BUF_IMPORTED))
		return 1;
	p = mmap(NULL, q.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd2,
		 (off_t)q.buf.mmap_offset);
	if (p == MAP_FAILED)
		return 1;
	bad = check_map(p, q.buf.size, true);
	munmap(p, q.buf.size);
	return bad;
}

static long call_dmabuf_mmap(struct ctx *c)
{
	c->maplen = c->a.buf.size;
	c->map = mmap(NULL, c->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, c->dfd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return -errno;
	}
	return 0;
}

static long call_dmabuf_sync(struct ctx *c)
{
	struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };
	long r = ret_of(ioctl(c->dfd, DMA_BUF_IOCTL_SYNC, &s));

	if (!r) {
		s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
		ioctl(c->dfd, DMA_BUF_IOCTL_SYNC, &s);
	}
	return r;
}

static long call_vgem_import(struct ctx *c)
{
	struct drm_prime_handle h = { .fd = c->dfd };
	long r = ret_of(ioctl(c->vgem, DRM_IOCTL_PRIME_FD_TO_HANDLE, &h));

	if (!r)
		c->gem = h.handle;
	return r;
}

static long call_dmabuf_import(struct ctx *c)
{
	long r;

	memset(&c->di, 0, sizeof(c->di));
	c->di.fd = (uint32_t)c->dfd;
	r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_DMABUF_IMPORT, &c->di));
	c->has_di = r == 0;
	return r;
}

/* QUERY agrees: an import of our own buffer, of the dma-buf's size. */
static int verify_dmabuf_import(struct ctx *c)
{
	struct npu_mem_query q = { .handle = c->di.handle };

	if (ioctl(c->fd, NPU_MEM_IOCTL_QUERY, &q) ||
	    !(q.buf.flags & NPU_MEM_BUF_IMPORTED) ||
	    (q.buf.flags & NPU_MEM_BUF_FOREIGN) ||
	    q.buf.size < c->size || q.buf.size != c->di.buf.size)
		return 1;
	return 0;
}

static int verify_gem(struct ctx *c)
{
	return !c->gem;
}

static long call_free(struct ctx *c)
{
	long r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_FREE,
			      &(struct npu_mem_free){ .handle = c->a.handle }));

	if (!r)
		c->has_buf = false;
	return r;
}

static int verify_freed(struct ctx *c)
{
	struct npu_mem_query q = { .handle = c->a.handle };

	return !(ioctl(c->fd, NPU_MEM_IOCTL_QUERY, &q) && errno == ENOENT);
}

static long call_query(struct ctx *c)
{
	struct npu_mem_query q = { .handle = c->a.handle };
	long r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_QUERY, &q));

	if (!r && q.buf.size != c->a.buf.size)
		return -EBADMSG;
	return r;
}

/* NPUs the module serves: GET_INFO's device_count (set in main). */
static unsigned int npu_count = 1;

static int peer_query(struct ctx *c, uint32_t dev, struct npu_mem_peer *p)
{
	memset(p, 0, sizeof(*p));
	p->handle = c->a.handle;
	p->device = dev;
	return ioctl(c->fd, NPU_MEM_IOCTL_PEER_QUERY, p) ? -errno : 0;
}

/* NPU 0's buffer for NPU 1; a failure must leave nothing mapped. */
static long call_peer_map(struct ctx *c)
{
	struct npu_mem_peer p = { .handle = c->a.handle, .device = 1 };
	long r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_PEER_MAP, &p));
	struct npu_mem_peer q;
	int qr = peer_query(c, 1, &q);

	if (r && qr != -ENXIO)
		violation("peer_map", "failed (%s), yet PEER_QUERY says %s",
			  strerrorname_np((int)-r) ?: "?",
			  qr ? strerrorname_np(-qr) ?: "?" : "mapped");
	if (!r && (qr || q.dev_addr != p.dev_addr))
		return -EBADMSG;
	return r;
}

static long call_get_info(struct ctx *c)
{
	struct npu_mem_info info;
	long r;

	memset(&info, 0, sizeof(info));
	r = ret_of(ioctl(c->fd, NPU_MEM_IOCTL_GET_INFO, &info));
	if (!r && info.client_buffers != 1)
		return -EBADMSG;
	return r;
}

/* ------------------------------------------------------------------ */
/* One attempt: prepare, (inject,) call, check, release, check          */

static int prepare(const struct path *p, struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = c->dfd = c->vgem = c->newfd = c->fd2 = -1;
	c->policy = p->policy;
	c->size = p->size;
	c->device = p->device;
	if (p->prep & P_FD) {
		c->fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		if (c->fd < 0)
			return -errno;
	}
	if (p->prep & P_BUF) {
		c->a.size = p->size;
		c->a.policy = p->policy;
		if (ioctl(c->fd, NPU_MEM_IOCTL_ALLOC, &c->a))
			return -errno;
		c->has_buf = true;
	}
	if (p->prep & P_DMABUF) {
		struct npu_mem_export e = { .handle = c->a.handle, .flags = O_RDWR | O_CLOEXEC };

		if (ioctl(c->fd, NPU_MEM_IOCTL_EXPORT, &e))
			return -errno;
		c->dfd = (int)e.fd;
	}
	if (p->prep & P_KEY) {
		struct npu_mem_ipc_export e = { .handle = c->a.handle };

		if (ioctl(c->fd, NPU_MEM_IOCTL_IPC_EXPORT, &e))
			return -errno;
		c->key[0] = e.key[0];
		c->key[1] = e.key[1];
		c->fd2 = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		if (c->fd2 < 0)
			return -errno;
	}
	/* A card fd per attempt: DRM keeps a handle whose ioctl failed in its
	 * final copy to user space (EFAULT) until the fd is closed. */
	if (p->prep & P_VGEM) {
		c->vgem = open_vgem();
		if (c->vgem < 0)
			return -ENODEV;
	}
	if (p->prep & P_HOST) {
		size_t i;

		c->host_flags = p->policy;	/* NPU_MEM_HOST_* for these paths */
		c->host = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c->host == MAP_FAILED) {
			c->host = NULL;
			return -errno;
		}
		for (i = 0; i < p->size; i++)
			c->host[i] = host_byte(i);
	}
	/* The number the kernel would give a new fd. */
	c->probe_fd = dup(0);
	close(c->probe_fd);
	return 0;
}

static void release(struct ctx *c)
{
	if (c->map)
		munmap(c->map, c->maplen);
	if (c->newfd >= 0)
		close(c->newfd);
	if (c->gem)
		ioctl(c->vgem, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = c->gem });
	if (c->dfd >= 0)
		close(c->dfd);
	if (c->vgem >= 0)
		close(c->vgem);
	if (c->has_out)
		ioctl(c->fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ .handle = c->out.handle });
	if (c->has_buf)
		ioctl(c->fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ .handle = c->a.handle });
	if (c->has_hr)
		ioctl(c->fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ .handle = c->hr.handle });
	if (c->has_im)
		ioctl(c->fd2, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ .handle = c->im.handle });
	if (c->has_di)
		ioctl(c->fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ .handle = c->di.handle });
	if (c->fd2 >= 0)
		close(c->fd2);
	if (c->fd >= 0)
		close(c->fd);
	if (c->host)
		munmap(c->host, c->size);
}

struct snapshot {
	struct counters k;
	uint64_t pin;
	int fds;
};

static void snap(struct snapshot *s)
{
	counters(&s->k);
	nm_vmpin(&s->pin);
	s->fds = nm_fds_open();
}

static bool errno_ok(const int *list, int err)
{
	for (; *list; list++)
		if (*list == err)
			return true;
	return false;
}

/*
 * Run one attempt; mode 0: clean (arg: ignored), 1: fail the arg-th point,
 * 2: random with make-it-fail (probabilities set by the caller).  Returns
 * the fail-nth count left (mode 1), or 0.
 */
static unsigned int attempt(struct path *p, struct snapshot *base, int mode,
			    unsigned int arg, bool *injected, long *result)
{
	struct snapshot after;
	struct ctx c;
	unsigned int left = 0;
	long r;
	int err;

	if (mode == 1 && arg == BIG)
		snprintf(attempt_desc, sizeof(attempt_desc), "counting run");
	else if (mode == 1)
		snprintf(attempt_desc, sizeof(attempt_desc), "failing point %u", arg);
	else if (mode == 2)
		snprintf(attempt_desc, sizeof(attempt_desc), "random, probability %ld%%",
			 read_long(DBG "/failslab/probability"));
	else
		snprintf(attempt_desc, sizeof(attempt_desc), "clean");
	err = prepare(p, &c);
	if (err) {
		violation(p->name, "preparing the path failed: %s", strerror(-err));
		release(&c);
		*injected = false;
		*result = err;
		return 0;
	}
	if (mode == 1) {
		nth_arm(arg);
		r = p->call(&c);
		left = nth_disarm();
		*injected = left == 0;
	} else if (mode == 2) {
		mif(true);
		r = p->call(&c);
		mif(false);
		*injected = false;	/* the caller counts from "times" */
	} else {
		r = p->call(&c);
		*injected = false;
	}
	*result = r;

	if (r == 0) {
		if (p->verify && p->verify(&c))
			violation(p->name, "succeeded (after %s), but the result does not work",
				  mode == 1 ? "injecting at a point" : "a clean call");
	} else {
		if (r == -EBADMSG)
			violation(p->name, "succeeded with wrong output");
		else if (!errno_ok(p->errnos, -r))
			violation(p->name, "failed with %s (%s), not a documented errno for it%s",
				  strerrorname_np(-r) ?: "?", strerror(-r),
				  mode == 1 ? "" : " (no failure was injected on purpose)");
		/* Nothing of the failed call may remain: no handle in the
		 * client, no fd installed. */
		if (c.fd >= 0) {
			struct npu_mem_info info;

			memset(&info, 0, sizeof(info));
			if (ioctl(c.fd, NPU_MEM_IOCTL_GET_INFO, &info) == 0 &&
			    info.client_buffers != (uint64_t)c.has_buf)
				violation(p->name, "failed (%s), yet its client has %llu buffers, expected %d",
					  strerrorname_np(-r) ?: "?",
					  (unsigned long long)info.client_buffers, c.has_buf);
		}
		if (fcntl(c.probe_fd, F_GETFD) != -1 && c.probe_fd != c.dfd && c.probe_fd != c.fd)
			violation(p->name, "failed (%s), yet fd %d was installed",
				  strerrorname_np(-r) ?: "?", c.probe_fd);
	}
	release(&c);

	snap(&after);
	/* After a report, judge what follows against the new state, so that
	 * one leak is reported once, not by every later attempt. */
	if (memcmp(&after.k, &base->k, sizeof(after.k)))
		violation(p->name, "counters not back after %s: %llu bytes %llu huge %llu normal %llu buffers, were %llu %llu %llu %llu",
			  r ? "a failed call" : "a successful call",
			  (unsigned long long)after.k.bytes, (unsigned long long)after.k.huge,
			  (unsigned long long)after.k.normal, (unsigned long long)after.k.buffers,
			  (unsigned long long)base->k.bytes, (unsigned long long)base->k.huge,
			  (unsigned long long)base->k.normal, (unsigned long long)base->k.buffers);
	if (after.pin != base->pin)
		violation(p->name, "VmPin %llu kB, was %llu kB", (unsigned long long)after.pin >> 10,
			  (unsigned long long)base->pin >> 10);
	if (after.fds != base->fds)
		violation(p->name, "%d fds open, were %d", after.fds, base->fds);
	*base = after;
	return left;
}

static void count_result(struct path *p, long r, bool injected)
{
	if (!injected)
		return;
	p->injected++;
	if (r == 0) {
		p->absorbed++;
		return;
	}
	p->failed++;
	if (r == -ENOMEM)
		p->n_enomem++;
	else if (r == -EFAULT)
		p->n_efault++;
	else
		p->n_other++;
}


static void sweep_nth(struct path *p, struct snapshot *base)
{
	unsigned int n, left, t, stride;
	bool inj;
	long r;

	/* Count the call's fault points in a clean run. */
	left = attempt(p, base, 1, BIG, &inj, &r);
	if (r)
		violation(p->name, "fails without injection: %s", strerror(-r));
	t = left && left <= BIG ? BIG - left : 0;
	p->points = t;
	stride = t > 160 ? (t - 128) / 32 : 1;
	for (n = 1; n <= t + 1; n++) {
		if (n > 64 && n + 64 <= t) {
			/* the middle of a long call (the page loop): sampled */
			if ((n - 64) % stride)
				continue;
		}
		attempt(p, base, 1, n, &inj, &r);
		p->tried++;
		count_result(p, r, inj);
		if (!inj && r && n <= t)
			violation(p->name, "failed (%s) at N=%u without the injected failure",
				  strerrorname_np(-r) ?: "?", n);
	}
}

static void set_times(const char *val)
{
	attr_set("failslab", "times", val);
	attr_set("fail_page_alloc", "times", val);
}

static long times_used(void)
{
	return 2L * BIG - read_long(DBG "/failslab/times") -
	       read_long(DBG "/fail_page_alloc/times");
}

static void sweep_random(struct path *p, struct snapshot *base, unsigned int runs)
{
	static const char *const probs[] = { "5", "25", "100" };
	unsigned int i, k;
	long r, before;
	bool inj;

	for (i = 0; i < 3; i++) {
		char t[16];

		snprintf(t, sizeof(t), "%u", BIG);
		set_times(t);
		attr_set("failslab", "probability", probs[i]);
		attr_set("fail_page_alloc", "probability", probs[i]);
		for (k = 0; k < runs; k++) {
			before = times_used();
			attempt(p, base, 2, 0, &inj, &r);
			p->prob_runs++;
			if (times_used() > before) {
				p->prob_injected += times_used() - before;
				p->prob_failed += r != 0;
			} else if (r) {
				violation(p->name, "failed (%s) with nothing injected",
					  strerrorname_np(-r) ?: "?");
			}
		}
		attr_set("failslab", "probability", "0");
		attr_set("fail_page_alloc", "probability", "0");
	}
	set_times("-1");
}

/*
 * SIGKILL during a long ALLOC: the allocation loop notices the fatal signal
 * (it would return -EINTR to a survivor) and unwinds; exit then releases
 * the client.  Nothing may stay counted.
 */
static void kill_during_alloc(struct snapshot *base, unsigned int runs,
			      unsigned int *killed_mid, unsigned int *done_first)
{
	const uint64_t size = 96ULL << 20;
	struct npu_mem_alloc a;
	struct snapshot after;
	double t0, full;
	unsigned int i, k;
	int fd, pfd[2];

	/* How long does the allocation take here? */
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	memset(&a, 0, sizeof(a));
	a.size = size;
	a.policy = NPU_MEM_POLICY_NORMAL_ONLY;
	t0 = (double)clock() / CLOCKS_PER_SEC;
	{
		struct timespec ts0, ts1;

		clock_gettime(CLOCK_MONOTONIC, &ts0);
		if (ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a)) {
			printf("kill-during-alloc: ALLOC of %llu MiB: %s (skipped)\n",
			       (unsigned long long)(size >> 20), strerror(errno));
			close(fd);
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts1);
		full = (ts1.tv_sec - ts0.tv_sec) + (ts1.tv_nsec - ts0.tv_nsec) / 1e9;
	}
	(void)t0;
	close(fd);

	for (i = 0; i < runs; i++) {
		char ch;
		pid_t pid;
		ssize_t n;
		bool done = false;

		if (pipe2(pfd, O_CLOEXEC))
			return;
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
			if (write(pfd[1], "s", 1) != 1)
				_exit(1);
			if (ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == 0)
				write(pfd[1], "d", 1);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		n = read(pfd[0], &ch, 1);
		/* Spread the kill over the allocation's duration. */
		usleep((useconds_t)(full * 1e6 * (i + 0.5) / runs));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		while ((n = read(pfd[0], &ch, 1)) == 1)
			done |= ch == 'd';
		close(pfd[0]);
		if (done)
			(*done_first)++;
		else
			(*killed_mid)++;
		for (k = 0; k < 50; k++) {
			counters(&after.k);
			if (!memcmp(&after.k, &base->k, sizeof(after.k)))
				break;
			usleep(100000);
		}
		snprintf(attempt_desc, sizeof(attempt_desc), "kill %u", i);
		if (memcmp(&after.k, &base->k, sizeof(after.k))) {
			violation("kill-during-alloc", "counters not back after the child was killed: %llu bytes %llu buffers",
				  (unsigned long long)after.k.bytes,
				  (unsigned long long)after.k.buffers);
			base->k = after.k;
		}
	}
	printf("kill-during-alloc: %u MiB NORMAL_ONLY takes %.2f s here; %u kills landed mid-ALLOC, %u after it\n",
	       (unsigned int)(size >> 20), full, *killed_mid, *done_first);
}

/* ------------------------------------------------------------------ */

static struct path paths[64];
static unsigned int npaths;

static void add_path(const char *name, int prep, long (*call)(struct ctx *),
		     int (*verify)(struct ctx *), const int *errnos, uint32_t policy,
		     uint64_t size)
{
	struct path *p = &paths[npaths++];

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->prep = prep;
	p->call = call;
	p->verify = verify;
	p->errnos = errnos;
	p->policy = policy;
	p->size = size;
}

static const char *pol_name(uint32_t p)
{
	return p == NPU_MEM_POLICY_HUGE_FIRST ? "HUGE_FIRST" :
	       p == NPU_MEM_POLICY_HUGE_ONLY ? "HUGE_ONLY" : "NORMAL_ONLY";
}

static void build_paths(void)
{
	static const uint64_t sizes[] = { PAGE, 64 * 1024 + 1, HUGE, 3 * HUGE + PAGE };
	static const uint32_t pols[] = {
		NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_POLICY_HUGE_ONLY, NPU_MEM_POLICY_NORMAL_ONLY,
	};
	unsigned int i, j;
	char name[48];

	/* open: ENOMEM, or EFAULT when copying the path name fails */
	add_path("open", 0, call_open, verify_open, E_MEM_FAULT, 0, 0);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++) {
			snprintf(name, sizeof(name), "alloc %s %llu", pol_name(pols[i]),
				 (unsigned long long)sizes[j]);
			add_path(name, P_FD, call_alloc, verify_alloc, E_MEM_FAULT,
				 pols[i], sizes[j]);
		}
	/* The policy field carries NPU_MEM_HOST_* flags for these. */
	add_path("host_register 4K", P_FD | P_HOST, call_host_register,
		 verify_host_register, E_MEM_FAULT, 0, PAGE);
	add_path("host_register 2M+4K", P_FD | P_HOST, call_host_register,
		 verify_host_register, E_MEM_FAULT, 0, HUGE + PAGE);
	add_path("host_register RO 64K", P_FD | P_HOST, call_host_register,
		 verify_host_register, E_MEM_FAULT, NPU_MEM_HOST_READONLY,
		 64 * 1024);
	add_path("mmap HUGE_FIRST 2M+8K", P_FD | P_BUF, call_mmap, verify_map, E_MEM,
		 NPU_MEM_POLICY_HUGE_FIRST, HUGE + 2 * PAGE);
	add_path("mmap NORMAL_ONLY 64K", P_FD | P_BUF, call_mmap, verify_map, E_MEM,
		 NPU_MEM_POLICY_NORMAL_ONLY, 64 * 1024);
	add_path("sync", P_FD | P_BUF, call_sync, NULL, E_FAULT,
		 NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
	add_path("export", P_FD | P_BUF, call_export, verify_export, E_MEM_FAULT,
		 NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
	/* IPC: the key's table entry, the allow-list, the importer's handle */
	add_path("ipc_export", P_FD | P_BUF, call_ipc_export, verify_ipc_export,
		 E_MEM_FAULT, NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
	add_path("ipc_set_pids", P_FD | P_BUF | P_KEY, call_ipc_set_pids,
		 verify_ipc_set_pids, E_MEM_FAULT, NPU_MEM_POLICY_NORMAL_ONLY,
		 64 * 1024);
	add_path("ipc_import", P_FD | P_BUF | P_KEY, call_ipc_import,
		 verify_ipc_import, E_MEM_FAULT, NPU_MEM_POLICY_HUGE_FIRST,
		 HUGE + PAGE);
	add_path("dma-buf mmap", P_FD | P_BUF | P_DMABUF, call_dmabuf_mmap, verify_map,
		 E_MEM, NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
	add_path("dma-buf sync", P_FD | P_BUF | P_DMABUF, call_dmabuf_sync, NULL, E_FAULT,
		 NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
	/*
	 * DMABUF_IMPORT of our own dma-buf (a handle).  Not of vgem's: failures
	 * injected into vgem's mapping of its pages for the NPU leave Intel
	 * IOMMU page-table entries behind on the debug kernel ("DMA PTE for
	 * vPFN already set" on a later mapping), inside the exporter's and the
	 * IOMMU's unwinding, which this program cannot tell from npu-mem's.
	 */
	add_path("dmabuf_import self", P_FD | P_BUF | P_DMABUF, call_dmabuf_import,
		 verify_dmabuf_import, E_MEM_FAULT, NPU_MEM_POLICY_HUGE_FIRST,
		 HUGE + PAGE);
	if (vgem_ok)
		add_path("dma-buf import (vgem)", P_FD | P_BUF | P_DMABUF | P_VGEM,
			 call_vgem_import, verify_gem, E_MEM_FAULT,
			 NPU_MEM_POLICY_NORMAL_ONLY, 64 * 1024);
	add_path("free", P_FD | P_BUF, call_free, verify_freed, E_FAULT,
		 NPU_MEM_POLICY_NORMAL_ONLY, PAGE);
	add_path("query", P_FD | P_BUF, call_query, NULL, E_FAULT,
		 NPU_MEM_POLICY_NORMAL_ONLY, PAGE);
	add_path("get_info", P_FD | P_BUF, call_get_info, NULL, E_FAULT,
		 NPU_MEM_POLICY_NORMAL_ONLY, PAGE);
	/* Several NPUs: ALLOC for the others, and peer mappings. */
	for (i = 1; i < npu_count && i < 4; i++) {
		snprintf(name, sizeof(name), "alloc device %u", i);
		add_path(name, P_FD, call_alloc, verify_alloc, E_MEM_FAULT,
			 NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
		paths[npaths - 1].device = i;
	}
	if (npu_count > 1)
		add_path("peer_map", P_FD | P_BUF, call_peer_map, NULL,
			 E_MEM_FAULT, NPU_MEM_POLICY_HUGE_FIRST, HUGE + PAGE);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	unsigned int i, runs = 8, killed_mid = 0, done_first = 0;
	unsigned long tot_inj = 0, tot_tried = 0, tot_prob = 0;
	struct snapshot base;
	int opt;

	while ((opt = getopt(argc, argv, "p:r:q")) != -1) {
		switch (opt) {
		case 'p': only = optarg; break;
		case 'r': runs = strtoul(optarg, NULL, 0); break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: fault_inject [-p PATH-PREFIX] [-r RANDOM-RUNS] [-q]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(DEV_PATH, F_OK)) {
		printf("no %s: npu_mem not loaded\n", DEV_PATH);
		return 77;
	}
	if (access(DBG "/failslab/probability", W_OK) ||
	    access(DBG "/fail_page_alloc/probability", W_OK) ||
	    access(DBG "/fail_usercopy/probability", W_OK)) {
		printf("no failslab/fail_page_alloc/fail_usercopy in %s: kernel without fault injection (scripts/debug-kernel.sh builds one)\n",
		       DBG);
		return 77;
	}
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	mif_fd = open("/proc/thread-self/make-it-fail", O_RDWR | O_CLOEXEC);
	ctl_fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (nth_fd < 0 || mif_fd < 0 || ctl_fd < 0) {
		printf("cannot open fail-nth/make-it-fail/%s: %s\n", DEV_PATH, strerror(errno));
		return 1;
	}
	opt = open_vgem();
	vgem_ok = opt >= 0;
	if (vgem_ok)
		close(opt);
	/* No page faults inside an injection window: they would fail too. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		printf("mlockall: %s (continuing)\n", strerror(errno));
	{
		struct npu_mem_info info = { 0 };

		if (!ioctl(ctl_fd, NPU_MEM_IOCTL_GET_INFO, &info) &&
		    info.device_count)
			npu_count = info.device_count;
	}
	fi_setup();
	fi_cache_filter();
	build_paths();
	snap(&base);
	if (base.k.buffers)
		printf("note: %llu buffers of other clients exist; they must not change\n",
		       (unsigned long long)base.k.buffers);

	for (i = 0; i < npaths; i++) {
		struct path *p = &paths[i];

		if (only && strncmp(p->name, only, strlen(only)))
			continue;
		sweep_nth(p, &base);
		sweep_random(p, &base, runs);
		if (!quiet)
			printf("%-28s %5u points, %4u injected: %4u failed cleanly, %4u absorbed; random: %u injected in %u runs\n",
			       p->name, p->points, p->injected, p->failed, p->absorbed,
			       p->prob_injected, p->prob_runs);
	}
	if (!only || !strncmp("kill", only, 4))
		kill_during_alloc(&base, 10, &killed_mid, &done_first);
	fi_teardown();

	printf("\n%-28s %7s %6s %9s %6s %6s %6s %8s %10s %9s\n", "path", "points", "tried",
	       "injected", "ENOMEM", "EFAULT", "other", "absorbed", "rnd-inject", "rnd-fail");
	for (i = 0; i < npaths; i++) {
		struct path *p = &paths[i];

		if (!p->tried && !p->prob_runs)
			continue;
		printf("%-28s %7u %6u %9u %6u %6u %6u %8u %10u %9u\n", p->name, p->points,
		       p->tried, p->injected, p->n_enomem, p->n_efault, p->n_other,
		       p->absorbed, p->prob_injected, p->prob_failed);
		tot_inj += p->injected;
		tot_tried += p->tried;
		tot_prob += p->prob_injected;
	}
	printf("fault_inject: %s: %lu systematic injections in %lu calls, %lu random injections, %u kills mid-ALLOC, %d violations\n",
	       violations ? "FAIL" : "PASS", tot_inj, tot_tried, tot_prob, killed_mid, violations);
	return violations ? 1 : 0;
}
