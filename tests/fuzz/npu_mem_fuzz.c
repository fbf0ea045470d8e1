// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu_mem_fuzz: an ioctl/mmap fuzzer for /dev/npu-mem.
 *
 *   npu_mem_fuzz [-s SEED] [-t SECONDS] [-n CALLS] [-j THREADS] [-m MAXBYTES] [-v]
 *
 * Several threads share a pool of device fds, dma-buf fds, handles (live,
 * freed and invented ones) and CPU mappings, and throw at the driver:
 *  - its six ioctls with field values biased toward boundaries (0, 1, page
 *    and huge-page sizes, 2^n +/- 1, UINT32_MAX, UINT64_MAX), wrong
 *    pad/reserved/flags words, live, freed and random handles;
 *  - mutated ioctl numbers: the right magic with a wrong nr, direction or
 *    size (including sizes larger than the struct, with zero or non-zero
 *    tails), fully random numbers, and argument pointers that are NULL,
 *    unmapped, kernel addresses, read-only, or straddle a guard page;
 *  - mmap of the device and of dma-bufs at live, stale and random offsets and
 *    lengths, every prot, shared and private; munmap of pieces (VMA splits),
 *    mremap (shrink, grow, move), mprotect, madvise (every advice), touching
 *    the mappings, vmsplice/write from them into a pipe, process_vm_readv;
 *  - close, dup, export-and-close, DMA_BUF_IOCTL_* on dma-bufs, fork (the
 *    child allocates, maps and frees on inherited fds, then exits), reads of
 *    fdinfo, smaps and the driver's debugfs files - all racing each other.
 * The kernel is the main oracle (KASAN, lockdep, kmemleak, DMA-API debugging
 * and WARNINGs fail the guest); the fuzzer itself checks that every error is
 * one of the errnos the call can document, that the process survives, and
 * that after closing everything the driver's counters (GET_INFO) and VmPin
 * are back at zero.
 *
 * Replay: every thread draws from its own generator seeded from SEED and its
 * index, so with -j 1 a seed replays the exact call sequence; with several
 * threads the per-thread sequences replay but their interleaving does not.
 * Defaults come from NPU_MEM_FUZZ_{SEED,SECONDS,CALLS,THREADS,MAXBYTES}
 * (seed 1, 20 s, no call limit, 4 threads, 256 MiB), so run-suites.sh can run
 * it without arguments.  While it runs, the module parameter max_bytes is
 * lowered to MAXBYTES (restored at exit) so that boundary sizes cannot take
 * the whole guest's memory.
 *
 * Output: calls executed per operation (ok / failed, errnos seen); the last
 * line is "npu_mem_fuzz: PASS ..." or "npu_mem_fuzz: FAIL ...".  Exit 0, 1
 * on a finding, 77 when /dev/npu-mem does not exist.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/npu_mem.h>

#define DEV_PATH	"/dev/" NPU_MEM_DEVICE_NAME
#define PARAM_MAX_BYTES	"/sys/module/npu_mem/parameters/max_bytes"
#define PAGE		4096ULL
#define HUGE		(2ULL << 20)

#define MAX_FDS		24
#define MAX_BUFS	192
#define MAX_MAPS	96
#define MAX_THREADS	16
#define ARGBUF		(16384 + PAGE)

/* ------------------------------------------------------------------ */
/* Generator: splitmix64, one per thread                               */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* A 64-bit value biased toward the boundaries a driver gets wrong. */
static uint64_t boundary64(struct rng *r)
{
	static const uint64_t base[] = {
		0, 1, 2, 3, 7, 8, 63, 64, 511, 512, 4095, 4096, 4097, 8192,
		65535, 65536, 1ULL << 20, HUGE - 1, HUGE, HUGE + 1,
		HUGE + PAGE, 2 * HUGE, (1ULL << 30), (1ULL << 31),
		(1ULL << 32) - 1, 1ULL << 32, (1ULL << 32) + 1,
		(1ULL << 44), (1ULL << 52), INT64_MAX, (uint64_t)INT64_MAX + 1,
		UINT64_MAX - PAGE + 1, UINT64_MAX - HUGE + 1, UINT64_MAX - 1,
		UINT64_MAX,
	};
	unsigned int k;

	switch (below(r, 6)) {
	case 0:
	case 1:
		return base[below(r, sizeof(base) / sizeof(base[0]))];
	case 2:			/* 2^n - 1, 2^n, 2^n + 1 */
		k = below(r, 64);
		return (1ULL << k) + below(r, 3) - 1;
	case 3:			/* page multiples, +/- a little */
		return below(r, 4096) * PAGE + (chance(r, 30) ? below(r, 3) - 1 : 0);
	case 4:
		return rnd(r);
	default:
		return -(below(r, 3) * PAGE + below(r, 2));
	}
}

static uint32_t boundary32(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
		return below(r, 8);
	case 1:
		return (uint32_t)boundary64(r);
	case 2:
		return UINT32_MAX - below(r, 3);
	default:
		return (uint32_t)rnd(r);
	}
}

/* ------------------------------------------------------------------ */
/* Shared state                                                         */

enum fd_kind { FD_FREE, FD_DEV, FD_DMABUF, FD_OTHER };

struct fz_fd {
	int fd;
	enum fd_kind kind;
	uint64_t size;		/* dma-buf: its size */
	bool readonly;		/* dma-buf of a READONLY buffer */
};

struct fz_buf {
	bool used;
	bool live;		/* false: freed (a stale handle to try) */
	int devfd;		/* the fd the handle belongs to (may be closed) */
	uint32_t handle;
	uint64_t size;
	uint64_t offset;
	uint32_t flags;
};

struct fz_map {
	bool used;
	uint8_t *addr;
	size_t len;
	int prot;
};

static struct {
	pthread_mutex_t lock;
	struct fz_fd fds[MAX_FDS];
	struct fz_buf bufs[MAX_BUFS];
	struct fz_map maps[MAX_MAPS];
	uint64_t live_bytes;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ------------------------------------------------------------------ */
/* Statistics                                                           */

enum op {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_GET_INFO, OP_ALLOC, OP_FREE, OP_QUERY,
	OP_SYNC, OP_EXPORT, OP_EXPORT_CLOSE, OP_RAW_IOCTL, OP_BAD_PTR,
	OP_MMAP, OP_MMAP_DMABUF, OP_MUNMAP, OP_MREMAP, OP_MPROTECT, OP_MADVISE,
	OP_TOUCH, OP_PIPE_IO, OP_VM_READV, OP_DMABUF_IOCTL, OP_FORK,
	OP_PROC_READ, OP_FILE_IO,
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"open", "close", "dup", "get_info", "alloc", "free", "query", "sync",
	"export", "export+close", "raw_ioctl", "bad_pointer", "mmap",
	"mmap_dmabuf", "munmap", "mremap", "mprotect", "madvise", "touch",
	"pipe_io", "process_vm_readv", "dmabuf_ioctl", "fork", "proc_read",
	"read/write",
};

/* Relative weights: ioctls first, mappings next, process-level rarer. */
static const unsigned int op_weight[OP_COUNT] = {
	[OP_OPEN] = 3, [OP_CLOSE] = 2, [OP_DUP] = 2, [OP_GET_INFO] = 4,
	[OP_ALLOC] = 18, [OP_FREE] = 10, [OP_QUERY] = 6, [OP_SYNC] = 8,
	[OP_EXPORT] = 5, [OP_EXPORT_CLOSE] = 3, [OP_RAW_IOCTL] = 12,
	[OP_BAD_PTR] = 5, [OP_MMAP] = 12, [OP_MMAP_DMABUF] = 5, [OP_MUNMAP] = 6,
	[OP_MREMAP] = 3, [OP_MPROTECT] = 3, [OP_MADVISE] = 5, [OP_TOUCH] = 6,
	[OP_PIPE_IO] = 2, [OP_VM_READV] = 2, [OP_DMABUF_IOCTL] = 5,
	[OP_FORK] = 1, [OP_PROC_READ] = 2, [OP_FILE_IO] = 1,
};

#define NERR 140
static struct {
	atomic_ulong calls, ok;
	atomic_ulong err[NERR];
} stats[OP_COUNT];

static atomic_ulong total_calls, findings, children_bad, signals_caught;
static atomic_bool stop;
static uint64_t max_calls;
static double deadline;
static int verbose;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void finding(const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&findings, 1);
	flockfile(stdout);
	printf("FINDING: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	funlockfile(stdout);
}

/*
 * Record one call's result.  allowed: errnos this call may return, ended by
 * 0; anything else is a finding.
 */
static void record(enum op op, long ret, int err, const int *allowed,
		   const char *fmt, ...)
{
	const int *a;
	va_list ap;

	atomic_fetch_add(&stats[op].calls, 1);
	atomic_fetch_add(&total_calls, 1);
	if (ret >= 0) {
		atomic_fetch_add(&stats[op].ok, 1);
		return;
	}
	atomic_fetch_add(&stats[op].err[err > 0 && err < NERR ? err : 0], 1);
	if (!allowed)
		return;
	for (a = allowed; *a; a++)
		if (*a == err)
			return;
	atomic_fetch_add(&findings, 1);
	flockfile(stdout);
	printf("FINDING: %s: unexpected %s (%d): ", op_names[op], strerrorname_np(err) ?: "?", err);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	funlockfile(stdout);
}

/* Errnos per call.  ENOMEM is always possible (the cap, real memory). */
static const int E_IOCTL[] = { EINVAL, ENOENT, ENOTTY, EFAULT, ENOMEM, E2BIG,
			       EOPNOTSUPP, EBADF, EINTR, EMFILE, EACCES, 0 };
static const int E_MMAP[] = { EINVAL, EACCES, ENOMEM, EBADF, ENODEV, EPERM,
			      EAGAIN, EOVERFLOW, 0 };
static const int E_MM[] = { EINVAL, ENOMEM, EFAULT, EACCES, EAGAIN, EPERM,
			    EBUSY, EOPNOTSUPP, 0 };

/* ------------------------------------------------------------------ */
/* Per-thread context                                                   */

struct thr {
	int idx;
	struct rng r;
	uint8_t *argbuf;	/* ARGBUF bytes, R/W */
	uint8_t *guard;		/* its last page is PROT_NONE: argbuf + 16384 */
	uint8_t *ropage;	/* a read-only page */
	int pipefd[2];
	pthread_t tid;
};

static __thread sigjmp_buf *volatile probe_jmp;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (probe_jmp) {
		atomic_fetch_add(&signals_caught, 1);
		siglongjmp(*probe_jmp, sig);
	}
	/* A fault outside a probe is a bug in the fuzzer or the driver. */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ------------------------------------------------------------------ */
/* Picking from the pools (call with st.lock held)                      */

static int pick_fd(struct rng *r, enum fd_kind kind)
{
	int i, n = 0, cand[MAX_FDS];

	for (i = 0; i < MAX_FDS; i++)
		if (st.fds[i].kind == kind)
			cand[n++] = i;
	return n ? cand[below(r, n)] : -1;
}

static int free_fd_slot(void)
{
	int i;

	for (i = 0; i < MAX_FDS; i++)
		if (st.fds[i].kind == FD_FREE)
			return i;
	return -1;
}

static void add_fd(int fd, enum fd_kind kind, uint64_t size, bool ro)
{
	int slot;

	pthread_mutex_lock(&st.lock);
	slot = free_fd_slot();
	if (slot >= 0) {
		st.fds[slot] = (struct fz_fd){ fd, kind, size, ro };
		fd = -1;
	}
	pthread_mutex_unlock(&st.lock);
	if (fd >= 0)
		close(fd);	/* table full */
}

/* A device fd to use: from the table, or (rarely) a stale/random number. */
static int some_devfd(struct thr *t)
{
	int s, fd;

	if (chance(&t->r, 3))
		return chance(&t->r, 50) ? -1 : 3 + (int)below(&t->r, 60);
	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, FD_DEV);
	fd = s >= 0 ? st.fds[s].fd : -1;
	pthread_mutex_unlock(&st.lock);
	return fd;
}

/* A handle for devfd: live, freed, of another fd, or invented. */
static uint32_t some_handle(struct thr *t, int devfd, int *bufslot)
{
	int i, n = 0, cand[MAX_BUFS];
	uint32_t h;

	*bufslot = -1;
	if (chance(&t->r, 8))
		return chance(&t->r, 50) ? 0 : boundary32(&t->r);
	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_BUFS; i++)
		if (st.bufs[i].used && (st.bufs[i].devfd == devfd || chance(&t->r, 5)))
			cand[n++] = i;
	if (!n) {
		pthread_mutex_unlock(&st.lock);
		return 1 + below(&t->r, 4);
	}
	i = cand[below(&t->r, n)];
	h = st.bufs[i].handle;
	*bufslot = i;
	pthread_mutex_unlock(&st.lock);
	if (chance(&t->r, 3))
		h += below(&t->r, 3) - 1;
	return h;
}

static void forget_buf(int slot)
{
	/* Keep it as a stale handle most of the time. */
	if (st.bufs[slot].live) {
		st.bufs[slot].live = false;
		st.live_bytes -= st.bufs[slot].size;
	}
}

/* ------------------------------------------------------------------ */
/* Operations                                                           */

static void op_open(struct thr *t)
{
	int fd = open(DEV_PATH, O_RDWR | (chance(&t->r, 50) ? O_CLOEXEC : 0));

	record(OP_OPEN, fd, errno, (const int[]){ ENOMEM, EMFILE, ENFILE, 0 }, "open");
	if (fd >= 0)
		add_fd(fd, FD_DEV, 0, false);
}

/* The fd's buffers are gone: their handles stay as stale ones to try. */
static void drop_bufs_of(int fd)
{
	int i;

	for (i = 0; i < MAX_BUFS; i++)
		if (st.bufs[i].used && st.bufs[i].devfd == fd)
			forget_buf(i);
}

static void op_close(struct thr *t)
{
	int s, fd;
	long ret;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, chance(&t->r, 50) ? FD_DEV : FD_DMABUF);
	if (s < 0 || (st.fds[s].kind == FD_DEV && chance(&t->r, 60))) {
		/* Keep device fds around longer than dma-bufs. */
		pthread_mutex_unlock(&st.lock);
		return;
	}
	fd = st.fds[s].fd;
	st.fds[s].kind = FD_FREE;
	if (!chance(&t->r, 20))
		drop_bufs_of(fd);	/* else: keep its handles as "stale fd" */
	pthread_mutex_unlock(&st.lock);
	ret = close(fd);
	record(OP_CLOSE, ret, errno, (const int[]){ EBADF, 0 }, "close(%d)", fd);
}

static void op_dup(struct thr *t)
{
	int s, fd, nfd;
	struct fz_fd copy;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, chance(&t->r, 60) ? FD_DEV : FD_DMABUF);
	copy = s >= 0 ? st.fds[s] : (struct fz_fd){ -1, FD_FREE, 0, false };
	pthread_mutex_unlock(&st.lock);
	if (s < 0)
		return;
	fd = copy.fd;
	nfd = fcntl(fd, chance(&t->r, 50) ? F_DUPFD_CLOEXEC : F_DUPFD, 3);
	record(OP_DUP, nfd, errno, (const int[]){ EBADF, EMFILE, 0 }, "dup(%d)", fd);
	if (nfd >= 0)
		add_fd(nfd, copy.kind, copy.size, copy.readonly);
}

static void op_get_info(struct thr *t)
{
	struct npu_mem_info *info = (void *)t->argbuf;
	int fd = some_devfd(t);
	bool bad = false;
	long ret;

	memset(info, 0, sizeof(*info));
	if (chance(&t->r, 15))
		info->flags = boundary32(&t->r);
	if (chance(&t->r, 10))
		info->reserved[below(&t->r, 4)] = boundary64(&t->r);
	bad = info->flags || info->reserved[0] || info->reserved[1] ||
	      info->reserved[2] || info->reserved[3];
	ret = ioctl(fd, NPU_MEM_IOCTL_GET_INFO, info);
	record(OP_GET_INFO, ret, errno, E_IOCTL, "fd %d", fd);
	if (!ret && bad)
		finding("GET_INFO succeeded with flags/reserved set");
}

static uint64_t alloc_size(struct thr *t)
{
	switch (below(&t->r, 10)) {
	case 0:
		return boundary64(&t->r);
	case 1:
		return (1 + below(&t->r, 4)) * HUGE + below(&t->r, 3) * PAGE -
		       below(&t->r, 2);
	case 2:
	case 3:
		return 1 + below(&t->r, 8 * PAGE);
	case 4:
		return HUGE;
	default:
		return (1 + below(&t->r, 64)) * PAGE;
	}
}

static void op_alloc(struct thr *t)
{
	struct npu_mem_alloc *a = (void *)t->argbuf;
	int fd = some_devfd(t), i;
	uint64_t req;
	long ret;

	pthread_mutex_lock(&st.lock);
	req = st.live_bytes;
	pthread_mutex_unlock(&st.lock);

	memset(a, 0, sizeof(*a));
	a->size = alloc_size(t);
	/* Over budget: only sizes that cannot succeed, or small ones. */
	if (req > (64ULL << 20) && a->size > PAGE && a->size < (64ULL << 30))
		a->size = 1 + below(&t->r, PAGE);
	a->policy = chance(&t->r, 90) ? below(&t->r, 3) :
		    chance(&t->r, 50) ? NPU_MEM_POLICY_HUGE1G_ONLY : boundary32(&t->r);
	a->flags = chance(&t->r, 80) ? (chance(&t->r, 20) ? NPU_MEM_ALLOC_READONLY : 0) :
		   boundary32(&t->r);
	if (chance(&t->r, 5))
		a->pad = boundary32(&t->r);
	if (chance(&t->r, 5))
		a->handle = boundary32(&t->r);	/* out field: ignored */
	ret = ioctl(fd, NPU_MEM_IOCTL_ALLOC, a);
	record(OP_ALLOC, ret, errno, E_IOCTL, "fd %d size %#llx policy %u flags %#x pad %#x",
	       fd, (unsigned long long)a->size, a->policy, a->flags, a->pad);
	if (ret)
		return;
	if (!a->handle || a->buf.size < a->size || a->buf.size % PAGE ||
	    (a->buf.mmap_offset % PAGE) || a->policy >= NPU_MEM_POLICY_COUNT ||
	    (a->flags & ~NPU_MEM_ALLOC_VALID) || a->pad)
		finding("ALLOC accepted/returned nonsense: handle %u size %#llx -> %#llx policy %u flags %#x pad %#x",
			a->handle, (unsigned long long)a->size,
			(unsigned long long)a->buf.size, a->policy, a->flags, a->pad);
	pthread_mutex_lock(&st.lock);
	/* A free slot, or one holding a stale handle. */
	for (i = 0; i < MAX_BUFS && st.bufs[i].used && st.bufs[i].live; i++)
		;
	if (i < MAX_BUFS) {
		st.bufs[i] = (struct fz_buf){ true, true, fd, a->handle, a->buf.size,
					       a->buf.mmap_offset, a->buf.flags };
		st.live_bytes += a->buf.size;
		pthread_mutex_unlock(&st.lock);
	} else {
		pthread_mutex_unlock(&st.lock);
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ a->handle, 0 });
	}
}

static void op_free(struct thr *t)
{
	struct npu_mem_free *f = (void *)t->argbuf;
	int fd = some_devfd(t), slot;
	long ret;

	memset(f, 0, sizeof(*f));
	f->handle = some_handle(t, fd, &slot);
	if (chance(&t->r, 5))
		f->flags = boundary32(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_FREE, f);
	record(OP_FREE, ret, errno, E_IOCTL, "fd %d handle %u flags %#x", fd, f->handle, f->flags);
	if (ret == 0 && f->flags)
		finding("FREE accepted flags %#x", f->flags);
	if (ret == 0 && slot >= 0) {
		pthread_mutex_lock(&st.lock);
		if (st.bufs[slot].devfd == fd && st.bufs[slot].handle == f->handle)
			forget_buf(slot);
		pthread_mutex_unlock(&st.lock);
	}
}

static void op_query(struct thr *t)
{
	struct npu_mem_query *q = (void *)t->argbuf;
	int fd = some_devfd(t), slot;
	long ret;

	memset(q, 0, sizeof(*q));
	q->handle = some_handle(t, fd, &slot);
	if (chance(&t->r, 5))
		q->flags = boundary32(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_QUERY, q);
	record(OP_QUERY, ret, errno, E_IOCTL, "fd %d handle %u", fd, q->handle);
	if (ret == 0 && (q->buf.size % PAGE || !q->buf.size))
		finding("QUERY of handle %u: size %#llx", q->handle,
			(unsigned long long)q->buf.size);
}

static void op_sync(struct thr *t)
{
	struct npu_mem_sync *s = (void *)t->argbuf;
	int fd = some_devfd(t), slot;
	uint64_t size = 0;
	long ret;

	memset(s, 0, sizeof(*s));
	s->handle = some_handle(t, fd, &slot);
	if (slot >= 0) {
		pthread_mutex_lock(&st.lock);
		size = st.bufs[slot].size;
		pthread_mutex_unlock(&st.lock);
	}
	s->direction = chance(&t->r, 85) ? 1 + below(&t->r, 3) : boundary32(&t->r);
	switch (below(&t->r, 4)) {
	case 0:			/* all of it */
		s->offset = 0;
		s->length = size;
		break;
	case 1:			/* inside */
		s->offset = below(&t->r, size + 1);
		s->length = below(&t->r, size - s->offset + 1);
		break;
	case 2:			/* just past the end */
		s->offset = below(&t->r, size + 1);
		s->length = size - s->offset + 1 + below(&t->r, 2) * PAGE;
		break;
	default:
		s->offset = boundary64(&t->r);
		s->length = boundary64(&t->r);
	}
	if (chance(&t->r, 5))
		s->reserved = boundary64(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_SYNC, s);
	record(OP_SYNC, ret, errno, E_IOCTL, "fd %d handle %u dir %u off %#llx len %#llx",
	       fd, s->handle, s->direction, (unsigned long long)s->offset,
	       (unsigned long long)s->length);
	if (ret == 0 && (!s->length || s->reserved || s->direction < 1 ||
			 s->direction > 3 || s->offset + s->length < s->offset))
		finding("SYNC accepted dir %u off %#llx len %#llx reserved %#llx",
			s->direction, (unsigned long long)s->offset,
			(unsigned long long)s->length, (unsigned long long)s->reserved);
}

static int do_export(struct thr *t, int fd, uint32_t handle, int slot, bool keep)
{
	struct npu_mem_export *e = (void *)t->argbuf;
	uint64_t size = 0;
	bool ro = false;
	long ret;

	memset(e, 0, sizeof(*e));
	e->handle = handle;
	e->flags = chance(&t->r, 85) ? (uint32_t)(below(&t->r, 2) * O_CLOEXEC |
						  below(&t->r, 2) * O_RDWR) :
		   boundary32(&t->r);
	if (chance(&t->r, 5))
		e->pad = boundary32(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_EXPORT, e);
	record(keep ? OP_EXPORT : OP_EXPORT_CLOSE, ret, errno, E_IOCTL,
	       "fd %d handle %u flags %#x pad %#x", fd, e->handle, e->flags, e->pad);
	if (ret)
		return -1;
	if (e->flags & ~(O_CLOEXEC | O_RDWR) || e->pad)
		finding("EXPORT accepted flags %#x pad %#x", e->flags, e->pad);
	if (slot >= 0) {
		pthread_mutex_lock(&st.lock);
		size = st.bufs[slot].size;
		ro = st.bufs[slot].flags & NPU_MEM_BUF_READONLY;
		pthread_mutex_unlock(&st.lock);
	}
	if (keep)
		add_fd((int)e->fd, FD_DMABUF, size, ro);
	return (int)e->fd;
}

static void op_export(struct thr *t)
{
	int fd = some_devfd(t), slot;
	uint32_t h = some_handle(t, fd, &slot);

	do_export(t, fd, h, slot, true);
}

/* Export and close at once, racing whoever maps or imports the fd number. */
static void op_export_close(struct thr *t)
{
	int fd = some_devfd(t), slot, dfd;
	uint32_t h = some_handle(t, fd, &slot);

	dfd = do_export(t, fd, h, slot, false);
	if (dfd >= 0) {
		if (chance(&t->r, 50)) {
			void *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, dfd, 0);

			if (p != MAP_FAILED)
				munmap(p, PAGE);
		}
		close(dfd);
	}
}

/* Mutated ioctl numbers with sane-looking argument memory. */
static void op_raw_ioctl(struct thr *t)
{
	unsigned long cmd, dir, nr, size;
	int fd, s;
	long ret;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, chance(&t->r, 80) ? FD_DEV : FD_DMABUF);
	fd = s >= 0 ? st.fds[s].fd : -1;
	pthread_mutex_unlock(&st.lock);

	switch (below(&t->r, 5)) {
	case 0:			/* a real command with a wrong size */
	case 1:
		nr = below(&t->r, 6);
		dir = (unsigned long[]){ _IOC_READ | _IOC_WRITE, _IOC_READ | _IOC_WRITE,
					 _IOC_WRITE, _IOC_READ | _IOC_WRITE,
					 _IOC_WRITE, _IOC_READ | _IOC_WRITE }[nr];
		size = chance(&t->r, 50) ? below(&t->r, 200) : below(&t->r, 1 << 14);
		break;
	case 2:			/* right magic, wrong nr or direction */
		nr = chance(&t->r, 50) ? below(&t->r, 8) : below(&t->r, 256);
		dir = below(&t->r, 4);
		size = below(&t->r, 160);
		break;
	case 3:			/* right magic, everything random */
		nr = below(&t->r, 256);
		dir = below(&t->r, 4);
		size = below(&t->r, 1 << 14);
		break;
	default:		/* any number at all */
		cmd = (uint32_t)rnd(&t->r);
		goto call;
	}
	cmd = _IOC(dir, NPU_MEM_IOCTL_MAGIC, nr, size);
call:
	/* Argument: zeroes (valid-looking), or random bytes, sometimes with
	 * a non-zero tail past the v1 struct. */
	if (chance(&t->r, 50)) {
		memset(t->argbuf, 0, 512);
		if (chance(&t->r, 50))
			t->argbuf[below(&t->r, 512)] = (uint8_t)rnd(&t->r);
	} else {
		for (size = 0; size < 512; size += 8)
			*(uint64_t *)(t->argbuf + size) = chance(&t->r, 60) ? 0 : boundary64(&t->r);
	}
	ret = ioctl(fd, cmd, t->argbuf);
	record(OP_RAW_IOCTL, ret, errno, NULL, "fd %d cmd %#lx", fd, cmd);
	/* A successful ALLOC through a mutated number leaks unless freed:
	 * that is the test's business, not the driver's, but keep it tidy. */
	if (ret == 0 && _IOC_TYPE(cmd) == NPU_MEM_IOCTL_MAGIC && _IOC_NR(cmd) == 1) {
		struct npu_mem_alloc *a = (void *)t->argbuf;

		if (_IOC_SIZE(cmd) >= offsetof(struct npu_mem_alloc, pad))
			ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ a->handle, 0 });
	}
	if (ret == 0 && _IOC_TYPE(cmd) == NPU_MEM_IOCTL_MAGIC && _IOC_NR(cmd) == 5 &&
	    _IOC_SIZE(cmd) >= offsetof(struct npu_mem_export, pad))
		close((int)((struct npu_mem_export *)t->argbuf)->fd);
}

/* Valid command numbers, invalid argument pointers. */
static void op_bad_ptr(struct thr *t)
{
	static const unsigned long cmds[] = {
		NPU_MEM_IOCTL_GET_INFO, NPU_MEM_IOCTL_ALLOC, NPU_MEM_IOCTL_FREE,
		NPU_MEM_IOCTL_QUERY, NPU_MEM_IOCTL_SYNC, NPU_MEM_IOCTL_EXPORT,
	};
	unsigned long cmd = cmds[below(&t->r, 6)];
	size_t sz = _IOC_SIZE(cmd);
	int fd = some_devfd(t);
	void *arg;
	long ret;

	switch (below(&t->r, 6)) {
	case 0:
		arg = NULL;
		break;
	case 1:			/* straddles the guard page */
		arg = t->guard - 1 - below(&t->r, sz);
		memset(t->guard - sz, 0, sz);
		break;
	case 2:			/* read-only page: reads work, writes fault */
		arg = t->ropage + below(&t->r, 64) * 8;
		break;
	case 3:			/* kernel address */
		arg = (void *)(0xffff888000000000ULL + below(&t->r, 1 << 20) * PAGE);
		break;
	case 4:			/* non-canonical / random */
		arg = (void *)(uintptr_t)rnd(&t->r);
		break;
	default:		/* misaligned but valid */
		memset(t->argbuf, 0, 256);
		arg = t->argbuf + 1 + below(&t->r, 7);
		break;
	}
	ret = ioctl(fd, cmd, arg);
	record(OP_BAD_PTR, ret, errno, E_IOCTL, "fd %d cmd %#lx arg %p", fd, cmd, arg);
	if (ret == 0 && cmd == NPU_MEM_IOCTL_ALLOC)
		finding("ALLOC succeeded with a bad/zero argument at %p", arg);
	if (ret == 0 && cmd == NPU_MEM_IOCTL_EXPORT)
		close((int)((struct npu_mem_export *)arg)->fd);
}

static void add_map(uint8_t *p, size_t len, int prot)
{
	int i;

	/* What the kernel mapped: whole pages. */
	len = (len + PAGE - 1) & ~(PAGE - 1);
	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_MAPS && st.maps[i].used; i++)
		;
	if (i < MAX_MAPS) {
		st.maps[i] = (struct fz_map){ true, p, len, prot };
		p = NULL;
	}
	pthread_mutex_unlock(&st.lock);
	if (p)
		munmap(p, len);
}

static int rand_prot(struct thr *t)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	return prots[below(&t->r, sizeof(prots) / sizeof(prots[0]))];
}

static void op_mmap(struct thr *t)
{
	int fd = some_devfd(t), slot, prot = rand_prot(t);
	int flags = chance(&t->r, 90) ? MAP_SHARED : MAP_PRIVATE;
	uint64_t off = 0, size = PAGE, len;
	uint8_t *p;

	some_handle(t, fd, &slot);
	if (slot >= 0) {
		pthread_mutex_lock(&st.lock);
		off = st.bufs[slot].offset;
		size = st.bufs[slot].size;
		pthread_mutex_unlock(&st.lock);
	}
	switch (below(&t->r, 6)) {
	case 0:
	case 1:
		len = size;
		break;
	case 2:			/* a piece */
		off += below(&t->r, size / PAGE) * PAGE;
		len = PAGE * (1 + below(&t->r, 4));
		break;
	case 3:			/* past the end */
		len = size + PAGE * (1 + below(&t->r, 2));
		break;
	case 4:
		off = boundary64(&t->r) & ~(PAGE - 1);
		len = PAGE * (1 + below(&t->r, 16));
		break;
	default:
		len = boundary64(&t->r);
		break;
	}
	if (chance(&t->r, 10))
		flags |= MAP_POPULATE;
	if (chance(&t->r, 5))
		flags |= MAP_NORESERVE | MAP_LOCKED;
	p = mmap(NULL, len, prot, flags, fd, (off_t)off);
	record(OP_MMAP, p == MAP_FAILED ? -1 : 0, errno, E_MMAP,
	       "fd %d off %#llx len %#llx prot %#x flags %#x", fd,
	       (unsigned long long)off, (unsigned long long)len, prot, flags);
	if (p != MAP_FAILED) {
		if (flags & MAP_PRIVATE)
			finding("MAP_PRIVATE mapping of the device succeeded");
		add_map(p, len, prot);
	}
}

static void op_mmap_dmabuf(struct thr *t)
{
	int s, fd, prot = rand_prot(t);
	uint64_t size, off, len;
	uint8_t *p;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, FD_DMABUF);
	fd = s >= 0 ? st.fds[s].fd : -1;
	size = s >= 0 ? st.fds[s].size : PAGE;
	pthread_mutex_unlock(&st.lock);
	if (s < 0)
		return;
	switch (below(&t->r, 4)) {
	case 0:
	case 1:
		off = 0;
		len = size ? size : PAGE;
		break;
	case 2:
		off = below(&t->r, size / PAGE + 2) * PAGE;
		len = PAGE * (1 + below(&t->r, 4));
		break;
	default:
		off = boundary64(&t->r) & ~(PAGE - 1);
		len = boundary64(&t->r);
	}
	p = mmap(NULL, len, prot, chance(&t->r, 90) ? MAP_SHARED : MAP_PRIVATE, fd, (off_t)off);
	record(OP_MMAP_DMABUF, p == MAP_FAILED ? -1 : 0, errno, E_MMAP,
	       "fd %d off %#llx len %#llx prot %#x", fd, (unsigned long long)off,
	       (unsigned long long)len, prot);
	if (p != MAP_FAILED)
		add_map(p, len, prot);
}

static int pick_map(struct thr *t)
{
	int i, n = 0, cand[MAX_MAPS];

	for (i = 0; i < MAX_MAPS; i++)
		if (st.maps[i].used)
			cand[n++] = i;
	return n ? cand[below(&t->r, n)] : -1;
}

static void op_munmap(struct thr *t)
{
	struct fz_map m;
	size_t pages, first, n;
	long ret;
	int i;

	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	pages = m.len / PAGE;
	if (pages > 2 && chance(&t->r, 40)) {
		/* Punch a hole or cut an end: split the VMA. */
		first = below(&t->r, pages);
		n = 1 + below(&t->r, pages - first);
		ret = munmap(m.addr + first * PAGE, n * PAGE);
		if (ret == 0) {
			/* Keep the larger remaining piece in the table; the
			 * other piece stays mapped until the final cleanup
			 * (recorded as a separate entry when there is room). */
			size_t head = first, tail = pages - first - n;

			if (head >= tail) {
				st.maps[i].len = head * PAGE;
				if (tail) {
					pthread_mutex_unlock(&st.lock);
					add_map(m.addr + (first + n) * PAGE, tail * PAGE, m.prot);
					pthread_mutex_lock(&st.lock);
				}
			} else {
				st.maps[i].addr = m.addr + (first + n) * PAGE;
				st.maps[i].len = tail * PAGE;
				if (head) {
					pthread_mutex_unlock(&st.lock);
					add_map(m.addr, head * PAGE, m.prot);
					pthread_mutex_lock(&st.lock);
				}
			}
			if (!st.maps[i].len)
				st.maps[i].used = false;
		}
	} else {
		ret = munmap(m.addr, m.len);
		if (ret == 0)
			st.maps[i].used = false;
	}
	pthread_mutex_unlock(&st.lock);
	record(OP_MUNMAP, ret, errno, E_MM, "munmap");
}

static void op_mremap(struct thr *t)
{
	struct fz_map m;
	size_t nlen;
	void *p, *target = NULL;
	int i, mode = below(&t->r, 4);

	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	switch (mode) {
	case 0:			/* shrink in place */
		nlen = m.len > PAGE ? PAGE * (1 + below(&t->r, m.len / PAGE - 1)) : m.len;
		p = mremap(m.addr, m.len, nlen, 0);
		break;
	case 1:			/* grow: VM_DONTEXPAND must refuse */
		nlen = m.len + PAGE * (1 + below(&t->r, 4));
		p = mremap(m.addr, m.len, nlen, MREMAP_MAYMOVE);
		break;
	case 2:			/* move to a fresh place */
		nlen = m.len;
		target = mmap(NULL, nlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (target == MAP_FAILED) {
			pthread_mutex_unlock(&st.lock);
			return;
		}
		p = mremap(m.addr, m.len, nlen, MREMAP_MAYMOVE | MREMAP_FIXED, target);
		break;
	default:		/* keep the old one too (DONTUNMAP) */
		nlen = m.len;
		p = mremap(m.addr, m.len, nlen, MREMAP_MAYMOVE | 4 /* MREMAP_DONTUNMAP */);
		break;
	}
	if (p != MAP_FAILED) {
		if (mode == 1)
			finding("mremap grew a mapping of the device (VM_DONTEXPAND)");
		if (mode == 3) {
			/* Both stay mapped: track the new one too. */
			pthread_mutex_unlock(&st.lock);
			add_map(p, nlen, m.prot);
			pthread_mutex_lock(&st.lock);
		} else {
			st.maps[i].addr = p;
			st.maps[i].len = nlen;
		}
	} else if (target && target != MAP_FAILED) {
		munmap(target, nlen);
	}
	pthread_mutex_unlock(&st.lock);
	record(OP_MREMAP, p == MAP_FAILED ? -1 : 0, errno, E_MM, "mremap mode %d", mode);
}

static void op_mprotect(struct thr *t)
{
	struct fz_map m;
	int i, prot = rand_prot(t);
	long ret;

	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	ret = mprotect(m.addr, m.len, prot);
	if (ret == 0)
		st.maps[i].prot = prot;
	pthread_mutex_unlock(&st.lock);
	record(OP_MPROTECT, ret, errno, E_MM, "mprotect %#x", prot);
}

static void op_madvise(struct thr *t)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTFORK,
		MADV_DOFORK, MADV_MERGEABLE, MADV_UNMERGEABLE, MADV_HUGEPAGE,
		MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK,
		MADV_KEEPONFORK, 20 /* COLD */, 21 /* PAGEOUT */,
		22 /* POPULATE_READ */, 23 /* POPULATE_WRITE */,
		25 /* COLLAPSE */,
	};
	struct fz_map m;
	int i, adv;
	size_t off, len;
	long ret;

	adv = chance(&t->r, 95) ? advice[below(&t->r, sizeof(advice) / sizeof(advice[0]))] :
	      (int)below(&t->r, 128);
	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	off = below(&t->r, m.len / PAGE) * PAGE;
	len = chance(&t->r, 50) ? m.len - off : PAGE;
	ret = madvise(m.addr + off, len, adv);
	pthread_mutex_unlock(&st.lock);
	/* madvise can say nearly anything for a device mapping; the kernel's
	 * reports are what matter here. */
	record(OP_MADVISE, ret, errno, (const int[]){ EINVAL, ENOMEM, EFAULT, EACCES,
		EAGAIN, EPERM, EBUSY, EOPNOTSUPP, EIO, EHWPOISON, ENODEV, 0 }, "madvise %d", adv);
}

/* Read or write a few bytes of a mapping, surviving SIGSEGV/SIGBUS. */
static void op_touch(struct thr *t)
{
	sigjmp_buf jb;
	struct fz_map m;
	volatile uint8_t *p;
	int i, sig;
	bool wr;

	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	wr = (m.prot & PROT_WRITE) && chance(&t->r, 50);
	p = m.addr + below(&t->r, m.len);
	sig = sigsetjmp(jb, 1);
	if (!sig) {
		probe_jmp = &jb;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (wr)
			*p = (uint8_t)rnd(&t->r);
		else
			(void)*p;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_jmp = NULL;
	pthread_mutex_unlock(&st.lock);
	/* PROT_NONE mappings fault, and so may a range another thread
	 * mprotect()ed a moment ago: counted, not a finding. */
	record(OP_TOUCH, sig ? -1 : 0, sig, NULL, "touch");
}

static void op_pipe_io(struct thr *t)
{
	struct fz_map m;
	struct iovec iov;
	char sink[4096];
	long ret;
	int i;

	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	iov.iov_base = m.addr + below(&t->r, m.len / PAGE) * PAGE;
	iov.iov_len = PAGE;
	/* vmsplice takes page references (GUP); write copies. */
	if (chance(&t->r, 50))
		ret = vmsplice(t->pipefd[1], &iov, 1, SPLICE_F_NONBLOCK);
	else
		ret = write(t->pipefd[1], iov.iov_base, iov.iov_len);
	pthread_mutex_unlock(&st.lock);
	record(OP_PIPE_IO, ret, errno, (const int[]){ EFAULT, EAGAIN, ENOMEM, 0 }, "pipe");
	while (read(t->pipefd[0], sink, sizeof(sink)) > 0)
		;
}

static void op_vm_readv(struct thr *t)
{
	struct iovec local, remote;
	struct fz_map m;
	long ret;
	int i;

	pthread_mutex_lock(&st.lock);
	i = pick_map(t);
	if (i < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	m = st.maps[i];
	remote.iov_base = m.addr;
	remote.iov_len = m.len < 8192 ? m.len : 8192;
	local.iov_base = t->argbuf;
	local.iov_len = remote.iov_len;
	ret = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	pthread_mutex_unlock(&st.lock);
	record(OP_VM_READV, ret, errno, (const int[]){ EFAULT, ENOMEM, 0 }, "process_vm_readv");
}

static void op_dmabuf_ioctl(struct thr *t)
{
	struct dma_buf_sync sync;
	struct dma_buf_export_sync_file esf;
	int s, fd;
	long ret;
	char name[40];

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, FD_DMABUF);
	fd = s >= 0 ? st.fds[s].fd : -1;
	pthread_mutex_unlock(&st.lock);
	if (s < 0)
		return;
	switch (below(&t->r, 5)) {
	case 0:
	case 1:
		sync.flags = chance(&t->r, 85) ?
			(below(&t->r, 2) ? DMA_BUF_SYNC_END : DMA_BUF_SYNC_START) |
			(1 + below(&t->r, 3)) : boundary64(&t->r);
		ret = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
		break;
	case 2:
		snprintf(name, sizeof(name), "fuzz-%llu", (unsigned long long)below(&t->r, 1000));
		ret = ioctl(fd, DMA_BUF_SET_NAME_B, name);
		break;
	case 3:
		esf.flags = chance(&t->r, 80) ? 1 + below(&t->r, 3) : boundary32(&t->r);
		esf.fd = -1;
		ret = ioctl(fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &esf);
		if (ret == 0)
			close(esf.fd);
		break;
	default:		/* dma-bufs report their size through SEEK_END */
		ret = lseek(fd, 0, chance(&t->r, 50) ? SEEK_END : SEEK_SET);
		ret = ret < 0 ? -1 : 0;
		break;
	}
	record(OP_DMABUF_IOCTL, ret, errno, (const int[]){ EINVAL, EFAULT, ENOTTY, EBADF,
		ENOMEM, EBUSY, ESPIPE, 0 }, "dma-buf fd %d", fd);
}

/*
 * fork: the child works on the inherited fds with raw syscalls only (no
 * locks, no malloc: another thread may have held them at fork time), then
 * exits; its mappings of the device are not inherited (VM_DONTCOPY) unless
 * MADV_DOFORK turned that off.
 */
static void op_fork(struct thr *t)
{
	int fds[MAX_FDS], n = 0, i, status;
	pid_t pid;

	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_FDS; i++)
		if (st.fds[i].kind == FD_DEV)
			fds[n++] = st.fds[i].fd;
	pthread_mutex_unlock(&st.lock);

	pid = fork();
	if (pid == 0) {
		struct rng r = { t->r.s ^ 0x5555 };
		struct npu_mem_alloc a;
		int k;

		alarm(20);
		for (k = 0; k < 16 && n; k++) {
			int fd = fds[below(&r, n)];

			memset(&a, 0, sizeof(a));
			a.size = (1 + below(&r, 3)) * (chance(&r, 30) ? HUGE : PAGE);
			a.policy = below(&r, 3);
			if (ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == 0) {
				void *p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE,
					       MAP_SHARED, fd, (off_t)a.buf.mmap_offset);

				if (p != MAP_FAILED) {
					((volatile char *)p)[0] = 1;
					if (chance(&r, 50))
						munmap(p, a.buf.size);
				}
				if (chance(&r, 70))
					ioctl(fd, NPU_MEM_IOCTL_FREE,
					      &(struct npu_mem_free){ a.handle, 0 });
			}
			if (chance(&r, 20))
				close(fd);
		}
		_exit(0);
	}
	record(OP_FORK, pid, errno, (const int[]){ EAGAIN, ENOMEM, 0 }, "fork");
	if (pid > 0) {
		if (waitpid(pid, &status, 0) == pid &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			atomic_fetch_add(&children_bad, 1);
			finding("fork child ended with status %#x", status);
		}
	}
}

static void op_proc_read(struct thr *t)
{
	static const char *const files[] = {
		"/proc/self/smaps", "/proc/self/maps", "/proc/self/status",
		"/sys/kernel/debug/npu_mem/clients", "/sys/kernel/debug/npu_mem/usage",
		"/proc/self/pagemap",
	};
	char path[64];
	int fd, s, which = below(&t->r, 7);
	long ret;

	if (which == 6) {
		pthread_mutex_lock(&st.lock);
		s = pick_fd(&t->r, chance(&t->r, 70) ? FD_DEV : FD_DMABUF);
		fd = s >= 0 ? st.fds[s].fd : 3;
		pthread_mutex_unlock(&st.lock);
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	} else {
		snprintf(path, sizeof(path), "%s", files[which]);
	}
	/* O_CLOEXEC|O_RDONLY: even if another thread mmaps this fd number
	 * by mistake, nothing can be written through it. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		record(OP_PROC_READ, -1, errno, NULL, "%s", path);
		return;
	}
	if (which == 5) {
		ret = pread(fd, t->argbuf, 4096, (off_t)(below(&t->r, 1ULL << 35) / PAGE * 8));
	} else {
		while ((ret = read(fd, t->argbuf, 4096)) > 0)
			;
	}
	close(fd);
	record(OP_PROC_READ, ret, errno, (const int[]){ ENOENT, EFAULT, EINVAL, 0 }, "%s", path);
}

/* read/write/poll-ish calls the device does not implement. */
static void op_file_io(struct thr *t)
{
	int fd = some_devfd(t);
	long ret;

	switch (below(&t->r, 3)) {
	case 0:
		ret = read(fd, t->argbuf, below(&t->r, 64));
		break;
	case 1:
		ret = write(fd, t->argbuf, below(&t->r, 64));
		break;
	default:
		ret = lseek(fd, (off_t)boundary64(&t->r), SEEK_SET);
		ret = ret < 0 ? -1 : 0;
	}
	record(OP_FILE_IO, ret, errno, NULL, "fd %d", fd);
}

static void (*const op_fn[OP_COUNT])(struct thr *) = {
	[OP_OPEN] = op_open, [OP_CLOSE] = op_close, [OP_DUP] = op_dup,
	[OP_GET_INFO] = op_get_info, [OP_ALLOC] = op_alloc, [OP_FREE] = op_free,
	[OP_QUERY] = op_query, [OP_SYNC] = op_sync, [OP_EXPORT] = op_export,
	[OP_EXPORT_CLOSE] = op_export_close, [OP_RAW_IOCTL] = op_raw_ioctl,
	[OP_BAD_PTR] = op_bad_ptr, [OP_MMAP] = op_mmap,
	[OP_MMAP_DMABUF] = op_mmap_dmabuf, [OP_MUNMAP] = op_munmap,
	[OP_MREMAP] = op_mremap, [OP_MPROTECT] = op_mprotect,
	[OP_MADVISE] = op_madvise, [OP_TOUCH] = op_touch,
	[OP_PIPE_IO] = op_pipe_io, [OP_VM_READV] = op_vm_readv,
	[OP_DMABUF_IOCTL] = op_dmabuf_ioctl, [OP_FORK] = op_fork,
	[OP_PROC_READ] = op_proc_read, [OP_FILE_IO] = op_file_io,
};

static unsigned int weight_sum;

static enum op pick_op(struct rng *r)
{
	unsigned int x = below(r, weight_sum), i;

	for (i = 0; i < OP_COUNT; i++) {
		if (x < op_weight[i])
			return i;
		x -= op_weight[i];
	}
	return OP_GET_INFO;
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;

	while (!atomic_load(&stop)) {
		enum op op = pick_op(&t->r);

		if (verbose > 1)
			printf("t%d %s\n", t->idx, op_names[op]);
		op_fn[op](t);
		if ((max_calls && atomic_load(&total_calls) >= max_calls) ||
		    now() >= deadline)
			atomic_store(&stop, true);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setup, cleanup, invariants                                           */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static uint64_t vmpin_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int read_param(uint64_t *v)
{
	char buf[64];
	int fd = open(PARAM_MAX_BYTES, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*v = strtoull(buf, NULL, 0);
	return 0;
}

static int write_param(uint64_t v)
{
	char buf[32];
	int fd = open(PARAM_MAX_BYTES, O_WRONLY | O_CLOEXEC), n, ok;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

static void cleanup_all(void)
{
	int i;

	for (i = 0; i < MAX_MAPS; i++)
		if (st.maps[i].used) {
			munmap(st.maps[i].addr, st.maps[i].len);
			st.maps[i].used = false;
		}
	for (i = 0; i < MAX_FDS; i++)
		if (st.fds[i].kind != FD_FREE) {
			close(st.fds[i].fd);
			st.fds[i].kind = FD_FREE;
		}
}

static void usage(void)
{
	fprintf(stderr, "usage: npu_mem_fuzz [-s SEED] [-t SECONDS] [-n CALLS] "
		"[-j THREADS] [-m MAXBYTES] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seed = env_u64("NPU_MEM_FUZZ_SEED", 1);
	double secs = (double)env_u64("NPU_MEM_FUZZ_SECONDS", 20);
	unsigned int nthreads = env_u64("NPU_MEM_FUZZ_THREADS", 4), i, k;
	uint64_t maxbytes = env_u64("NPU_MEM_FUZZ_MAXBYTES", 256ULL << 20);
	uint64_t old_param = 0, pin0, pin1;
	struct thr thr[MAX_THREADS];
	struct sigaction sa;
	struct npu_mem_info info;
	bool param_set = false;
	double t0, elapsed;
	int opt, fd;

	max_calls = env_u64("NPU_MEM_FUZZ_CALLS", 0);
	while ((opt = getopt(argc, argv, "s:t:n:j:m:vh")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': secs = strtod(optarg, NULL); break;
		case 'n': max_calls = strtoull(optarg, NULL, 0); break;
		case 'j': nthreads = strtoul(optarg, NULL, 0); break;
		case 'm': maxbytes = strtoull(optarg, NULL, 0); break;
		case 'v': verbose++; break;
		default: usage();
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (access(DEV_PATH, F_OK)) {
		printf("no %s: npu_mem not loaded\n", DEV_PATH);
		return 77;
	}
	/* Every fd >= 3 must be ours (device, dma-buf, pipe, proc file). */
	syscall(SYS_close_range, 3U, ~0U, 0U);

	for (i = 0; i < OP_COUNT; i++)
		weight_sum += op_weight[i];
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (maxbytes && read_param(&old_param) == 0 && write_param(maxbytes) == 0)
		param_set = true;
	pin0 = vmpin_kb();
	printf("npu_mem_fuzz: seed %llu, %u threads, %.0f s, %llu calls max, max_bytes %s\n",
	       (unsigned long long)seed, nthreads, secs, (unsigned long long)max_calls,
	       param_set ? "lowered" : "unchanged");

	for (i = 0; i < 3; i++) {
		fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			printf("open %s: %s\n", DEV_PATH, strerror(errno));
			return 1;
		}
		add_fd(fd, FD_DEV, 0, false);
	}

	for (i = 0; i < nthreads; i++) {
		struct thr *t = &thr[i];
		uint8_t *mem;

		t->idx = i;
		t->r.s = seed * 0x100000001b3ULL + i * 0x9e3779b97f4a7c15ULL + 1;
		mem = mmap(NULL, ARGBUF + 2 * PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return 1;
		t->argbuf = mem;
		t->guard = mem + ARGBUF;	/* PROT_NONE page */
		t->ropage = mem + ARGBUF + PAGE;
		mprotect(t->guard, PAGE, PROT_NONE);
		memset(t->ropage, 0, PAGE);
		mprotect(t->ropage, PAGE, PROT_READ);
		if (pipe2(t->pipefd, O_CLOEXEC | O_NONBLOCK))
			return 1;
	}

	t0 = now();
	deadline = t0 + secs;
	if (nthreads == 1) {
		thread_main(&thr[0]);
	} else {
		for (i = 0; i < nthreads; i++)
			pthread_create(&thr[i].tid, NULL, thread_main, &thr[i]);
		for (i = 0; i < nthreads; i++)
			pthread_join(thr[i].tid, NULL);
	}
	elapsed = now() - t0;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;

	/* ---- everything released: the driver must be back at zero ---- */
	cleanup_all();
	for (i = 0; i < nthreads; i++) {
		close(thr[i].pipefd[0]);
		close(thr[i].pipefd[1]);
	}
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	memset(&info, 0, sizeof(info));
	/* Releases from exiting children and deferred fputs settle quickly. */
	for (k = 0; k < 50; k++) {
		if (ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) == 0 && !info.buffers &&
		    !info.allocated_bytes)
			break;
		usleep(100000);
	}
	if (info.buffers || info.allocated_bytes || info.huge_pages || info.normal_pages) {
		finding("after closing everything: %llu buffers, %llu bytes, %llu huge, %llu normal pages still counted",
			(unsigned long long)info.buffers,
			(unsigned long long)info.allocated_bytes,
			(unsigned long long)info.huge_pages,
			(unsigned long long)info.normal_pages);
		/* Who holds them: a client (open file), a mapping, an fd? */
		fflush(stdout);
		if (system("echo '-- clients:'; cat /sys/kernel/debug/npu_mem/clients; "
			   "echo '-- mappings of npu-mem and dma-bufs:'; "
			   "grep -e npu-mem -e dmabuf /proc/$PPID/maps | head -20; "
			   "echo '-- fds:'; ls -l /proc/$PPID/fd") != 0)
			printf("(diagnostics failed)\n");
	}
	close(fd);
	pin1 = vmpin_kb();
	if (pin1 != pin0)
		finding("VmPin %llu kB after closing everything, %llu kB before",
			(unsigned long long)pin1, (unsigned long long)pin0);
	if (param_set)
		write_param(old_param);

	printf("\n%-18s %10s %10s  errors (errno: count)\n", "operation", "calls", "ok");
	for (i = 0; i < OP_COUNT; i++) {
		printf("%-18s %10lu %10lu ", op_names[i], atomic_load(&stats[i].calls),
		       atomic_load(&stats[i].ok));
		for (k = 0; k < NERR; k++) {
			unsigned long n = atomic_load(&stats[i].err[k]);

			if (!n)
				continue;
			if (i == OP_TOUCH)
				printf(" %s:%lu", k ? strsignal(k) : "?", n);
			else
				printf(" %s:%lu", k ? strerrorname_np(k) ?: "?" : "?", n);
		}
		printf("\n");
	}
	printf("npu_mem_fuzz: %s: %lu calls in %.1f s (seed %llu, %u threads), %lu findings\n",
	       atomic_load(&findings) ? "FAIL" : "PASS", atomic_load(&total_calls),
	       elapsed, (unsigned long long)seed, nthreads, atomic_load(&findings));
	return atomic_load(&findings) ? 1 : 0;
}
