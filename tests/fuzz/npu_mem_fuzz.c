// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu_mem_fuzz: an ioctl/mmap fuzzer for /dev/npu-mem.
 *
 *   npu_mem_fuzz [-s SEED] [-t SECONDS] [-n CALLS] [-j THREADS] [-R THREADS]
 *                [-m MAXBYTES] [-v]
 *
 * Several threads share a pool of device fds, dma-buf fds, handles (live,
 * freed and invented ones) and CPU mappings, and throw at the driver:
 *  - its six ioctls with field values biased toward boundaries (0, 1, page
 *    and huge-page sizes, 2^n +/- 1, UINT32_MAX, UINT64_MAX), wrong
 *    pad/reserved/flags words, live, freed and random handles, and the
 *    handles and mmap offsets the driver will hand out next (handles are
 *    sequential, so any thread can name a buffer while it is being made);
 *  - ALLOC for a device index among the NPUs GET_INFO counts, one past
 *    them and far beyond; PEER_MAP, PEER_UNMAP and PEER_QUERY of live,
 *    freed and invented handles for the same indices (the buffer's own
 *    one included), with wrong flags/pad/reserved now and then, racing
 *    FREE, close and each other;
 *  - IPC_EXPORT/SET_PIDS/IMPORT/REVOKE with the keys the driver gave it,
 *    keys one bit off and invented ones (zero, all ones, KEY64-shaped),
 *    from the exporting file and from others, racing FREE, close and each
 *    other; imported handles join the pool the other operations use;
 *  - mutated ioctl numbers: the right magic with a wrong nr, direction or
 *    size (including sizes larger than the struct, with zero or non-zero
 *    tails), fully random numbers, and argument pointers that are NULL,
 *    unmapped, kernel addresses, read-only, or straddle a guard page;
 *  - mmap of the device and of dma-bufs at live, stale and random offsets and
 *    lengths, every prot, shared and private; munmap of pieces (VMA splits),
 *    mremap (shrink, grow, move), mprotect, madvise (every advice), touching
 *    the mappings, vmsplice/write from them into a pipe, process_vm_readv;
 *  - HOST_REGISTER of fresh anonymous mappings of its own (private or
 *    shared, read-only now and then; pieces of them, ranges running past
 *    them, unaligned ones), unmapped right after so that registrations
 *    outlive their memory, and of garbage addresses and sizes, for any
 *    NPU index, valid or not, with a bad pad now and then; the handles
 *    join the pool;
 *  - DMABUF_IMPORT of its own npu-mem dma-bufs, of other drivers' dma-bufs
 *    it made at start (system dma-heap, one of them opened read-only, and
 *    udmabuf: where the kernel has them), of the device file itself and of
 *    random fd numbers, for any NPU index, valid or not, with bad flags
 *    now and then; the handles it gets join the pool;
 *  - read-only access end to end: EXPORT without O_RDWR of a buffer of its
 *    own, the dma-buf's mmap and mprotect with PROT_WRITE, its DMABUF_IMPORT
 *    (a READONLY handle) and that handle's mmap, mprotect, EXPORT O_RDWR and
 *    IPC key; or the same for the read-only heap dma-buf; the fd and
 *    handles join the pools;
 *  - close, dup, export-and-close, DMA_BUF_IOCTL_* on dma-bufs, fork (the
 *    child allocates, maps and frees on inherited fds, then exits), reads of
 *    fdinfo, smaps and the driver's debugfs files - all racing each other;
 *  - as root, writes of the zero reserve's watermarks (zero_reserve_low_mb,
 *    zero_reserve_high_mb: 0..64 MiB per node), so that its thread fills
 *    and drains while ALLOC takes chunks and FREE recycles them.
 *
 * Race mode (-R, default 2 threads; 0 turns it off): a child process, as an
 * unprivileged user when started as root in a test guest (VM_RUN=1: the node
 * is made 0666 meanwhile, since privileges are the opener's), races PAIRS
 * of operations on the SAME handle of one open file: ALLOC, FREE, QUERY,
 * SYNC, EXPORT, mmap, munmap and close; and HOST_REGISTER of pieces of a
 * range against mmap(MAP_FIXED) of pieces of it as another kind of memory
 * (anonymous, shared, read-only, PROT_NONE, a file, npu-mem's own).  Every
 * pair (55, both operations the same included) races in each pass, in a shuffled order, for a round of a
 * fraction of a second in which each thread repeats its operation on the
 * newest handle or on the next one; pairs with ALLOC race 3 times as long,
 * ALLOC against FREE 30 times (a handle made and unmade at once is the
 * narrowest window).  Random interleavings of unrelated calls seldom hit a
 * window a few instructions wide; two threads hammering one handle do.  On
 * one CPU that takes the pair's thread being preempted inside the window
 * and the other one running next, so the race process runs at nice -10
 * (when root) to hold most of the CPU against the random threads.
 *
 * The kernel is the main oracle (KASAN, lockdep, kmemleak, DMA-API debugging
 * and WARNINGs fail the guest); the fuzzer itself checks that
 *  - every ioctl's error is one the UAPI header documents for that ioctl
 *    (plus EBADF/ENOTTY/ENODEV when the fd number was not, or may no longer
 *    have been, an npu-mem file);
 *  - read-only dma-bufs and handles never map writable (mmap PROT_WRITE
 *    and mprotect: EACCES, exactly, where the call is judged), EXPORT
 *    without O_RDWR gives a read-only file, an import's READONLY flag is
 *    its dma-buf file's access, an IPC key keeps it, and EXPORT O_RDWR of
 *    a READONLY handle is EACCES;
 *  - a race-mode HOST_REGISTER that no remap overlapped gives exactly the
 *    header's answer for the kinds of memory under its range;
 *  - every ALLOC and QUERY answer follows the header's rules
 *    (tests/common/nmtest_bufcheck.h: size rounding, policy, page counts,
 *    flags, mmap offset, device address), and equals ALLOC's answer when a
 *    QUERY names a buffer whose ALLOC it saw;
 *  - the process survives, and after closing everything the driver's
 *    counters (GET_INFO) and VmPin are back at zero, and with both
 *    watermarks set to 0 the reserve drains to 0 bytes (the watermarks
 *    are then restored).
 * A violation is a finding; the first few of each kind are printed.
 *
 * Replay: every thread draws from its own generator seeded from SEED and its
 * index, so with -j 1 -R 0 a seed replays the exact call sequence; with
 * several threads the per-thread sequences replay but their interleaving
 * does not.  Defaults come from NPU_MEM_FUZZ_{SEED,SECONDS,CALLS,THREADS,
 * RACE,MAXBYTES} (seed 1, 20 s, no call limit, 4 threads, 2 race threads,
 * 256 MiB), so run-suites.sh can run it without arguments.  While it runs,
 * the module parameter max_bytes is lowered to MAXBYTES (restored at exit)
 * so that boundary sizes cannot take the whole guest's memory.
 *
 * Output: calls executed per operation (ok / failed, errnos seen), for the
 * race mode per operation and pair; the last line is "npu_mem_fuzz: PASS
 * ..." or "npu_mem_fuzz: FAIL ...".  Exit 0, 1 on a finding, 77 when
 * /dev/npu-mem does not exist.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/magic.h>
#include <linux/npu_mem.h>
#include <linux/udmabuf.h>

#include "nmtest_bufcheck.h"
#include "nmtest_sys.h"

#define DEV_PATH	"/dev/" NPU_MEM_DEVICE_NAME
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
	bool readonly;		/* dma-buf: its file has no write access
				 * (EXPORT without O_RDWR) */
	uint64_t id;		/* which open() (fd numbers are reused) */
	/* device: the newest ALLOC through this entry, to predict the next */
	uint32_t last_handle;
	uint64_t next_off;
};

struct fz_buf {
	bool used;
	bool live;		/* false: freed (a stale handle to try) */
	int devfd;		/* the fd the handle belongs to (may be closed) */
	uint32_t handle;
	uint64_t size;
	uint64_t offset;
	uint32_t flags;
	uint64_t fdid;		/* fz_fd.id of devfd when it was allocated */
	struct npu_mem_buffer desc;	/* ALLOC's answer, for QUERY */
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
	uint64_t next_fd_id;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What an answer of the driver must say about the device layout: hidden
 * without an IOMMU unless the opener had CAP_SYS_ADMIN (set in main). */
static bool main_hidden;
/* NPUs the module serves (GET_INFO device_count, set in main). */
static unsigned int npu_count = 1;
static dev_t npu_rdev;

/* ------------------------------------------------------------------ */
/* Statistics                                                           */

enum op {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_GET_INFO, OP_ALLOC, OP_FREE, OP_QUERY,
	OP_SYNC, OP_EXPORT, OP_EXPORT_CLOSE, OP_RAW_IOCTL, OP_BAD_PTR,
	OP_MMAP, OP_MMAP_DMABUF, OP_MUNMAP, OP_MREMAP, OP_MPROTECT, OP_MADVISE,
	OP_TOUCH, OP_PIPE_IO, OP_VM_READV, OP_DMABUF_IOCTL, OP_FORK,
	OP_PROC_READ, OP_FILE_IO, OP_PREDICT, OP_DMABUF_IMPORT,
	OP_HOST_REGISTER, OP_READONLY,
	OP_IPC_EXPORT, OP_IPC_SET_PIDS, OP_IPC_IMPORT, OP_IPC_REVOKE,
	OP_PEER,
	OP_ZERO_RESERVE,
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"open", "close", "dup", "get_info", "alloc", "free", "query", "sync",
	"export", "export+close", "raw_ioctl", "bad_pointer", "mmap",
	"mmap_dmabuf", "munmap", "mremap", "mprotect", "madvise", "touch",
	"pipe_io", "process_vm_readv", "dmabuf_ioctl", "fork", "proc_read",
	"read/write", "next_handle", "dmabuf_import", "host_register",
	"readonly", "ipc_export", "ipc_set_pids", "ipc_import", "ipc_revoke",
	"peer",
	"zero_reserve",
};

/* Relative weights: ioctls first, mappings next, process-level rarer. */
static const unsigned int op_weight[OP_COUNT] = {
	[OP_OPEN] = 3, [OP_CLOSE] = 2, [OP_DUP] = 2, [OP_GET_INFO] = 4,
	[OP_ALLOC] = 18, [OP_FREE] = 10, [OP_QUERY] = 6, [OP_SYNC] = 8,
	[OP_EXPORT] = 5, [OP_EXPORT_CLOSE] = 3, [OP_RAW_IOCTL] = 12,
	[OP_BAD_PTR] = 5, [OP_MMAP] = 12, [OP_MMAP_DMABUF] = 5, [OP_MUNMAP] = 6,
	[OP_MREMAP] = 3, [OP_MPROTECT] = 3, [OP_MADVISE] = 5, [OP_TOUCH] = 6,
	[OP_PIPE_IO] = 2, [OP_VM_READV] = 2, [OP_DMABUF_IOCTL] = 5,
	[OP_FORK] = 1, [OP_PROC_READ] = 2, [OP_FILE_IO] = 1, [OP_PREDICT] = 8,
	[OP_DMABUF_IMPORT] = 5, [OP_HOST_REGISTER] = 5, [OP_READONLY] = 3,
	[OP_IPC_EXPORT] = 5, [OP_IPC_SET_PIDS] = 3, [OP_IPC_IMPORT] = 6,
	[OP_IPC_REVOKE] = 3, [OP_PEER] = 8, [OP_ZERO_RESERVE] = 2,
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

/*
 * Findings by kind (the format, or a name the caller gives): every one is
 * counted, the first PRINT_PER_KIND of each kind are printed, so that a
 * rule the driver breaks on every call does not drown a rarer one.
 */
#define KINDS		64
#define PRINT_PER_KIND	3
static struct {
	char name[80];
	atomic_ulong n;
} kinds[KINDS];
static atomic_int nkinds;	/* kinds[] entries whose name is set */
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *who = "";	/* "race: " in the race-mode process */

static int kind_find(const char *kind, int from, int to)
{
	for (; from < to; from++)
		if (!strncmp(kinds[from].name, kind, sizeof(kinds[from].name) - 1))
			return from;
	return -1;
}

/* Count a finding of this kind: how many of it so far (this one included;
 * 0 when the table is full: print it). */
static unsigned long kind_count(const char *kind)
{
	int i, n = atomic_load_explicit(&nkinds, memory_order_acquire);
	unsigned long seen = 0;

	atomic_fetch_add(&findings, 1);
	/* A kind seen before is counted without a lock: a thread that keeps
	 * finding the same thing must not make the others wait for it. */
	i = kind_find(kind, 0, n);
	if (i < 0) {
		pthread_mutex_lock(&kinds_lock);
		n = atomic_load_explicit(&nkinds, memory_order_relaxed);
		i = kind_find(kind, 0, n);
		if (i < 0 && n < KINDS) {
			i = n;
			snprintf(kinds[i].name, sizeof(kinds[i].name), "%s", kind);
			atomic_store_explicit(&nkinds, n + 1, memory_order_release);
		}
		pthread_mutex_unlock(&kinds_lock);
	}
	if (i >= 0)
		seen = atomic_fetch_add(&kinds[i].n, 1) + 1;
	return seen;
}

static void vfinding(const char *kind, const char *fmt, va_list ap)
{
	if (kind_count(kind) > PRINT_PER_KIND)
		return;
	flockfile(stdout);
	printf("%sFINDING: ", who);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	funlockfile(stdout);
}

static void finding_k(const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void finding_k(const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfinding(kind, fmt, ap);
	va_end(ap);
}

static void finding(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void finding(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfinding(fmt, fmt, ap);
	va_end(ap);
}

static void print_kinds(void)
{
	int i;

	for (i = 0; i < atomic_load(&nkinds); i++)
		if (atomic_load(&kinds[i].n) > PRINT_PER_KIND)
			printf("%s%lu findings of kind \"%s\" (%d printed)\n", who,
			       atomic_load(&kinds[i].n), kinds[i].name, PRINT_PER_KIND);
}

/*
 * Every close() of this process bumps fd_churn first: an fd number can
 * only come to name another file through a close.  A thread notes the
 * count when it picks its fd (pick_fd, some_devfd); if the count moved by
 * the time it judges the call, the number may have named something else
 * meanwhile (EBADF, ENOTTY, ENODEV are then not the driver's).
 */
static atomic_ulong fd_churn;
static __thread unsigned long churn_at_pick;

static int fz_close(int fd)
{
	atomic_fetch_add(&fd_churn, 1);
	return close(fd);
}

static bool churned(void)
{
	return atomic_load(&fd_churn) != churn_at_pick;
}

/* An npu-mem file (st_rdev of /dev/npu-mem, taken in main)? */
static bool npu_file(int fd)
{
	struct stat sb;

	return fd >= 0 && !fstat(fd, &sb) && S_ISCHR(sb.st_mode) &&
	       sb.st_rdev == npu_rdev;
}

#define NOFD	(-1000)		/* record(): the call has no fd to excuse */

static void vrecord(enum op op, long ret, int err, const int *allowed, int fd,
		    const char *fmt, va_list ap)
{
	char kind[80], text[512];
	const int *a;

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
	/* An invented fd number, or one another thread closed meanwhile (and
	 * the number may name another kind of file now): not the driver. */
	if (fd != NOFD && (err == EBADF || err == ENOTTY || err == ENODEV) &&
	    (churned() || !npu_file(fd)))
		return;
	snprintf(kind, sizeof(kind), "%s: unexpected %s", op_names[op],
		 strerrorname_np(err) ?: "?");
	vsnprintf(text, sizeof(text), fmt, ap);
	finding_k(kind, "%s (%d): %s", kind, err, text);
}

/*
 * Record one call's result.  allowed: errnos this call may return, ended by
 * 0 (NULL: anything); anything else is a finding.
 */
static void record(enum op op, long ret, int err, const int *allowed,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void record(enum op op, long ret, int err, const int *allowed,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrecord(op, ret, err, allowed, NOFD, fmt, ap);
	va_end(ap);
}

/*
 * The errors each ioctl may give on an npu-mem file, from the UAPI header:
 * every one EFAULT (bad pointer) and EINVAL (a size below the v1 struct, a
 * larger one with non-zero bytes past it, non-zero flags/pad/reserved);
 * then each its own: ALLOC's list (ENOSPC and EBUSY when a file's offsets
 * or handles run out); ENOENT for an unknown or freed handle; SYNC's range
 * and direction (EINVAL) and ENODEV; EXPORT's EACCES, ENODEV, and no file
 * descriptor or memory for the dma-buf.  Indexed by _IOC_NR.
 */
static const int E_GET_INFO[] = { EINVAL, EFAULT, 0 };
static const int E_ALLOC[] = { EINVAL, E2BIG, ENOMEM, ENODEV, EOPNOTSUPP,
			       EINTR, EFAULT, ENOSPC, EBUSY, 0 };
static const int E_FREE[] = { EINVAL, ENOENT, EFAULT, 0 };
static const int E_QUERY[] = { EINVAL, ENOENT, EFAULT, 0 };
static const int E_SYNC[] = { EINVAL, ENOENT, ENODEV, EFAULT, 0 };
static const int E_EXPORT[] = { EINVAL, ENOENT, EACCES, ENODEV, EFAULT,
				EMFILE, ENFILE, ENOMEM, 0 };
static const int *const E_NR[] = {
	E_GET_INFO, E_ALLOC, E_FREE, E_QUERY, E_SYNC, E_EXPORT,
};
#define NR_IOCTLS	6
/* DMABUF_IMPORT: EBADF for a bad fd field, EINVAL for a file that is no
 * dma-buf, ENODEV, ENOMEM (also the exporter's), and a new handle's
 * ENOSPC/EBUSY as for ALLOC. */
static const int E_DMABUF_IMPORT[] = { EINVAL, EBADF, ENODEV, ENOMEM, EFAULT,
				       ENOSPC, EBUSY, 0 };
/* HOST_REGISTER: its own list (E2BIG past max_alloc, EINTR as for ALLOC),
 * and a new handle's EBUSY (no mmap offset: no ENOSPC). */
static const int E_HOST_REGISTER[] = { EINVAL, E2BIG, EFAULT, EOPNOTSUPP,
				       EEXIST, ENOMEM, ENODEV, EINTR, EBUSY, 0 };

/* IPC by key: ENOENT for a key that names nothing (or, EXPORT, a handle),
 * EPERM from a file not the exporter's, ESRCH for a pid of no process,
 * EACCES for an importer the rules refuse, ENOSPC for a full allow-list
 * (and, EXPORT, a file holding too many keys; IMPORT, a new handle's
 * ENOSPC/EBUSY as for ALLOC). */
static const int E_IPC_EXPORT[] = { EINVAL, ENOENT, ENOSPC, ENOMEM, EFAULT, 0 };
static const int E_IPC_SET_PIDS[] = { EINVAL, ENOENT, EPERM, ESRCH, ENOSPC,
				      ENOMEM, EFAULT, 0 };
static const int E_IPC_IMPORT[] = { EINVAL, ENOENT, EACCES, ENODEV, ENOMEM,
				    ENOSPC, EBUSY, EFAULT, 0 };
static const int E_IPC_REVOKE[] = { EINVAL, ENOENT, EPERM, EFAULT, 0 };
/* Peer mappings: the UAPI header's list for the three commands. */
static const int E_PEER[] = { EINVAL, ENOENT, EACCES, EOPNOTSUPP, EEXIST,
			      ENXIO, ENODEV, ENOMEM, EFAULT, 0 };

static const int *nr_errors(unsigned int nr, unsigned long *cmd);

/* An ioctl's result: its own errors, plus EBADF/ENOTTY when fd is not (or
 * no longer) an npu-mem file. */
static void record_ioctl(enum op op, unsigned int nr, int fd, long ret, int err,
			 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void record_ioctl(enum op op, unsigned int nr, int fd, long ret, int err,
			 const char *fmt, ...)
{
	va_list ap;

	const int *e = nr_errors(nr, NULL);

	va_start(ap, fmt);
	vrecord(op, ret, err, e ? e : (const int[]){ ENOTTY, 0 }, fd, fmt, ap);
	va_end(ap);
}

/* A call that may only fail with the listed errors (plus the fd excuse). */
static void record_fd(enum op op, int fd, long ret, int err, const int *allowed,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void record_fd(enum op op, int fd, long ret, int err, const int *allowed,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrecord(op, ret, err, allowed, fd, fmt, ap);
	va_end(ap);
}

/* "ALLOC answer: size", ...: the kinds of wrong answers (set in main) */
static char desc_kinds[2][NM_DESC_NRULES][48];

static void init_desc_kinds(void)
{
	unsigned int k;

	for (k = 0; k < NM_DESC_NRULES; k++) {
		snprintf(desc_kinds[0][k], sizeof(desc_kinds[0][k]), "ALLOC answer: %s",
			 nm_desc_rule_names[k]);
		snprintf(desc_kinds[1][k], sizeof(desc_kinds[1][k]), "QUERY answer: %s",
			 nm_desc_rule_names[k]);
	}
}

/*
 * Check an ALLOC (query false) or QUERY answer against the header's rules;
 * each broken rule is a finding of its own kind.  Returns the broken
 * rules.  Nothing is formatted unless printed: a rule broken on every call
 * must not slow the calls that race each other.
 */
static unsigned int check_desc(bool query, const struct npu_mem_buffer *b,
			       const struct nm_desc_expect *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static unsigned int check_desc(bool query, const struct npu_mem_buffer *b,
			       const struct nm_desc_expect *e, const char *fmt, ...)
{
	unsigned int bad = nm_desc_check(b, e, NULL, 0), k;
	char msg[400], ctx[160];
	bool formatted = false;
	va_list ap;

	for (k = 0; k < NM_DESC_NRULES; k++) {
		if (!(bad & (1U << k)))
			continue;
		if (kind_count(desc_kinds[query][k]) > PRINT_PER_KIND)
			continue;
		if (!formatted) {
			nm_desc_check(b, e, msg, sizeof(msg));
			va_start(ap, fmt);
			vsnprintf(ctx, sizeof(ctx), fmt, ap);
			va_end(ap);
			formatted = true;
		}
		flockfile(stdout);
		printf("%sFINDING: %s: %s %s\n", who, desc_kinds[query][k], ctx, msg);
		fflush(stdout);
		funlockfile(stdout);
	}
	return bad;
}

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

	churn_at_pick = atomic_load(&fd_churn);
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
		st.fds[slot] = (struct fz_fd){ fd, kind, size, ro, ++st.next_fd_id,
					       0, 0 };
		fd = -1;
	}
	pthread_mutex_unlock(&st.lock);
	if (fd >= 0)
		fz_close(fd);	/* table full */
}

/* Which open() the device fd number stands for now (0: not in the table). */
static uint64_t devfd_id(int fd)
{
	uint64_t id = 0;
	int i;

	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_FDS; i++)
		if (st.fds[i].kind == FD_DEV && st.fds[i].fd == fd)
			id = st.fds[i].id;
	pthread_mutex_unlock(&st.lock);
	return id;
}

/* A device fd to use: from the table, or (rarely) a stale/random number. */
static int some_devfd(struct thr *t)
{
	int s, fd;

	churn_at_pick = atomic_load(&fd_churn);
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
	ret = fz_close(fd);
	record(OP_CLOSE, ret, errno, (const int[]){ EBADF, 0 }, "close(%d)", fd);
}

static void op_dup(struct thr *t)
{
	int s, fd, nfd;
	struct fz_fd copy;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, chance(&t->r, 60) ? FD_DEV : FD_DMABUF);
	copy = s >= 0 ? st.fds[s] : (struct fz_fd){ .fd = -1, .kind = FD_FREE };
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
		info->reserved = boundary32(&t->r);
	if (chance(&t->r, 10))
		info->device = boundary32(&t->r);
	else if (chance(&t->r, 20))
		info->device = below(&t->r, npu_count + 2);
	bad = info->flags || info->reserved || info->device >= npu_count;
	ret = ioctl(fd, NPU_MEM_IOCTL_GET_INFO, info);
	record_ioctl(OP_GET_INFO, 0, fd, ret, errno, "fd %d", fd);
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

/* ALLOC's answer against its request (the request fields come back as
 * they were sent). */
static unsigned int check_alloc_answer(const struct npu_mem_alloc *a, int fd)
{
	struct nm_desc_expect e = {
		.req_known = true, .req = a->size, .policy = a->policy,
		.alloc_flags = a->flags, .hidden = main_hidden,
	};

	return check_desc(false, &a->buf, &e, "fd %d ALLOC %#llx policy %u flags %#x -> handle %u",
			  fd, (unsigned long long)a->size, a->policy, a->flags, a->handle);
}

/* QUERY's answer: the rules (its request is unknown), and equal to ALLOC's
 * answer when known is. */
static void check_query_answer(const struct npu_mem_query *q, int fd,
			       const struct npu_mem_buffer *known)
{
	struct nm_desc_expect e = { .hidden = main_hidden };

	check_desc(true, &q->buf, &e, "fd %d QUERY handle %u", fd, q->handle);
	if (known && memcmp(known, &q->buf, sizeof(*known)))
		finding("QUERY answer differs from ALLOC's: fd %d handle %u: size %#llx/%#llx "
			"off %#llx/%#llx dev %#llx/%#llx flags %#x/%#x", fd, q->handle,
			(unsigned long long)q->buf.size, (unsigned long long)known->size,
			(unsigned long long)q->buf.mmap_offset,
			(unsigned long long)known->mmap_offset,
			(unsigned long long)q->buf.dev_addr,
			(unsigned long long)known->dev_addr, q->buf.flags, known->flags);
}

static void op_alloc(struct thr *t)
{
	struct npu_mem_alloc *a = (void *)t->argbuf;
	int fd = some_devfd(t), i;
	uint64_t req, id = devfd_id(fd);
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
		a->device = boundary32(&t->r);
	else if (chance(&t->r, 30))
		a->device = below(&t->r, npu_count + 1);
	if (chance(&t->r, 5))
		a->handle = boundary32(&t->r);	/* out field: ignored */
	ret = ioctl(fd, NPU_MEM_IOCTL_ALLOC, a);
	record_ioctl(OP_ALLOC, 1, fd, ret, errno,
		     "fd %d size %#llx policy %u flags %#x device %#x",
		     fd, (unsigned long long)a->size, a->policy, a->flags, a->device);
	if (ret)
		return;
	if (!a->handle || a->policy >= NPU_MEM_POLICY_COUNT ||
	    (a->flags & ~NPU_MEM_ALLOC_VALID) || a->device >= npu_count)
		finding("ALLOC accepted/returned nonsense: handle %u size %#llx policy %u flags %#x device %#x",
			a->handle, (unsigned long long)a->size, a->policy,
			a->flags, a->device);
	else
		check_alloc_answer(a, fd);
	pthread_mutex_lock(&st.lock);
	/* What the next ALLOC through this open() will hand out. */
	for (i = 0; id && i < MAX_FDS; i++)
		if (st.fds[i].kind == FD_DEV && st.fds[i].id == id) {
			st.fds[i].last_handle = a->handle;
			st.fds[i].next_off = a->buf.mmap_offset + a->buf.size;
		}
	/* A free slot, or one holding a stale handle. */
	for (i = 0; i < MAX_BUFS && st.bufs[i].used && st.bufs[i].live; i++)
		;
	if (i < MAX_BUFS) {
		st.bufs[i] = (struct fz_buf){ true, true, fd, a->handle, a->buf.size,
					       a->buf.mmap_offset, a->buf.flags,
					       id, a->buf };
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
	record_ioctl(OP_FREE, 2, fd, ret, errno, "fd %d handle %u flags %#x", fd, f->handle,
		     f->flags);
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

	struct npu_mem_buffer known;
	uint64_t id = devfd_id(fd);
	bool have = false;

	memset(q, 0, sizeof(*q));
	q->handle = some_handle(t, fd, &slot);
	if (chance(&t->r, 5))
		q->flags = boundary32(&t->r);
	/* A buffer whose ALLOC answer was seen through this very open(): the
	 * handle cannot name another buffer (handles are never reused). */
	if (slot >= 0 && id) {
		pthread_mutex_lock(&st.lock);
		if (st.bufs[slot].used && st.bufs[slot].devfd == fd &&
		    st.bufs[slot].fdid == id && st.bufs[slot].handle == q->handle) {
			known = st.bufs[slot].desc;
			have = true;
		}
		pthread_mutex_unlock(&st.lock);
	}
	ret = ioctl(fd, NPU_MEM_IOCTL_QUERY, q);
	record_ioctl(OP_QUERY, 3, fd, ret, errno, "fd %d handle %u", fd, q->handle);
	if (ret)
		return;
	if (q->flags)
		finding("QUERY accepted flags %#x", q->flags);
	/* ... unless the fd number was closed and reopened meanwhile. */
	check_query_answer(q, fd, have && devfd_id(fd) == id ? &known : NULL);
}

static void op_sync(struct thr *t)
{
	struct npu_mem_sync *s = (void *)t->argbuf;
	int fd = some_devfd(t), slot;
	uint64_t size = 0, id = devfd_id(fd);
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
	record_ioctl(OP_SYNC, 4, fd, ret, errno, "fd %d handle %u dir %u off %#llx len %#llx",
	       fd, s->handle, s->direction, (unsigned long long)s->offset,
	       (unsigned long long)s->length);
	if (ret == 0 && (!s->length || s->reserved || s->direction < 1 ||
			 s->direction > 3 || s->offset + s->length < s->offset))
		finding("SYNC accepted dir %u off %#llx len %#llx reserved %#llx",
			s->direction, (unsigned long long)s->offset,
			(unsigned long long)s->length, (unsigned long long)s->reserved);
	/*
	 * A range that does not fit the buffer must be refused: judged only
	 * for a handle whose ALLOC answer came through this very open() (fd
	 * numbers are reused, handles only within one open file are not), the
	 * same one before and after the call.
	 */
	if (ret == 0 && slot >= 0 && id && devfd_id(fd) == id) {
		bool known = false;

		pthread_mutex_lock(&st.lock);
		if (st.bufs[slot].used && st.bufs[slot].devfd == fd &&
		    st.bufs[slot].fdid == id &&
		    st.bufs[slot].handle == s->handle) {
			size = st.bufs[slot].size;
			known = true;
		}
		pthread_mutex_unlock(&st.lock);
		if (known && (s->offset > size || s->length > size - s->offset))
			finding("SYNC accepted [%#llx, +%#llx) of a %#llx-byte "
				"buffer", (unsigned long long)s->offset,
				(unsigned long long)s->length,
				(unsigned long long)size);
	}
}

/* Whether @fd's file was opened with access mode @mode (O_RDONLY, O_RDWR). */
static bool access_mode_is(int fd, int mode)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == mode;
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
	record_ioctl(keep ? OP_EXPORT : OP_EXPORT_CLOSE, 5, fd, ret, errno,
	       "fd %d handle %u flags %#x pad %#x", fd, e->handle, e->flags, e->pad);
	if (ret)
		return -1;
	if (e->flags & ~(O_CLOEXEC | O_RDWR) || e->pad)
		finding("EXPORT accepted flags %#x pad %#x", e->flags, e->pad);
	if (slot >= 0) {
		pthread_mutex_lock(&st.lock);
		size = st.bufs[slot].size;
		pthread_mutex_unlock(&st.lock);
	}
	/* Whatever the buffer: a READONLY one cannot be exported O_RDWR. */
	ro = !(e->flags & O_RDWR);
	if (!access_mode_is((int)e->fd, ro ? O_RDONLY : O_RDWR))
		finding("EXPORT flags %#x gave a dma-buf file opened %#x",
			e->flags, fcntl((int)e->fd, F_GETFL) & O_ACCMODE);
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
		fz_close(dfd);
	}
}

/* The v1 commands, by _IOC_NR. */
static const unsigned long v1_cmds[NR_IOCTLS] = {
	NPU_MEM_IOCTL_GET_INFO, NPU_MEM_IOCTL_ALLOC, NPU_MEM_IOCTL_FREE,
	NPU_MEM_IOCTL_QUERY, NPU_MEM_IOCTL_SYNC, NPU_MEM_IOCTL_EXPORT,
};

/*
 * The errors ioctl number nr may give, and (cmd) its command as the header
 * defines it; NULL for a number that is no ioctl of the driver.  The v1
 * ioctls by table, the later ones one by one.
 */
static const int *nr_errors(unsigned int nr, unsigned long *cmd)
{
	unsigned long c = 0;
	const int *e = NULL;

	if (nr < NR_IOCTLS) {
		c = v1_cmds[nr];
		e = E_NR[nr];
	} else if (nr == _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT)) {
		c = NPU_MEM_IOCTL_DMABUF_IMPORT;
		e = E_DMABUF_IMPORT;
	} else if (nr == _IOC_NR(NPU_MEM_IOCTL_HOST_REGISTER)) {
		c = NPU_MEM_IOCTL_HOST_REGISTER;
		e = E_HOST_REGISTER;
	} else if (nr >= _IOC_NR(NPU_MEM_IOCTL_PEER_MAP) &&
		   nr <= _IOC_NR(NPU_MEM_IOCTL_PEER_QUERY)) {
		static const unsigned long peer_cmds[] = {
			NPU_MEM_IOCTL_PEER_MAP, NPU_MEM_IOCTL_PEER_UNMAP,
			NPU_MEM_IOCTL_PEER_QUERY,
		};

		c = peer_cmds[nr - _IOC_NR(NPU_MEM_IOCTL_PEER_MAP)];
		e = E_PEER;
	}
	if (!e && nr >= _IOC_NR(NPU_MEM_IOCTL_IPC_EXPORT) &&
	    nr <= _IOC_NR(NPU_MEM_IOCTL_IPC_REVOKE)) {
		static const unsigned long ipc_cmds[] = {
			NPU_MEM_IOCTL_IPC_EXPORT, NPU_MEM_IOCTL_IPC_SET_PIDS,
			NPU_MEM_IOCTL_IPC_IMPORT, NPU_MEM_IOCTL_IPC_REVOKE,
		};
		static const int *const ipc_errs[] = {
			E_IPC_EXPORT, E_IPC_SET_PIDS, E_IPC_IMPORT, E_IPC_REVOKE,
		};

		c = ipc_cmds[nr - _IOC_NR(NPU_MEM_IOCTL_IPC_EXPORT)];
		e = ipc_errs[nr - _IOC_NR(NPU_MEM_IOCTL_IPC_EXPORT)];
	}
	if (cmd)
		*cmd = c;
	return e;
}

/* A successful DMABUF_IMPORT through this (maybe larger) command number */
static bool cmd_is_import(unsigned long cmd)
{
	return _IOC_TYPE(cmd) == NPU_MEM_IOCTL_MAGIC &&
	       _IOC_NR(cmd) == _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT) &&
	       _IOC_DIR(cmd) == _IOC_DIR(NPU_MEM_IOCTL_DMABUF_IMPORT) &&
	       _IOC_SIZE(cmd) >= sizeof(struct npu_mem_dmabuf_import);
}

/*
 * A mutated command on an npu-mem file gets what the header's rules say:
 * -ENOTTY for a wrong magic, nr or direction; -EINVAL for a size below the
 * v1 struct (QUERY's and GET_INFO's, which grew, are shorter than today's),
 * or above today's struct with non-zero bytes past it; otherwise whatever
 * that ioctl may answer.  On any other file (a dma-buf, a closed number)
 * anything goes.
 */
static void raw_result(unsigned long cmd, int fd, long ret, int err,
		       const uint8_t *arg)
{
	static const int only_enotty[] = { ENOTTY, 0 }, only_einval[] = { EINVAL, 0 };
	unsigned int nr = _IOC_NR(cmd);
	size_t size = _IOC_SIZE(cmd), v1, now, i;
	const int *allowed = NULL, *known;
	bool tail = false, valid = false;
	unsigned long real;

	if (churned() || !npu_file(fd)) {
		record(OP_RAW_IOCTL, ret, err, NULL, "fd %d cmd %#lx", fd, cmd);
		return;
	}
	known = nr_errors(nr, &real);
	if (_IOC_TYPE(cmd) != NPU_MEM_IOCTL_MAGIC || !known ||
	    _IOC_DIR(cmd) != _IOC_DIR(real)) {
		allowed = only_enotty;
	} else {
		now = _IOC_SIZE(real);
		if (nr == _IOC_NR(NPU_MEM_IOCTL_QUERY))
			v1 = offsetof(struct npu_mem_query, buf) +
			     sizeof(struct npu_mem_buffer);
		else if (nr == _IOC_NR(NPU_MEM_IOCTL_GET_INFO))
			v1 = offsetof(struct npu_mem_info, dev_bytes);
		else
			v1 = now;
		for (i = now; i < size; i++)
			tail |= arg[i] != 0;
		valid = size >= v1 && !tail;
		allowed = valid ? known : only_einval;
	}
	record_fd(OP_RAW_IOCTL, fd, ret, err, allowed, "fd %d cmd %#lx", fd, cmd);
	if (ret == 0 && !valid) {
		finding("raw ioctl %#lx succeeded (want %s)", cmd,
			allowed == only_enotty ? "ENOTTY" : "EINVAL");
		return;
	}
	if (ret == 0 && nr == 1)
		check_alloc_answer((const struct npu_mem_alloc *)arg, fd);
	if (ret == 0 && nr == 3)
		check_query_answer((const struct npu_mem_query *)arg, fd, NULL);
	if (ret == 0 && cmd_is_import(cmd)) {
		const struct npu_mem_dmabuf_import *d = (const void *)arg;
		struct npu_mem_query q = { .handle = d->handle, .buf = d->buf };

		check_query_answer(&q, fd, NULL);
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
		nr = below(&t->r, 7);
		if (nr == 6)
			nr = _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT);
		dir = nr == _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT) ?
		      _IOC_DIR(NPU_MEM_IOCTL_DMABUF_IMPORT) :
		      (unsigned long[]){ _IOC_READ | _IOC_WRITE, _IOC_READ | _IOC_WRITE,
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
	raw_result(cmd, fd, ret, errno, t->argbuf);
	/* A successful ALLOC through a mutated number leaks unless freed:
	 * that is the test's business, not the driver's, but keep it tidy. */
	if (ret == 0 && _IOC_TYPE(cmd) == NPU_MEM_IOCTL_MAGIC && _IOC_NR(cmd) == 1) {
		struct npu_mem_alloc *a = (void *)t->argbuf;

		if (_IOC_SIZE(cmd) >= offsetof(struct npu_mem_alloc, device))
			ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ a->handle, 0 });
	}
	if (ret == 0 && _IOC_TYPE(cmd) == NPU_MEM_IOCTL_MAGIC && _IOC_NR(cmd) == 5 &&
	    _IOC_SIZE(cmd) >= offsetof(struct npu_mem_export, pad))
		fz_close((int)((struct npu_mem_export *)t->argbuf)->fd);
	if (ret == 0 && cmd_is_import(cmd))
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){
			((struct npu_mem_dmabuf_import *)t->argbuf)->handle, 0 });
}

/* Valid command numbers, invalid argument pointers. */
static void op_bad_ptr(struct thr *t)
{
	static const unsigned long cmds[] = {
		NPU_MEM_IOCTL_GET_INFO, NPU_MEM_IOCTL_ALLOC, NPU_MEM_IOCTL_FREE,
		NPU_MEM_IOCTL_QUERY, NPU_MEM_IOCTL_SYNC, NPU_MEM_IOCTL_EXPORT,
		NPU_MEM_IOCTL_DMABUF_IMPORT,
	};
	unsigned long cmd = cmds[below(&t->r, sizeof(cmds) / sizeof(cmds[0]))];
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
	record_ioctl(OP_BAD_PTR, _IOC_NR(cmd), fd, ret, errno, "fd %d cmd %#lx arg %p", fd, cmd,
		     arg);
	if (ret == 0 && cmd == NPU_MEM_IOCTL_ALLOC)
		finding("ALLOC succeeded with a bad/zero argument at %p", arg);
	if (ret == 0 && cmd == NPU_MEM_IOCTL_EXPORT)
		fz_close((int)((struct npu_mem_export *)arg)->fd);
	if (ret == 0 && cmd == NPU_MEM_IOCTL_DMABUF_IMPORT)
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){
			((struct npu_mem_dmabuf_import *)arg)->handle, 0 });
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
	int s, fd, prot = rand_prot(t), err;
	bool ro, shared, whole = false;
	uint64_t size, off, len;
	uint8_t *p;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, FD_DMABUF);
	fd = s >= 0 ? st.fds[s].fd : -1;
	size = s >= 0 ? st.fds[s].size : PAGE;
	ro = s >= 0 && st.fds[s].readonly;
	pthread_mutex_unlock(&st.lock);
	if (s < 0)
		return;
	switch (below(&t->r, 4)) {
	case 0:
	case 1:
		off = 0;
		len = size ? size : PAGE;
		whole = true;
		break;
	case 2:
		off = below(&t->r, size / PAGE + 2) * PAGE;
		len = PAGE * (1 + below(&t->r, 4));
		break;
	default:
		off = boundary64(&t->r) & ~(PAGE - 1);
		len = boundary64(&t->r);
	}
	shared = chance(&t->r, 90);
	p = mmap(NULL, len, prot, shared ? MAP_SHARED : MAP_PRIVATE, fd, (off_t)off);
	err = errno;
	record(OP_MMAP_DMABUF, p == MAP_FAILED ? -1 : 0, err, E_MMAP,
	       "fd %d off %#llx len %#llx prot %#x", fd, (unsigned long long)off,
	       (unsigned long long)len, prot);
	/*
	 * A dma-buf file without write access maps shared only without
	 * PROT_WRITE: -EACCES, for a range the mmap would otherwise take
	 * (judged while the fd number surely named that file).
	 */
	if (ro && shared && (prot & PROT_WRITE) && !churned() &&
	    (p != MAP_FAILED || (whole && err != EACCES)))
		finding("mmap PROT_WRITE of a read-only dma-buf (fd %d, %#llx "
			"bytes): %s, want EACCES", fd, (unsigned long long)len,
			p != MAP_FAILED ? "mapped" : strerrorname_np(err) ?: "?");
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
			fz_close(esf.fd);
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

		/*
		 * Only a guard against a child that never ends: it runs at
		 * nice 0 beside the race process's nice -10 threads, in a
		 * guest that may be emulated beside other load, and 16 calls
		 * can take it many seconds.
		 */
		alarm(300);
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
	fz_close(fd);
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

/*
 * The handle (last + 1..4) and mmap offset the driver hands out next in an
 * open file: another thread's ALLOC may be making that buffer right now,
 * and the call must either not find it or find it whole.
 */
static void op_predict(struct thr *t)
{
	static const int e_free[] = { ENOENT, 0 }, e_noexp[] = { ENOENT, EINVAL, 0 };
	static const int e_export[] = { ENOENT, EACCES, EINVAL, 0 };
	int s, fd, k = 1 + (int)below(&t->r, 4), i;
	uint64_t id, off;
	uint32_t h;
	long ret;

	pthread_mutex_lock(&st.lock);
	s = pick_fd(&t->r, FD_DEV);
	if (s < 0) {
		pthread_mutex_unlock(&st.lock);
		return;
	}
	fd = st.fds[s].fd;
	id = st.fds[s].id;
	h = st.fds[s].last_handle + k;
	off = st.fds[s].next_off ? st.fds[s].next_off : PAGE;
	pthread_mutex_unlock(&st.lock);

	switch (below(&t->r, 5)) {
	case 0: {
		struct npu_mem_free f = { .handle = h };

		ret = ioctl(fd, NPU_MEM_IOCTL_FREE, &f);
		record_fd(OP_PREDICT, fd, ret, errno, e_free, "FREE of next handle %u (fd %d)",
			  h, fd);
		if (ret == 0) {
			/* Whoever allocated it may have recorded it already. */
			pthread_mutex_lock(&st.lock);
			for (i = 0; i < MAX_BUFS; i++)
				if (st.bufs[i].used && st.bufs[i].live &&
				    st.bufs[i].fdid == id && st.bufs[i].handle == h)
					forget_buf(i);
			pthread_mutex_unlock(&st.lock);
		}
		break;
	}
	case 1: {
		struct npu_mem_query q = { .handle = h };

		ret = ioctl(fd, NPU_MEM_IOCTL_QUERY, &q);
		record_fd(OP_PREDICT, fd, ret, errno, e_free, "QUERY of next handle %u (fd %d)",
			  h, fd);
		if (ret == 0)
			check_query_answer(&q, fd, NULL);
		break;
	}
	case 2: {
		/* Every buffer has at least one page: the range is valid. */
		struct npu_mem_sync sy = {
			.handle = h, .direction = 1 + below(&t->r, 3),
			.offset = 0, .length = PAGE,
		};

		ret = ioctl(fd, NPU_MEM_IOCTL_SYNC, &sy);
		record_fd(OP_PREDICT, fd, ret, errno, e_free, "SYNC of next handle %u (fd %d)",
			  h, fd);
		break;
	}
	case 3: {
		struct npu_mem_export e = {
			.handle = h,
			.flags = O_CLOEXEC | (chance(&t->r, 30) ? O_RDWR : 0),
		};

		ret = ioctl(fd, NPU_MEM_IOCTL_EXPORT, &e);
		/* EACCES: the new buffer may be READONLY; EINVAL: the new
		 * handle may be another driver's dma-buf (DMABUF_IMPORT) */
		record_fd(OP_PREDICT, fd, ret, errno, e.flags & O_RDWR ? e_export : e_noexp,
			  "EXPORT of next handle %u flags %#x (fd %d)", h, e.flags, fd);
		if (ret == 0)
			fz_close((int)e.fd);
		break;
	}
	default: {
		int prot = PROT_READ | (chance(&t->r, 50) ? PROT_WRITE : 0);
		uint8_t *p = mmap(NULL, PAGE, prot, MAP_SHARED, fd, (off_t)off);

		/* EINVAL: nothing there yet; EACCES: a READONLY buffer */
		record_fd(OP_PREDICT, fd, p == MAP_FAILED ? -1 : 0, errno,
			  (const int[]){ EINVAL, EACCES, 0 }, "mmap of next offset %#llx (fd %d)",
			  (unsigned long long)off, fd);
		if (p != MAP_FAILED)
			add_map(p, PAGE, prot);
	}
	}
}

/*
 * Other drivers' dma-bufs, made once before the threads start and closed
 * after they end (so their numbers never change meaning): the system
 * dma-heap's and udmabuf's, where the running kernel has them.
 */
#define MAX_FOREIGN	4
static struct {
	int fd;
	uint64_t size;
	bool ro;	/* opened without O_RDWR: its imports are READONLY */
} foreign[MAX_FOREIGN];
static unsigned int nforeign;

static unsigned int nforeign_ro(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nforeign; i++)
		n += foreign[i].ro;
	return n;
}

static void make_foreign(void)
{
	struct dma_heap_allocation_data h = { .fd_flags = O_RDWR | O_CLOEXEC };
	struct utsname u;
	int dev, memfd;

	/*
	 * Not on the debug kernel (a 6.1, release "-npudebug-"): its system
	 * heap oopses syncing tables CONFIG_DMABUF_DEBUG scrambled, and its
	 * udmabuf maps beyond its own device's segment size; exporter bugs
	 * any importer's CPU-access sync trips (tests/kernel/dmabuf_import.c).
	 */
	if (uname(&u) == 0 && strstr(u.release, "-npudebug-")) {
		printf("other drivers' dma-bufs to import: none on the debug "
		       "kernel (its heap and udmabuf are broken there)\n");
		return;
	}
	dev = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	for (int i = 0; dev >= 0 && i < 3; i++) {
		h.len = i == 1 ? (1ULL << 20) + PAGE : 64 * 1024;
		/* the third read-only: a file without write access */
		h.fd_flags = i == 2 ? O_RDONLY | O_CLOEXEC : O_RDWR | O_CLOEXEC;
		h.fd = 0;	/* an input that must be 0 */
		if (ioctl(dev, DMA_HEAP_IOCTL_ALLOC, &h) == 0) {
			foreign[nforeign].fd = (int)h.fd;
			foreign[nforeign].ro = i == 2;
			foreign[nforeign++].size = h.len;
		}
	}
	if (dev >= 0)
		close(dev);
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	memfd = memfd_create("npu_mem_fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (dev >= 0 && memfd >= 0 && !ftruncate(memfd, 128 * 1024) &&
	    !fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		struct udmabuf_create c = {
			.memfd = (uint32_t)memfd, .flags = UDMABUF_FLAGS_CLOEXEC,
			.size = 128 * 1024,
		};
		int fd = ioctl(dev, UDMABUF_CREATE, &c);

		if (fd >= 0) {
			foreign[nforeign].fd = fd;
			foreign[nforeign++].size = c.size;
		}
	}
	if (memfd >= 0)
		close(memfd);
	if (dev >= 0)
		close(dev);
	printf("other drivers' dma-bufs to import: %u (%u read-only)\n",
	       nforeign, nforeign_ro());
}

static void op_dmabuf_import(struct thr *t)
{
	struct npu_mem_dmabuf_import *d = (void *)t->argbuf;
	enum { OWN, OTHER_DRIVER, ANY } what = ANY;
	int fd = some_devfd(t), src = -1, s, i;
	bool ro = false;
	uint64_t size = 0, id = devfd_id(fd);
	struct npu_mem_query q;
	long ret;

	switch (below(&t->r, 8)) {
	case 0:
	case 1:
	case 2:			/* one of its own npu-mem dma-bufs */
		pthread_mutex_lock(&st.lock);
		s = pick_fd(&t->r, FD_DMABUF);
		if (s >= 0) {
			src = st.fds[s].fd;
			size = st.fds[s].size;
			ro = st.fds[s].readonly;
			what = OWN;
		}
		pthread_mutex_unlock(&st.lock);
		break;
	case 3:
	case 4:			/* another driver's */
		if (nforeign) {
			i = (int)below(&t->r, nforeign);
			src = foreign[i].fd;
			size = foreign[i].size;
			ro = foreign[i].ro;
			what = OTHER_DRIVER;
		}
		break;
	case 5:			/* the device file: no dma-buf */
		src = fd;
		break;
	case 6:
		src = (int)below(&t->r, 64);
		break;
	default:
		src = (int)boundary32(&t->r);
	}
	memset(d, 0, sizeof(*d));
	d->fd = (uint32_t)src;
	if (chance(&t->r, 5))
		d->flags = boundary32(&t->r);
	if (chance(&t->r, 5))
		d->device = boundary32(&t->r);
	else if (chance(&t->r, 30))
		d->device = below(&t->r, npu_count + 1);
	if (chance(&t->r, 5))
		d->handle = boundary32(&t->r);	/* out field: ignored */
	ret = ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, d);
	record_ioctl(OP_DMABUF_IMPORT, _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT), fd,
		     ret, errno, "fd %d imports fd %d flags %#x device %#x", fd,
		     src, d->flags, d->device);
	if (ret)
		return;
	if (d->flags || d->device >= npu_count || !d->handle)
		finding("DMABUF_IMPORT accepted flags %#x device %#x (handle %u)",
			d->flags, d->device, d->handle);
	q = (struct npu_mem_query){ .handle = d->handle, .buf = d->buf };
	check_query_answer(&q, fd, NULL);
	/* Judged only while the fd number surely named that dma-buf. */
	if (what == OTHER_DRIVER &&
	    ((d->buf.flags & (NPU_MEM_BUF_FOREIGN | NPU_MEM_BUF_IMPORTED)) !=
	     (NPU_MEM_BUF_FOREIGN | NPU_MEM_BUF_IMPORTED) || d->buf.size != size))
		finding("DMABUF_IMPORT of another driver's %#llx-byte dma-buf: "
			"flags %#x size %#llx", (unsigned long long)size,
			d->buf.flags, (unsigned long long)d->buf.size);
	/* (the size recorded with an npu-mem dma-buf is a guess: EXPORT was
	 * given handles near the one it knew) */
	if (what == OWN && !churned() &&
	    (!(d->buf.flags & NPU_MEM_BUF_IMPORTED) ||
	     (d->buf.flags & NPU_MEM_BUF_FOREIGN)))
		finding("DMABUF_IMPORT of an npu-mem dma-buf: flags %#x",
			d->buf.flags);
	/*
	 * The file's access is the handle's: a read-only file gives a
	 * READONLY handle, and a writable one was exported from a writable
	 * buffer (EXPORT refuses O_RDWR for a READONLY one).
	 */
	if (what != ANY && !churned() &&
	    !!(d->buf.flags & NPU_MEM_BUF_READONLY) != ro)
		finding("DMABUF_IMPORT of a %s %s dma-buf: flags %#x",
			ro ? "read-only" : "writable",
			what == OWN ? "npu-mem" : "foreign", d->buf.flags);
	/* Now and then gone at once, racing whoever picks the next handle. */
	if (chance(&t->r, 30)) {
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ d->handle, 0 });
		return;
	}
	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_BUFS && st.bufs[i].used && st.bufs[i].live; i++)
		;
	if (i < MAX_BUFS) {
		st.bufs[i] = (struct fz_buf){ true, true, fd, d->handle, d->buf.size,
					       d->buf.mmap_offset, d->buf.flags,
					       id, d->buf };
		st.live_bytes += d->buf.size;
		pthread_mutex_unlock(&st.lock);
	} else {
		pthread_mutex_unlock(&st.lock);
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ d->handle, 0 });
	}
}

/*
 * HOST_REGISTER: mostly a piece of a fresh anonymous mapping (sometimes
 * running past it, or unaligned), else garbage.  The mapping goes right
 * after the call: a registration keeps its pages regardless.
 */
static void op_host_register(struct thr *t)
{
	struct npu_mem_host_register *h = (void *)t->argbuf;
	int fd = some_devfd(t), i;
	uint64_t id = devfd_id(fd), npages = 1 + below(&t->r, 32), first;
	int prot = chance(&t->r, 20) ? PROT_READ : PROT_READ | PROT_WRITE;
	size_t len = npages * PAGE;
	uint8_t *m = MAP_FAILED;
	long ret;

	memset(h, 0, sizeof(*h));
	if (chance(&t->r, 85))
		m = mmap(NULL, len, prot, MAP_ANONYMOUS |
			 (chance(&t->r, 20) ? MAP_SHARED : MAP_PRIVATE), -1, 0);
	if (m != MAP_FAILED) {
		if ((prot & PROT_WRITE) && chance(&t->r, 70))
			memset(m, 0x5a, len);
		first = below(&t->r, npages);
		h->addr = (uintptr_t)m + first * PAGE;
		h->size = (1 + below(&t->r, npages - first)) * PAGE;
		if (chance(&t->r, 10))
			h->size += below(&t->r, 3) * PAGE;	/* past the end */
		if (chance(&t->r, 5))
			h->addr += below(&t->r, PAGE);
		if (chance(&t->r, 5))
			h->size += below(&t->r, PAGE);
	} else {
		h->addr = boundary64(&t->r);
		h->size = boundary64(&t->r);
	}
	h->flags = chance(&t->r, 90) ? (chance(&t->r, 30) ? NPU_MEM_HOST_READONLY : 0) :
		   boundary32(&t->r);
	if (chance(&t->r, 5))
		h->handle = boundary32(&t->r);	/* out field: ignored */
	if (chance(&t->r, 5))
		h->device = boundary32(&t->r);
	else if (chance(&t->r, 30))
		h->device = below(&t->r, npu_count + 1);
	if (chance(&t->r, 3))
		h->pad = boundary32(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, h);
	record_ioctl(OP_HOST_REGISTER, _IOC_NR(NPU_MEM_IOCTL_HOST_REGISTER), fd,
		     ret, errno, "fd %d addr %#llx size %#llx flags %#x device %#x "
		     "pad %#x", fd, (unsigned long long)h->addr,
		     (unsigned long long)h->size, h->flags, h->device, h->pad);
	if (m != MAP_FAILED)
		munmap(m, len);
	if (ret)
		return;
	if (h->device >= npu_count || h->pad)
		finding("HOST_REGISTER accepted device %#x pad %#x (of %u NPUs)",
			h->device, h->pad, npu_count);
	if (!h->handle || (h->flags & ~NPU_MEM_HOST_VALID) ||
	    (h->addr | h->size) & (PAGE - 1) || !(h->buf.flags & NPU_MEM_BUF_HOST) ||
	    h->buf.size != h->size)
		finding("HOST_REGISTER accepted/returned nonsense: handle %u addr %#llx "
			"size %#llx flags %#x -> size %#llx flags %#x", h->handle,
			(unsigned long long)h->addr, (unsigned long long)h->size,
			h->flags, (unsigned long long)h->buf.size, h->buf.flags);
	else
		check_desc(false, &h->buf, &(struct nm_desc_expect){
				.req_known = true, .req = h->size,
				.policy = NPU_MEM_POLICY_NORMAL_ONLY,
				.alloc_flags = h->flags & NPU_MEM_HOST_READONLY ?
					       NPU_MEM_ALLOC_READONLY : 0,
				.hidden = main_hidden },
			   "fd %d HOST_REGISTER %#llx size %#llx flags %#x -> handle %u",
			   fd, (unsigned long long)h->addr,
			   (unsigned long long)h->size, h->flags, h->handle);
	if (chance(&t->r, 30)) {
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ h->handle, 0 });
		return;
	}
	pthread_mutex_lock(&st.lock);
	for (i = 0; id && i < MAX_FDS; i++)
		if (st.fds[i].kind == FD_DEV && st.fds[i].id == id)
			st.fds[i].last_handle = h->handle;
	for (i = 0; i < MAX_BUFS && st.bufs[i].used && st.bufs[i].live; i++)
		;
	if (i < MAX_BUFS) {
		st.bufs[i] = (struct fz_buf){ true, true, fd, h->handle, h->buf.size,
					       0, h->buf.flags, id, h->buf };
		st.live_bytes += h->buf.size;
		pthread_mutex_unlock(&st.lock);
	} else {
		pthread_mutex_unlock(&st.lock);
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ h->handle, 0 });
	}
}

/* A handle of fd (open() id) joins the pool; FREEd when the pool is full. */
static void keep_buf(int fd, uint64_t id, uint32_t handle,
		     const struct npu_mem_buffer *b)
{
	int i;

	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_BUFS && st.bufs[i].used && st.bufs[i].live; i++)
		;
	if (i < MAX_BUFS) {
		st.bufs[i] = (struct fz_buf){ true, true, fd, handle, b->size,
					       b->mmap_offset, b->flags, id, *b };
		st.live_bytes += b->size;
		pthread_mutex_unlock(&st.lock);
	} else {
		pthread_mutex_unlock(&st.lock);
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ handle, 0 });
	}
}

/*
 * A mapping that must not be writable: mmap of @fd at @off with PROT_WRITE
 * (shared) is EACCES, one with PROT_READ works, and mprotect cannot add
 * PROT_WRITE to it (EACCES).  Judged only while @judge() says the fd
 * number still names the file meant.
 */
static void assert_no_write_map(int fd, uint64_t off, uint64_t len,
				bool (*judge)(void), const char *what)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			  (off_t)off);
	int err = errno, ret;

	record(OP_READONLY, p == MAP_FAILED ? -1 : 0, err, E_MMAP,
	       "mmap PROT_WRITE of %s (fd %d off %#llx)", what, fd,
	       (unsigned long long)off);
	if (p != MAP_FAILED || err != EACCES) {
		if (judge())
			finding("mmap PROT_WRITE of %s (fd %d, %#llx bytes): %s, "
				"want EACCES", what, fd, (unsigned long long)len,
				p != MAP_FAILED ? "mapped" : strerrorname_np(err) ?: "?");
		if (p != MAP_FAILED)
			munmap(p, len);
		return;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	record(OP_READONLY, p == MAP_FAILED ? -1 : 0, errno, E_MMAP,
	       "mmap PROT_READ of %s (fd %d off %#llx)", what, fd,
	       (unsigned long long)off);
	if (p == MAP_FAILED)
		return;
	ret = mprotect(p, len, PROT_READ | PROT_WRITE);
	err = errno;
	if ((ret == 0 || err != EACCES) && judge())
		finding("mprotect to PROT_WRITE of a read-only mapping of %s: "
			"%s, want EACCES", what,
			ret ? strerrorname_np(err) ?: "?" : "done");
	munmap(p, len);
}

static bool always(void)
{
	return true;
}

/*
 * Other threads FREE handle numbers at random, and a number can be given
 * out again: a result about a handle not yet kept is judged only while it
 * still names the buffer it was made for (the same mmap offset, size and
 * flags), in a file not closed meanwhile.
 */
static __thread struct {
	int fd;
	uint32_t handle;
	struct npu_mem_buffer buf;
} ro_handle;

static bool ro_handle_unchanged(void)
{
	struct npu_mem_query q = { .handle = ro_handle.handle };

	return !churned() && !ioctl(ro_handle.fd, NPU_MEM_IOCTL_QUERY, &q) &&
	       q.buf.mmap_offset == ro_handle.buf.mmap_offset &&
	       q.buf.size == ro_handle.buf.size &&
	       q.buf.flags == ro_handle.buf.flags;
}

/*
 * Read-only access, end to end, on objects of its own that then join the
 * pools: a buffer (READONLY or not) exported without O_RDWR gives a
 * dma-buf file without write access, which maps only without PROT_WRITE;
 * its DMABUF_IMPORT (into any file) is a READONLY handle (IMPORTED, not
 * FOREIGN), which maps only without PROT_WRITE, cannot be EXPORTed with
 * O_RDWR (EACCES) and gives READONLY handles through an IPC key.  Now and
 * then another driver's read-only dma-buf instead: READONLY and FOREIGN,
 * its mappings (through the exporter's mmap) read-only too.  Judged while
 * no fd the op uses may have been closed and its number reused.
 */
static void op_readonly(struct thr *t)
{
	struct npu_mem_dmabuf_import d = { 0 };
	struct npu_mem_alloc a = { 0 };
	struct npu_mem_export e = { 0 };
	struct npu_mem_ipc_export ie = { 0 };
	struct npu_mem_ipc_import ii = { 0 };
	int fd2 = some_devfd(t), fd = some_devfd(t), dfd = -1, i, err;
	uint64_t id = devfd_id(fd), id2 = devfd_id(fd2);
	bool foreign_ro = false;
	long ret;

	/* some_devfd() restarted the churn count: both are judged from here */
	if (!id || !id2)
		return;
	for (i = 0; i < (int)nforeign && chance(&t->r, 25); i++)
		if (foreign[i].ro) {
			dfd = foreign[i].fd;
			d.buf.size = foreign[i].size;
			foreign_ro = true;
			break;
		}
	if (!foreign_ro) {
		a.size = PAGE * (1 + below(&t->r, 4));
		a.policy = NPU_MEM_POLICY_NORMAL_ONLY;
		a.flags = chance(&t->r, 30) ? NPU_MEM_ALLOC_READONLY : 0;
		ret = ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a);
		record_ioctl(OP_READONLY, 1, fd, ret, errno, "fd %d ALLOC %#llx "
			     "flags %#x", fd, (unsigned long long)a.size, a.flags);
		if (ret)
			return;
		e.handle = a.handle;
		e.flags = O_CLOEXEC;
		ret = ioctl(fd, NPU_MEM_IOCTL_EXPORT, &e);
		record_ioctl(OP_READONLY, 5, fd, ret, errno, "fd %d EXPORT handle "
			     "%u without O_RDWR", fd, e.handle);
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ a.handle, 0 });
		if (ret)
			return;
		dfd = (int)e.fd;
		if (!access_mode_is(dfd, O_RDONLY))
			finding("EXPORT without O_RDWR gave a dma-buf file "
				"opened %#x", fcntl(dfd, F_GETFL) & O_ACCMODE);
		/* our own fd: no other thread closes it */
		assert_no_write_map(dfd, 0, a.buf.size, always,
				    "a dma-buf exported without O_RDWR");
	}

	d.fd = (uint32_t)dfd;
	ret = ioctl(fd2, NPU_MEM_IOCTL_DMABUF_IMPORT, &d);
	record_ioctl(OP_READONLY, _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT), fd2,
		     ret, errno, "fd %d DMABUF_IMPORT of a read-only %s dma-buf",
		     fd2, foreign_ro ? "foreign" : "npu-mem");
	if (!foreign_ro)
		add_fd(dfd, FD_DMABUF, a.buf.size, true);
	if (ret)
		return;
	if (!churned() &&
	    (d.buf.flags & (NPU_MEM_BUF_READONLY | NPU_MEM_BUF_IMPORTED |
			    NPU_MEM_BUF_FOREIGN)) !=
	    (NPU_MEM_BUF_READONLY | NPU_MEM_BUF_IMPORTED |
	     (foreign_ro ? NPU_MEM_BUF_FOREIGN : 0)))
		finding("DMABUF_IMPORT of a read-only %s dma-buf: flags %#x",
			foreign_ro ? "foreign" : "npu-mem", d.buf.flags);
	ro_handle.fd = fd2;
	ro_handle.handle = d.handle;
	ro_handle.buf = d.buf;
	assert_no_write_map(fd2, d.buf.mmap_offset, d.buf.size,
			    ro_handle_unchanged,
			    "a handle imported from a read-only dma-buf");

	if (!foreign_ro) {
		e = (struct npu_mem_export){ .handle = d.handle,
					     .flags = O_RDWR | O_CLOEXEC };
		ret = ioctl(fd2, NPU_MEM_IOCTL_EXPORT, &e);
		record_ioctl(OP_READONLY, 5, fd2, ret, errno, "fd %d EXPORT "
			     "O_RDWR of read-only handle %u", fd2, e.handle);
		if (ret == 0)
			close((int)e.fd);
		err = errno;
		if ((ret == 0 || err != EACCES) && ro_handle_unchanged())
			finding("EXPORT O_RDWR of a read-only handle: %s, want "
				"EACCES", ret ? strerrorname_np(err) ?: "?" : "done");

		/* any process of the user, this one too, through any file */
		ie.handle = d.handle;
		ret = ioctl(fd2, NPU_MEM_IOCTL_IPC_EXPORT, &ie);
		record_ioctl(OP_READONLY, _IOC_NR(NPU_MEM_IOCTL_IPC_EXPORT), fd2,
			     ret, errno, "fd %d IPC_EXPORT of read-only handle %u",
			     fd2, ie.handle);
		if (ret == 0) {
			memcpy(ii.key, ie.key, sizeof(ii.key));
			ret = ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, &ii);
			record_ioctl(OP_READONLY, _IOC_NR(NPU_MEM_IOCTL_IPC_IMPORT),
				     fd, ret, errno, "fd %d IPC_IMPORT of a key "
				     "of a read-only handle", fd);
			if (ret == 0 && !churned() &&
			    !(ii.buf.flags & NPU_MEM_BUF_READONLY))
				finding("IPC_IMPORT of a key made from a "
					"read-only handle: flags %#x",
					ii.buf.flags);
			if (ret == 0)
				keep_buf(fd, id, ii.handle, &ii.buf);
			ret = ioctl(fd2, NPU_MEM_IOCTL_IPC_REVOKE,
				    &(struct npu_mem_ipc_revoke){
					.key = { ie.key[0], ie.key[1] } });
			record_ioctl(OP_READONLY, _IOC_NR(NPU_MEM_IOCTL_IPC_REVOKE),
				     fd2, ret, errno, "fd %d IPC_REVOKE", fd2);
		}
	}
	keep_buf(fd2, id2, d.handle, &d.buf);
}

/* ------------------------------------------------------------------ */
/* IPC by key: keys the driver gave us, keys one bit off, invented ones */

#define MAX_KEYS	64

static struct fz_key {
	bool used;
	int fd;			/* the exporting fd number ... */
	uint64_t fdid;		/* ... and which open() it stood for */
	uint64_t key[2];
	uint32_t flags;
} keys[MAX_KEYS];		/* under st.lock */

/* A key to try: its slot in keys[] (-1 when invented or altered) and the
 * fd that exported it (-1 when unknown). */
static int some_key(struct thr *t, __u64 *key, int *owner)
{
	int i, n = 0, cand[MAX_KEYS], slot = -1;

	*owner = -1;
	if (!chance(&t->r, 10)) {
		pthread_mutex_lock(&st.lock);
		for (i = 0; i < MAX_KEYS; i++)
			if (keys[i].used)
				cand[n++] = i;
		if (n) {
			slot = cand[below(&t->r, n)];
			key[0] = keys[slot].key[0];
			key[1] = keys[slot].key[1];
			*owner = keys[slot].fd;
		}
		pthread_mutex_unlock(&st.lock);
	}
	if (slot < 0) {
		switch (below(&t->r, 4)) {
		case 0:
			key[0] = key[1] = 0;
			break;
		case 1:
			key[0] = key[1] = UINT64_MAX;
			break;
		case 2:			/* a KEY64 shape */
			key[0] = rnd(&t->r);
			key[1] = 0;
			break;
		default:
			key[0] = rnd(&t->r);
			key[1] = rnd(&t->r);
		}
		return -1;
	}
	if (chance(&t->r, 5)) {		/* one bit off: names nothing */
		key[below(&t->r, 2)] ^= 1ULL << below(&t->r, 64);
		return -1;
	}
	return slot;
}

static void op_ipc_export(struct thr *t)
{
	struct npu_mem_ipc_export *e = (void *)t->argbuf;
	int fd = some_devfd(t), slot;
	uint64_t id = devfd_id(fd);
	long ret;

	memset(e, 0, sizeof(*e));
	e->handle = some_handle(t, fd, &slot);
	e->flags = chance(&t->r, 90) ? (uint32_t)below(&t->r, 4) :
		   boundary32(&t->r);
	if (chance(&t->r, 5)) {		/* out fields: ignored */
		e->key[0] = rnd(&t->r);
		e->key[1] = rnd(&t->r);
	}
	ret = ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, e);
	record_ioctl(OP_IPC_EXPORT, _IOC_NR(NPU_MEM_IOCTL_IPC_EXPORT), fd, ret,
		     errno, "fd %d handle %u flags %#x", fd, e->handle, e->flags);
	if (ret)
		return;
	if (e->flags & ~NPU_MEM_IPC_EXPORT_VALID)
		finding("IPC_EXPORT accepted flags %#x", e->flags);
	if ((!e->key[0] && !e->key[1]) ||
	    ((e->flags & NPU_MEM_IPC_KEY64) && e->key[1]))
		finding("IPC_EXPORT flags %#x gave the key %016llx%016llx",
			e->flags, (unsigned long long)e->key[0],
			(unsigned long long)e->key[1]);
	pthread_mutex_lock(&st.lock);
	keys[below(&t->r, MAX_KEYS)] = (struct fz_key){
		true, fd, id, { e->key[0], e->key[1] }, e->flags,
	};
	pthread_mutex_unlock(&st.lock);
}

static void op_ipc_set_pids(struct thr *t)
{
	struct npu_mem_ipc_set_pids *s = (void *)t->argbuf;
	int32_t *pids = (int32_t *)(t->argbuf + 256);
	int owner, fd, n, i;
	long ret;

	memset(s, 0, sizeof(*s));
	some_key(t, s->key, &owner);
	fd = owner >= 0 && chance(&t->r, 80) ? owner : some_devfd(t);
	s->count = chance(&t->r, 85) ? 1 + (uint32_t)below(&t->r, 4) :
		   chance(&t->r, 30) ? 0 :
		   chance(&t->r, 50) ? NPU_MEM_IPC_MAX_PIDS +
				       (uint32_t)below(&t->r, 2) :
		   boundary32(&t->r);
	n = s->count < 8 ? (int)s->count : 8;
	for (i = 0; i < n; i++) {
		switch (below(&t->r, 8)) {
		case 0:
			pids[i] = (int32_t)boundary32(&t->r);
			break;
		case 1:
			pids[i] = 1;			/* init */
			break;
		case 2:
			pids[i] = (int32_t)syscall(SYS_gettid); /* a thread */
			break;
		default:
			pids[i] = getpid();
		}
	}
	switch (below(&t->r, 20)) {
	case 0:
		s->pids = 0;
		break;
	case 1:		/* running into the guard page */
		s->pids = (uintptr_t)(t->argbuf + 16384 - 4);
		((int32_t *)(uintptr_t)s->pids)[0] = getpid();
		break;
	case 2:
		s->pids = boundary64(&t->r);
		break;
	default:
		s->pids = (uintptr_t)pids;
	}
	if (chance(&t->r, 5))
		s->flags = boundary32(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_IPC_SET_PIDS, s);
	record_ioctl(OP_IPC_SET_PIDS, _IOC_NR(NPU_MEM_IOCTL_IPC_SET_PIDS), fd,
		     ret, errno, "fd %d count %u flags %#x", fd, s->count,
		     s->flags);
	if (ret == 0 && (s->flags || !s->count ||
			 s->count > NPU_MEM_IPC_MAX_PIDS))
		finding("IPC_SET_PIDS accepted count %u flags %#x", s->count,
			s->flags);
}

static void op_ipc_import(struct thr *t)
{
	struct npu_mem_ipc_import *im = (void *)t->argbuf;
	int fd = some_devfd(t), owner, i;
	uint64_t id = devfd_id(fd);
	struct npu_mem_query q;
	long ret;

	memset(im, 0, sizeof(*im));
	some_key(t, im->key, &owner);
	if (chance(&t->r, 5))
		im->flags = boundary32(&t->r);
	if (chance(&t->r, 5))
		im->handle = boundary32(&t->r);	/* out field: ignored */
	ret = ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, im);
	record_ioctl(OP_IPC_IMPORT, _IOC_NR(NPU_MEM_IOCTL_IPC_IMPORT), fd, ret,
		     errno, "fd %d key %016llx%016llx flags %#x", fd,
		     (unsigned long long)im->key[0],
		     (unsigned long long)im->key[1], im->flags);
	if (ret)
		return;
	if (im->flags || !im->handle || !(im->buf.flags & NPU_MEM_BUF_IMPORTED))
		finding("IPC_IMPORT accepted flags %#x or answered handle %u "
			"flags %#x", im->flags, im->handle, im->buf.flags);
	q = (struct npu_mem_query){ .handle = im->handle, .buf = im->buf };
	check_query_answer(&q, fd, NULL);
	/* Now and then gone at once, racing the exporter's FREE and REVOKE. */
	if (chance(&t->r, 30)) {
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ im->handle, 0 });
		return;
	}
	pthread_mutex_lock(&st.lock);
	for (i = 0; i < MAX_BUFS && st.bufs[i].used && st.bufs[i].live; i++)
		;
	if (i < MAX_BUFS) {
		st.bufs[i] = (struct fz_buf){ true, true, fd, im->handle,
					       im->buf.size, im->buf.mmap_offset,
					       im->buf.flags, id, im->buf };
		st.live_bytes += im->buf.size;
		pthread_mutex_unlock(&st.lock);
	} else {
		pthread_mutex_unlock(&st.lock);
		ioctl(fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ im->handle, 0 });
	}
}

static void op_ipc_revoke(struct thr *t)
{
	struct npu_mem_ipc_revoke *v = (void *)t->argbuf;
	int owner, fd, slot;
	long ret;

	memset(v, 0, sizeof(*v));
	slot = some_key(t, v->key, &owner);
	fd = owner >= 0 && chance(&t->r, 80) ? owner : some_devfd(t);
	if (chance(&t->r, 5))
		v->flags = boundary32(&t->r);
	if (chance(&t->r, 5))
		v->pad = boundary32(&t->r);
	ret = ioctl(fd, NPU_MEM_IOCTL_IPC_REVOKE, v);
	record_ioctl(OP_IPC_REVOKE, _IOC_NR(NPU_MEM_IOCTL_IPC_REVOKE), fd, ret,
		     errno, "fd %d flags %#x pad %#x", fd, v->flags, v->pad);
	if (ret)
		return;
	if (v->flags || v->pad)
		finding("IPC_REVOKE accepted flags %#x pad %#x", v->flags,
			v->pad);
	/* Kept now and then: a revoked key to try again. */
	pthread_mutex_lock(&st.lock);
	if (slot >= 0 && keys[slot].key[0] == v->key[0] &&
	    keys[slot].key[1] == v->key[1] && chance(&t->r, 70))
		keys[slot].used = false;
	pthread_mutex_unlock(&st.lock);
}

/*
 * A peer call on any handle for any index: the errors the header lists,
 * and never success with a wrong word or an index past the NPUs; a
 * mapping PEER_MAP or PEER_QUERY describes has an address unless hidden.
 */
static void op_peer(struct thr *t)
{
	static const unsigned long cmds[] = {
		NPU_MEM_IOCTL_PEER_MAP, NPU_MEM_IOCTL_PEER_UNMAP,
		NPU_MEM_IOCTL_PEER_QUERY,
	};
	static const char *const names[] = { "PEER_MAP", "PEER_UNMAP",
					     "PEER_QUERY" };
	struct npu_mem_peer *p = (void *)t->argbuf;
	unsigned int which = below(&t->r, 3);
	int fd = some_devfd(t), slot;
	bool bad;
	long ret;

	memset(p, 0, sizeof(*p));
	p->handle = some_handle(t, fd, &slot);
	p->device = chance(&t->r, 5) ? boundary32(&t->r) :
		    below(&t->r, npu_count + 1);
	if (chance(&t->r, 4))
		p->flags = boundary32(&t->r);
	if (chance(&t->r, 4))
		p->pad = boundary32(&t->r);
	if (chance(&t->r, 4))
		p->reserved = boundary64(&t->r);
	if (chance(&t->r, 5))
		p->dev_addr = boundary64(&t->r);	/* out field: ignored */
	bad = p->flags || p->pad || p->reserved || p->device >= npu_count;
	ret = ioctl(fd, cmds[which], p);
	record_ioctl(OP_PEER, _IOC_NR(cmds[which]), fd, ret, errno,
		     "fd %d %s handle %u device %#x", fd, names[which],
		     p->handle, p->device);
	if (ret)
		return;
	if (bad)
		finding("%s succeeded: flags %#x pad %#x reserved %#llx device %#x",
			names[which], p->flags, p->pad,
			(unsigned long long)p->reserved, p->device);
	else if (which != 1 && !p->dev_addr &&
		 !(p->buf_flags & NPU_MEM_BUF_DEV_HIDDEN))
		finding("%s: handle %u device %u mapped at address 0",
			names[which], p->handle, p->device);
}

/* ------------------------------------------------------------------ */
/* The zero reserve's watermarks                                        */

/*
 * Writing the watermarks while the other threads ALLOC and FREE makes the
 * reserve's thread fill and drain, ALLOC take chunks and FREE recycle them,
 * all at once.  At most ZR_MAX_MB per node: the reserve is outside max_bytes,
 * so this is what bounds the memory it can take from the guest.
 */
#define ZR_MAX_MB	64

static bool zr_on;		/* the module has the knobs, and we may write them */
static uint64_t zr_old_low, zr_old_high;

static void op_zero_reserve(struct thr *t)
{
	static const int E_NONE[] = { 0 };
	const char *name = chance(&t->r, 50) ? "zero_reserve_low_mb" :
					       "zero_reserve_high_mb";
	/* Mostly whole chunks; odd values round down to one. */
	uint64_t mb = chance(&t->r, 80) ? below(&t->r, ZR_MAX_MB / 2 + 1) * 2 :
					  below(&t->r, ZR_MAX_MB + 1);
	int ret;

	if (!zr_on)
		return;
	ret = nm_param_set(name, mb);
	record(OP_ZERO_RESERVE, ret ? -1 : 0, -ret, E_NONE, "%s=%llu", name,
	       (unsigned long long)mb);
}

static void zr_start(void)
{
	zr_on = geteuid() == 0 &&
		nm_param_get("zero_reserve_low_mb", &zr_old_low) == 0 &&
		nm_param_get("zero_reserve_high_mb", &zr_old_high) == 0;
}

/* Low first: a high under the low one counts as the low one. */
static void zr_set(uint64_t low, uint64_t high)
{
	if (!zr_on)
		return;
	if (nm_param_set("zero_reserve_low_mb", low) ||
	    nm_param_set("zero_reserve_high_mb", high))
		finding("cannot set the zero reserve's watermarks to %llu/%llu MiB",
			(unsigned long long)low, (unsigned long long)high);
}

/*
 * With both watermarks 0 the thread gives every chunk back: GET_INFO's
 * zero_reserve_bytes must reach 0.  Polled, since the drain is the thread's.
 */
static void zr_check_drained(void)
{
	struct npu_mem_info info;
	double end = nm_now() + 60;
	int fd;

	if (!zr_on)
		return;
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	memset(&info, 0, sizeof(info));
	while (ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) == 0 &&
	       info.zero_reserve_bytes && nm_now() < end)
		usleep(20000);
	if (info.zero_reserve_bytes)
		finding("zero reserve holds %llu bytes, not 0, with both watermarks at 0",
			(unsigned long long)info.zero_reserve_bytes);
	close(fd);
	nm_print_reserve_counters(stdout, "zero reserve since load, chunks:");
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
	[OP_PREDICT] = op_predict, [OP_DMABUF_IMPORT] = op_dmabuf_import,
	[OP_HOST_REGISTER] = op_host_register, [OP_READONLY] = op_readonly,
	[OP_IPC_EXPORT] = op_ipc_export, [OP_IPC_SET_PIDS] = op_ipc_set_pids,
	[OP_IPC_IMPORT] = op_ipc_import, [OP_IPC_REVOKE] = op_ipc_revoke,
	[OP_PEER] = op_peer,
	[OP_ZERO_RESERVE] = op_zero_reserve,
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
		    nm_now() >= deadline)
			atomic_store(&stop, true);
	}
	return NULL;
}


/* ------------------------------------------------------------------ */
/* Race mode: pairs of operations on one handle, in a child process     */

enum rop {
	R_ALLOC, R_FREE, R_QUERY, R_SYNC, R_EXPORT, R_MMAP, R_MUNMAP, R_CLOSE,
	R_HOSTREG, R_REMAP,
	R_NOPS
};

static const char *const rop_names[R_NOPS] = {
	"alloc", "free", "query", "sync", "export", "mmap", "munmap", "close",
	"host_register", "mmap_fixed",
};

#define R_NPAIRS	(R_NOPS * (R_NOPS + 1) / 2)	/* a <= b */
/*
 * How long each pair races, in rounds: a handle being made is the
 * narrowest window, so pairs with ALLOC race R_W_ALLOC times as long as
 * the others, and ALLOC against FREE (a handle made and unmade at once)
 * R_W_ALLOC_FREE times.  R_UNITS: all pairs once, in rounds.
 */
#define R_W_ALLOC	3
#define R_W_ALLOC_FREE	30
#define R_UNITS		(R_NPAIRS - R_NOPS + (R_NOPS - 1) * R_W_ALLOC + R_W_ALLOC_FREE)
#define R_MAPS		16
#define R_MAX_THREADS	8
#define UID_NOBODY	65534
#define RACE_NICE	(-10)

/* Shared with the parent (MAP_SHARED): its stop, our results. */
struct race_shared {
	atomic_bool stop;
	atomic_ulong findings, calls;
};

/* What the pair works on (rg.now, behind a sequence count). */
struct rstate {
	int fd;			/* the open file */
	uint64_t gen;		/* bumped when close replaces fd */
	bool cur_live;		/* the newest buffer, as far as we know */
	uint32_t cur;
	struct npu_mem_buffer cur_desc;
	uint32_t last;		/* newest handle handed out in this file */
	uint64_t next_off;	/* and the offset after its buffer */
};

/*
 * Readers of rg.now never block: a thread that sleeps on a lock the other
 * holds yields the CPU at a moment of the lock's choosing, which on one
 * CPU is most of the moments it could have been preempted at, in the
 * driver's windows included.  Writers (rare: a new buffer, a close) take
 * rg.lock and make rg.seq odd meanwhile.
 */
static struct {
	pthread_mutex_t lock;	/* writers of now; maps */
	atomic_uint seq;
	struct rstate now;
	struct {
		uint8_t *addr;
		size_t len;
	} maps[R_MAPS];
	int nmaps;

	/* rounds: written by thread 0 between the barriers */
	pthread_barrier_t bar;
	bool stop, has_alloc;
	enum rop op[2];
	double round_end, round_len, deadline;
	unsigned int order[R_NPAIRS], pair;
	unsigned long rounds, pair_rounds[R_NPAIRS];
	/* per pair: FREEs that freed a buffer being made; wrong ALLOC answers */
	atomic_ulong pair_next_freed[R_NPAIRS], pair_bad_alloc[R_NPAIRS];
	struct rng r0;
	struct race_shared *sh;
} rg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct {
	atomic_ulong calls, ok;
	atomic_ulong err[NERR];
} rstats[R_NOPS];
/* FREEs of a handle not yet seen that freed something: the pair raced
 * with the buffer's ALLOC */
static atomic_ulong r_next_freed;

struct rthr {
	int idx;
	struct rng r;
	pthread_t tid;
};

/* What an operation aims at: the newest buffer, or the next handle. */
struct rtarget {
	int fd;
	uint64_t gen;
	uint32_t h;
	bool known;		/* h is cur, desc its ALLOC answer */
	struct npu_mem_buffer desc;
	uint64_t off;
};

static void pair_ops(unsigned int p, enum rop *a, enum rop *b)
{
	unsigned int i, j;

	*a = *b = R_ALLOC;
	for (i = 0; i < R_NOPS; i++)
		for (j = i; j < R_NOPS; j++)
			if (p-- == 0) {
				*a = i;
				*b = j;
				return;
			}
}

static void rg_read(struct rstate *x)
{
	unsigned int seq;

	for (;;) {
		seq = atomic_load_explicit(&rg.seq, memory_order_acquire);
		if (seq & 1) {
			sched_yield();	/* the writer was preempted */
			continue;
		}
		memcpy(x, (const void *)&rg.now, sizeof(*x));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&rg.seq, memory_order_relaxed) == seq)
			return;
	}
}

static void rg_write_begin(void)
{
	pthread_mutex_lock(&rg.lock);
	atomic_fetch_add_explicit(&rg.seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void rg_write_end(void)
{
	atomic_fetch_add_explicit(&rg.seq, 1, memory_order_release);
	pthread_mutex_unlock(&rg.lock);
}

static uint64_t race_gen(void)
{
	struct rstate x;

	rg_read(&x);
	return x.gen;
}

/*
 * One race-mode call's result.  allowed: the errors the call may give
 * (ended by 0).  When close replaced the fd during the call, the number
 * may have named nothing or another file: EBADF, ENOTTY, ENODEV are then
 * not the driver's.
 */
static void race_record(enum rop op, uint64_t gen, long ret, int err,
			const int *allowed, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void race_record(enum rop op, uint64_t gen, long ret, int err,
			const int *allowed, const char *fmt, ...)
{
	char kind[80], text[300];
	const int *a;
	va_list ap;

	atomic_fetch_add(&rstats[op].calls, 1);
	atomic_fetch_add(&total_calls, 1);
	if (ret >= 0) {
		atomic_fetch_add(&rstats[op].ok, 1);
		return;
	}
	atomic_fetch_add(&rstats[op].err[err > 0 && err < NERR ? err : 0], 1);
	for (a = allowed; *a; a++)
		if (*a == err)
			return;
	if ((err == EBADF || err == ENOTTY || err == ENODEV) && race_gen() != gen)
		return;
	snprintf(kind, sizeof(kind), "%s: unexpected %s", rop_names[op],
		 strerrorname_np(err) ?: "?");
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	finding_k(kind, "%s (%d): %s", kind, err, text);
}

static const int RE_NONE[] = { 0 };
static const int RE_ENOENT[] = { ENOENT, 0 };

static void race_target(struct rthr *t, struct rtarget *x)
{
	/* With ALLOC in the pair, mostly the handle it is making next. */
	unsigned int pct_next = rg.has_alloc ? 70 : 20;
	struct rstate n;

	rg_read(&n);
	x->fd = n.fd;
	x->gen = n.gen;
	if (n.cur_live && !chance(&t->r, pct_next)) {
		x->h = n.cur;
		x->known = true;
		x->desc = n.cur_desc;
		x->off = n.cur_desc.mmap_offset;
	} else {
		x->h = n.last + 1 + (chance(&t->r, 25) ? below(&t->r, 3) : 0);
		x->known = false;
		x->off = n.next_off;
	}
}

/* Read a byte of a mapping that must be there: a fault is a finding. */
static void race_probe(volatile uint8_t *p, const char *what)
{
	sigjmp_buf jb;
	int sig;

	sig = sigsetjmp(jb, 1);
	if (!sig) {
		probe_jmp = &jb;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		(void)*p;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_jmp = NULL;
	if (sig)
		finding("reading %s faulted (%s)", what, strsignal(sig));
}

static void race_alloc(struct rthr *t)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} kinds_[] = {
		/* mostly the cheapest: the more ALLOCs, the more windows */
		{ PAGE, NPU_MEM_POLICY_NORMAL_ONLY },
		{ PAGE, NPU_MEM_POLICY_NORMAL_ONLY },
		{ PAGE, NPU_MEM_POLICY_HUGE_FIRST },
		{ 2 * PAGE + 1, NPU_MEM_POLICY_HUGE_FIRST },
		{ HUGE, NPU_MEM_POLICY_HUGE_FIRST },
		{ 16 * PAGE, NPU_MEM_POLICY_NORMAL_ONLY },
		{ HUGE + PAGE, NPU_MEM_POLICY_HUGE_FIRST },
	};
	unsigned int k = below(&t->r, sizeof(kinds_) / sizeof(kinds_[0]));
	struct npu_mem_alloc a = {
		.size = kinds_[k].size, .policy = kinds_[k].policy,
		.flags = chance(&t->r, 12) ? NPU_MEM_ALLOC_READONLY : 0,
	};
	uint32_t prev = 0;
	bool prev_live = false;
	struct rstate n;
	uint64_t gen;
	long ret;
	int fd, err;

	rg_read(&n);
	fd = n.fd;
	gen = n.gen;
	ret = ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a);
	err = errno;
	if (ret) {
		/* ENOMEM: the global cap, which the other threads share */
		race_record(R_ALLOC, gen, ret, err, (const int[]){ ENOMEM, 0 },
			    "ALLOC %#llx policy %u", (unsigned long long)a.size, a.policy);
		return;
	}
	/* Publish first, so that the other thread's FREEs move on to the
	 * next handle at once: the one this thread's next ALLOC makes. */
	rg_write_begin();
	if (rg.now.gen == gen) {
		prev = rg.now.cur;
		prev_live = rg.now.cur_live;
		rg.now.cur = a.handle;
		rg.now.cur_desc = a.buf;
		rg.now.cur_live = true;
		if ((int32_t)(a.handle - rg.now.last) > 0) {
			rg.now.last = a.handle;
			rg.now.next_off = a.buf.mmap_offset + a.buf.size;
		}
	}
	rg_write_end();
	race_record(R_ALLOC, gen, 0, 0, RE_NONE, "ALLOC");
	if (check_alloc_answer(&a, fd) & ~(1U << NM_DESC_DEV))
		atomic_fetch_add(&rg.pair_bad_alloc[rg.pair], 1);
	/* One buffer at a time (plus those mappings keep): free the last one,
	 * racing whatever the other thread does with it. */
	if (prev_live) {
		struct npu_mem_free f = { .handle = prev };

		ret = ioctl(fd, NPU_MEM_IOCTL_FREE, &f);
		race_record(R_FREE, gen, ret, errno, RE_ENOENT, "FREE of previous %u", prev);
	}
}

static void race_free(struct rthr *t)
{
	struct rtarget x;
	struct npu_mem_free f;
	long ret;

	race_target(t, &x);
	f = (struct npu_mem_free){ .handle = x.h };
	ret = ioctl(x.fd, NPU_MEM_IOCTL_FREE, &f);
	race_record(R_FREE, x.gen, ret, errno, RE_ENOENT, "FREE %u", x.h);
	if (ret)
		return;
	if (!x.known) {
		atomic_fetch_add(&r_next_freed, 1);
		atomic_fetch_add(&rg.pair_next_freed[rg.pair], 1);
	}
	rg_write_begin();
	if (rg.now.gen == x.gen && rg.now.cur == x.h)
		rg.now.cur_live = false;
	rg_write_end();
}

static void race_query(struct rthr *t)
{
	struct rtarget x;
	struct npu_mem_query q;
	long ret;

	race_target(t, &x);
	q = (struct npu_mem_query){ .handle = x.h };
	ret = ioctl(x.fd, NPU_MEM_IOCTL_QUERY, &q);
	race_record(R_QUERY, x.gen, ret, errno, RE_ENOENT, "QUERY %u", x.h);
	if (ret == 0)
		check_query_answer(&q, x.fd, x.known && race_gen() == x.gen ?
				   &x.desc : NULL);
}

static void race_sync(struct rthr *t)
{
	struct rtarget x;
	struct npu_mem_sync sy;
	long ret;

	race_target(t, &x);
	/* Every buffer has a page at least: only the handle can be wrong. */
	sy = (struct npu_mem_sync){
		.handle = x.h, .direction = 1 + below(&t->r, 3), .length = PAGE,
	};
	ret = ioctl(x.fd, NPU_MEM_IOCTL_SYNC, &sy);
	race_record(R_SYNC, x.gen, ret, errno, RE_ENOENT, "SYNC %u dir %u", x.h,
		    sy.direction);
}

static void race_export(struct rthr *t)
{
	struct rtarget x;
	struct npu_mem_export e;
	uint8_t *p;
	long ret;

	race_target(t, &x);
	e = (struct npu_mem_export){
		.handle = x.h,
		.flags = O_CLOEXEC | (chance(&t->r, 30) ? O_RDWR : 0),
	};
	ret = ioctl(x.fd, NPU_MEM_IOCTL_EXPORT, &e);
	/* EACCES: O_RDWR of a READONLY buffer */
	race_record(R_EXPORT, x.gen, ret, errno,
		    e.flags & O_RDWR ? (const int[]){ ENOENT, EACCES, 0 } : RE_ENOENT,
		    "EXPORT %u flags %#x", x.h, e.flags);
	if (ret)
		return;
	if (chance(&t->r, 50)) {
		/* The dma-buf holds the buffer, whatever happened to the handle. */
		p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, (int)e.fd, 0);
		if (p == MAP_FAILED) {
			finding("mmap of a fresh dma-buf of handle %u: %s", x.h,
				strerrorname_np(errno) ?: "?");
		} else {
			race_probe(p, "a dma-buf mapping");
			munmap(p, PAGE);
		}
	}
	close((int)e.fd);
}

static void race_keep_map(uint8_t *p, size_t len)
{
	pthread_mutex_lock(&rg.lock);
	if (rg.nmaps < R_MAPS) {
		rg.maps[rg.nmaps].addr = p;
		rg.maps[rg.nmaps].len = len;
		rg.nmaps++;
		p = NULL;
	}
	pthread_mutex_unlock(&rg.lock);
	if (p)
		munmap(p, len);
}

static void race_mmap(struct rthr *t)
{
	struct rtarget x;
	size_t len = PAGE;
	int prot = PROT_READ;
	uint8_t *p;

	race_target(t, &x);
	if (x.known && chance(&t->r, 30))
		len = x.desc.size;
	if (!(x.known && (x.desc.flags & NPU_MEM_BUF_READONLY)) && chance(&t->r, 70))
		prot |= PROT_WRITE;
	p = mmap(NULL, len, prot, MAP_SHARED, x.fd, (off_t)x.off);
	/* EINVAL: no buffer at that offset (not yet, or no more);
	 * EACCES: PROT_WRITE of a READONLY buffer */
	race_record(R_MMAP, x.gen, p == MAP_FAILED ? -1 : 0, errno,
		    prot & PROT_WRITE ? (const int[]){ EINVAL, EACCES, 0 } :
					(const int[]){ EINVAL, 0 },
		    "mmap offset %#llx len %#zx prot %#x", (unsigned long long)x.off,
		    len, prot);
	if (p == MAP_FAILED)
		return;
	race_probe(p + len - 1, "a fresh mapping");
	if (prot & PROT_WRITE)
		p[0] = 1;
	race_keep_map(p, len);
}

static void race_munmap(struct rthr *t)
{
	uint8_t *p = NULL;
	size_t len = 0;
	uint64_t gen;
	long ret;

	gen = race_gen();
	pthread_mutex_lock(&rg.lock);
	if (rg.nmaps) {
		rg.nmaps--;
		p = rg.maps[rg.nmaps].addr;
		len = rg.maps[rg.nmaps].len;
	}
	pthread_mutex_unlock(&rg.lock);
	if (!p) {
		/* Nothing mapped: map the newest buffer, to unmap it. */
		race_mmap(t);
		return;
	}
	/* The mapping holds its buffer, freed or closed or not. */
	race_probe(p, "a mapping");
	race_probe(p + len - 1, "a mapping's end");
	ret = munmap(p, len);
	race_record(R_MUNMAP, gen, ret, errno, RE_NONE, "munmap %p len %#zx", p, len);
}

static void race_close(struct rthr *t)
{
	int nfd = open(DEV_PATH, O_RDWR | O_CLOEXEC), err = errno, old;
	uint64_t gen;
	long ret;

	(void)t;
	race_record(R_CLOSE, race_gen(), nfd, err, (const int[]){ ENOMEM, EMFILE, ENFILE, 0 },
		    "open");
	if (nfd < 0)
		return;
	rg_write_begin();
	old = rg.now.fd;
	rg.now.fd = nfd;
	gen = ++rg.now.gen;
	rg.now.cur_live = false;
	rg.now.last = 0;
	rg.now.next_off = PAGE;
	rg_write_end();
	/* The other thread may be inside a call on old right now. */
	ret = close(old);
	race_record(R_CLOSE, gen, ret, errno, RE_NONE, "close(%d)", old);
}

/*
 * HOST_REGISTER against mmap(MAP_FIXED) over the same range: R_REMAP maps
 * pages of a reserved range anew, each time as one kind of memory, and
 * R_HOSTREG registers pieces of it through a file of its own (so that the
 * registrations never take the handle numbers the other operations aim
 * at).  A remap happens inside a sequence count; a registration that no
 * remap overlapped is judged against what the header says of the kinds
 * under it: the first page (in address order) whose kind is refused
 * decides the error, and a range all of pinnable kinds registers (or, as
 * for ALLOC, ENOMEM).  A writable one is refused (EEXIST) after that if a
 * page it would pin is one the kept writable registration holds: the
 * same page of the range, not remapped since (the header's one writable
 * registration per page).  One that a remap or another registration
 * overlapped may also fail with whatever the range was meanwhile, and must
 * not break the kernel.
 */
#define H_PAGES		8
enum hkind {
	HK_UNKNOWN,	/* a failed remap left we do not know what */
	HK_ANON,	/* private anonymous, read-write: pinnable */
	HK_SHARED,	/* shared anonymous (shmem), read-write: pinnable */
	HK_RDONLY,	/* private anonymous, PROT_READ: EFAULT if written */
	HK_NONE,	/* PROT_NONE: EFAULT */
	HK_FILE,	/* shared mapping of a file on a real filesystem: EOPNOTSUPP */
	HK_OWN,		/* npu-mem's own mapping: EEXIST */
	HK_NKINDS
};

static const char hk_letter[HK_NKINDS] = "?asrnfo";

static struct {
	pthread_mutex_t lock;	/* remaps, one at a time; keep */
	atomic_uint seq;	/* odd while a remap is under way */
	uint8_t *base;
	unsigned char kind[H_PAGES];	/* enum hkind, per page */
	unsigned int gen[H_PAGES];	/* remaps of each page */
	int fd;			/* the registrations' own open file */
	int file;		/* a file for HK_FILE, or -1 */
	struct npu_mem_alloc own;	/* a buffer of fd, for HK_OWN */
	struct {		/* the newest registration, freed by the next */
		uint32_t handle;
		bool write;
		bool unsure;	/* a remap meanwhile: which pages it holds */
		unsigned int first, n;
		unsigned int gen[H_PAGES];	/* of its pages, when made */
	} keep;
	atomic_uint regs_active, regs_started;
	atomic_ulong judged, overlapped;
} hr = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .file = -1 };

/* 0 (pinnable), -errno the header gives for the kinds, or 1: unknown. */
static int hk_expect(const unsigned char *kind, unsigned int n, bool write)
{
	for (unsigned int i = 0; i < n; i++) {
		switch (kind[i]) {
		case HK_ANON:
		case HK_SHARED:
			break;
		case HK_RDONLY:
			if (write)
				return -EFAULT;
			break;
		case HK_NONE:
			return -EFAULT;
		case HK_FILE:
			return -EOPNOTSUPP;
		case HK_OWN:
			return -EEXIST;
		default:
			return 1;
		}
	}
	return 0;
}

/* Map [first, first + n) of the range as kind k: 0 or -errno. */
static int hk_map(unsigned int first, unsigned int n, enum hkind k, bool touch)
{
	uint8_t *at = hr.base + first * PAGE, *p;
	size_t len = n * PAGE;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_FIXED, fd = -1;
	off_t off = 0;

	switch (k) {
	case HK_SHARED:
		flags |= MAP_SHARED | MAP_ANONYMOUS;
		break;
	case HK_RDONLY:
		prot = PROT_READ;
		flags |= MAP_PRIVATE | MAP_ANONYMOUS;
		break;
	case HK_NONE:
		prot = PROT_NONE;
		flags |= MAP_PRIVATE | MAP_ANONYMOUS;
		break;
	case HK_FILE:
		prot = PROT_READ;
		flags |= MAP_SHARED;
		fd = hr.file;
		off = (off_t)(first * PAGE);
		break;
	case HK_OWN:
		/* made elsewhere and moved over: a failed device mmap with
		 * MAP_FIXED would leave a hole others' mmap(NULL) could take */
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, hr.fd,
			 (off_t)hr.own.buf.mmap_offset);
		if (p == MAP_FAILED)
			return -errno;
		if (mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, at) == at)
			return 0;
		munmap(p, len);
		return -errno;
	default:
		flags |= MAP_PRIVATE | MAP_ANONYMOUS;
		break;
	}
	p = mmap(at, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		return -errno;
	if (k == HK_ANON && touch)
		memset(p, 0x5a, len);	/* else its pages are the zero page */
	return 0;
}

static void race_remap(struct rthr *t)
{
	unsigned int first = below(&t->r, H_PAGES);
	unsigned int n = 1 + below(&t->r, H_PAGES - first);
	enum hkind k = 1 + below(&t->r, HK_NKINDS - 1);
	bool touch = chance(&t->r, 50);
	int ret;

	if ((k == HK_FILE && hr.file < 0) || (k == HK_OWN && !hr.own.handle))
		k = HK_ANON;
	if (k == HK_OWN && n * PAGE > hr.own.buf.size)
		n = (unsigned int)(hr.own.buf.size / PAGE);
	pthread_mutex_lock(&hr.lock);
	atomic_fetch_add(&hr.seq, 1);
	ret = hk_map(first, n, k, touch);
	/* whatever a failure left (a hole even): make it known again */
	if (ret && hk_map(first, n, HK_NONE, false))
		k = HK_UNKNOWN;
	else if (ret)
		k = HK_NONE;
	for (unsigned int i = first; i < first + n; i++) {
		__atomic_store_n(&hr.kind[i], k, __ATOMIC_RELAXED);
		hr.gen[i]++;	/* read under hr.lock only */
	}
	atomic_fetch_add(&hr.seq, 1);
	pthread_mutex_unlock(&hr.lock);
	/* ENOMEM: out of map count; the device mapping's own errors */
	race_record(R_REMAP, 0, ret ? -1 : 0, -ret,
		    (const int[]){ ENOMEM, EINVAL, EACCES, 0 },
		    "mmap MAP_FIXED of pages %u+%u as %c", first, n, hk_letter[k]);
}

static void race_hostreg(struct rthr *t)
{
	unsigned int first = below(&t->r, H_PAGES);
	unsigned int n = 1 + below(&t->r, H_PAGES - first), s1, s2;
	bool write = chance(&t->r, 70);
	struct npu_mem_host_register h = {
		.addr = (uintptr_t)(hr.base + first * PAGE), .size = n * PAGE,
		.flags = write ? 0 : NPU_MEM_HOST_READONLY,
	};
	unsigned char kind[H_PAGES];
	char kinds[H_PAGES + 1] = "";
	int expect, got, err;
	bool alone, held = false, unsure = false;
	unsigned int r1;
	uint32_t old = 0;
	long ret;

	r1 = atomic_fetch_add(&hr.regs_started, 1) + 1;
	alone = atomic_fetch_add(&hr.regs_active, 1) == 0;
	s1 = atomic_load(&hr.seq);
	pthread_mutex_lock(&hr.lock);
	for (unsigned int i = 0; i < n; i++) {
		unsigned int p = first + i;

		kind[i] = __atomic_load_n(&hr.kind[p], __ATOMIC_RELAXED);
		if (!hr.keep.handle || !hr.keep.write || !write ||
		    p < hr.keep.first || p >= hr.keep.first + hr.keep.n)
			continue;
		unsure |= hr.keep.unsure;
		held |= hr.keep.gen[p] == hr.gen[p];
	}
	pthread_mutex_unlock(&hr.lock);
	expect = hk_expect(kind, n, write);
	if (!expect && unsure)
		expect = 1;
	else if (!expect && held)
		expect = -EEXIST;
	ret = ioctl(hr.fd, NPU_MEM_IOCTL_HOST_REGISTER, &h);
	err = errno;
	s2 = atomic_load(&hr.seq);
	/* another registration meanwhile may have held any page */
	alone = alone && atomic_load(&hr.regs_started) == r1;
	race_record(R_HOSTREG, 0, ret, err,
		    (const int[]){ EFAULT, EOPNOTSUPP, EEXIST, ENOMEM, 0 },
		    "HOST_REGISTER pages %u+%u flags %#x", first, n, h.flags);
	got = ret ? -err : 0;
	if (s1 == s2 && !(s1 & 1) && expect != 1 && alone) {
		atomic_fetch_add(&hr.judged, 1);
		if (got != expect && !(expect == 0 && got == -ENOMEM)) {
			for (unsigned int i = 0; i < n; i++)
				kinds[i] = hk_letter[kind[i]];
			kinds[n] = 0;
			finding("HOST_REGISTER %s of pages %u+%u (kinds %s, no "
				"remap meanwhile): %s, want %s",
				write ? "writable" : "read-only", first, n, kinds,
				got ? strerrorname_np(-got) ?: "?" : "0",
				expect ? strerrorname_np(-expect) ?: "?" : "0");
		}
	} else {
		atomic_fetch_add(&hr.overlapped, 1);
	}
	if (ret) {
		atomic_fetch_sub(&hr.regs_active, 1);
		return;
	}
	check_desc(false, &h.buf, &(struct nm_desc_expect){
			.req_known = true, .req = h.size,
			.policy = NPU_MEM_POLICY_NORMAL_ONLY,
			.alloc_flags = write ? 0 : NPU_MEM_ALLOC_READONLY,
			.hidden = main_hidden },
		   "race HOST_REGISTER pages %u+%u -> handle %u", first, n,
		   h.handle);
	/*
	 * The newest stays registered while the range changes under it.  Its
	 * pages are the ones mapped at s1, unless a remap since then gave it
	 * some new ones: then which ones it holds is unsure.
	 */
	pthread_mutex_lock(&hr.lock);
	old = hr.keep.handle;
	hr.keep.handle = h.handle;
	hr.keep.write = write;
	hr.keep.unsure = s1 != atomic_load(&hr.seq) || (s1 & 1);
	hr.keep.first = first;
	hr.keep.n = n;
	memcpy(hr.keep.gen, hr.gen, sizeof(hr.gen));
	pthread_mutex_unlock(&hr.lock);
	if (old) {
		ret = ioctl(hr.fd, NPU_MEM_IOCTL_FREE, &(struct npu_mem_free){ old, 0 });
		race_record(R_HOSTREG, 0, ret, errno, RE_NONE,
			    "FREE of registration %u", old);
	}
	atomic_fetch_sub(&hr.regs_active, 1);
}

/* Before the threads: the range (PROT_NONE), its file and its buffer. */
static int hostreg_setup(void)
{
	hr.base = mmap(NULL, H_PAGES * PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hr.base == MAP_FAILED)
		return -errno;
	for (unsigned int i = 0; i < H_PAGES; i++)
		hr.kind[i] = HK_NONE;
	hr.fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (hr.fd < 0)
		return -errno;
	hr.own = (struct npu_mem_alloc){ .size = H_PAGES * PAGE,
					 .policy = NPU_MEM_POLICY_NORMAL_ONLY };
	if (ioctl(hr.fd, NPU_MEM_IOCTL_ALLOC, &hr.own))
		hr.own.handle = 0;
	return 0;
}

/* This program's own file (the guest's 9p root, not shmem), opened while
 * the process may still read it wherever it is. */
static void hostreg_file(void)
{
	struct statfs sf;

	hr.file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (hr.file >= 0 && (fstatfs(hr.file, &sf) ||
			     sf.f_type == TMPFS_MAGIC ||
			     sf.f_type == HUGETLBFS_MAGIC)) {
		close(hr.file);
		hr.file = -1;
	}
}

static void hostreg_teardown(void)
{
	munmap(hr.base, H_PAGES * PAGE);
	if (hr.file >= 0)
		close(hr.file);
	close(hr.fd);	/* frees the registration kept and the buffer */
	printf("%shost_register/mmap_fixed: %lu registrations judged, %lu "
	       "overlapped a remap; %s\n", who, atomic_load(&hr.judged),
	       atomic_load(&hr.overlapped),
	       hr.file >= 0 ? "file mappings too" : "no file to map (tmpfs?)");
}

static void race_op(struct rthr *t, enum rop op)
{
	struct rstate n;

	/* Pairs that make no buffer still need one to fight over. */
	if (!rg.has_alloc && op != R_CLOSE && op != R_HOSTREG && op != R_REMAP) {
		rg_read(&n);
		if (!n.cur_live)
			race_alloc(t);
	}
	switch (op) {
	case R_ALLOC: race_alloc(t); break;
	case R_FREE: race_free(t); break;
	case R_QUERY: race_query(t); break;
	case R_SYNC: race_sync(t); break;
	case R_EXPORT: race_export(t); break;
	case R_MMAP: race_mmap(t); break;
	case R_MUNMAP: race_munmap(t); break;
	case R_CLOSE: race_close(t); break;
	case R_HOSTREG: race_hostreg(t); break;
	case R_REMAP: race_remap(t); break;
	case R_NOPS: break;
	}
}

/* Thread 0, between the barriers: the next pair, in a shuffled order that
 * covers every pair once per R_NPAIRS rounds. */
static void race_next_round(void)
{
	unsigned int k = rg.rounds % R_NPAIRS, i, j, tmp, p;
	enum rop a, b;

	if (nm_now() >= rg.deadline || atomic_load(&rg.sh->stop)) {
		rg.stop = true;
		return;
	}
	if (k == 0)
		for (i = R_NPAIRS - 1; i > 0; i--) {
			j = below(&rg.r0, i + 1);
			tmp = rg.order[i];
			rg.order[i] = rg.order[j];
			rg.order[j] = tmp;
		}
	p = rg.order[k];
	rg.pair = p;
	pair_ops(p, &a, &b);
	if (chance(&rg.r0, 50)) {
		rg.op[0] = a;
		rg.op[1] = b;
	} else {
		rg.op[0] = b;
		rg.op[1] = a;
	}
	rg.has_alloc = a == R_ALLOC || b == R_ALLOC;
	rg.pair_rounds[p]++;
	rg.rounds++;
	rg.round_end = nm_now() + rg.round_len *
		((a == R_ALLOC && b == R_FREE) ? R_W_ALLOC_FREE : rg.has_alloc ? R_W_ALLOC : 1);
}

static void *race_thread(void *arg)
{
	struct rthr *t = arg;

	for (;;) {
		if (t->idx == 0)
			race_next_round();
		pthread_barrier_wait(&rg.bar);
		if (rg.stop)
			break;
		while (nm_now() < rg.round_end && !atomic_load(&rg.sh->stop))
			race_op(t, rg.op[t->idx % 2]);
		pthread_barrier_wait(&rg.bar);
	}
	return NULL;
}

static int become_nobody(void)
{
	/* Room for what the race keeps mapped; the cap is max_bytes anyway. */
	struct rlimit rl = { 256ULL << 20, 256ULL << 20 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(UID_NOBODY, UID_NOBODY, UID_NOBODY) ||
	    setresuid(UID_NOBODY, UID_NOBODY, UID_NOBODY))
		return -errno;
	return 0;
}

static void race_print(void)
{
	unsigned long lo = ULONG_MAX, hi = 0, covered = 0;
	unsigned int i, k;
	enum rop a, b;

	printf("\n%s%-16s %10s %10s  errors (errno: count)\n", who, "operation",
	       "calls", "ok");
	for (i = 0; i < R_NOPS; i++) {
		printf("%s%-16s %10lu %10lu ", who, rop_names[i],
		       atomic_load(&rstats[i].calls), atomic_load(&rstats[i].ok));
		for (k = 0; k < NERR; k++) {
			unsigned long n = atomic_load(&rstats[i].err[k]);

			if (n)
				printf(" %s:%lu", k ? strerrorname_np(k) ?: "?" : "?", n);
		}
		printf("\n");
	}
	for (i = 0; i < R_NPAIRS; i++) {
		if (rg.pair_rounds[i])
			covered++;
		if (rg.pair_rounds[i] < lo)
			lo = rg.pair_rounds[i];
		if (rg.pair_rounds[i] > hi)
			hi = rg.pair_rounds[i];
	}
	printf("%s%lu rounds of %.0f ms (with ALLOC: %d times that, ALLOC/FREE %d); "
	       "%lu of %d pairs raced (%lu to %lu rounds each); "
	       "%lu FREEs of a next handle freed a buffer being made\n", who,
	       rg.rounds, rg.round_len * 1000, R_W_ALLOC, R_W_ALLOC_FREE, covered, R_NPAIRS,
	       lo, hi,
	       atomic_load(&r_next_freed));
	for (i = 0; i < R_NPAIRS; i++) {
		if (!rg.pair_next_freed[i] && !rg.pair_bad_alloc[i])
			continue;
		pair_ops(i, &a, &b);
		printf("%s  %s/%s: %lu FREEs of a buffer being made, %lu wrong ALLOC "
		       "answers (rules other than dev_addr)\n", who, rop_names[a],
		       rop_names[b], atomic_load(&rg.pair_next_freed[i]),
		       atomic_load(&rg.pair_bad_alloc[i]));
	}
	if (covered < R_NPAIRS) {
		printf("%spairs not raced (run too short):", who);
		for (i = 0; i < R_NPAIRS; i++)
			if (!rg.pair_rounds[i]) {
				pair_ops(i, &a, &b);
				printf(" %s/%s", rop_names[a], rop_names[b]);
			}
		printf("\n");
	}
}

/*
 * The race-mode process: forked before any thread exists, so it owns a
 * clean copy of everything.  Its findings reach the parent through sh.
 */
static int race_child(unsigned int n, uint64_t seed, double secs, bool drop,
		      struct race_shared *sh)
{
	struct rthr thr[R_MAX_THREADS];
	struct npu_mem_info info;
	unsigned int i;
	int ret;

	who = "race: ";
	rg.sh = sh;
	/*
	 * On one CPU a window is hit when the thread inside it is preempted
	 * there and the other of the pair runs next: how often that happens
	 * grows with the pair's share of the CPU, which the random threads
	 * would otherwise take two thirds of.  (Root only; harmless if not.)
	 */
	if (setpriority(PRIO_PROCESS, 0, RACE_NICE))
		errno = 0;
	hostreg_file();
	if (drop) {
		ret = become_nobody();
		if (ret) {
			finding("cannot become uid %d: %s", UID_NOBODY,
				strerrorname_np(-ret) ?: "?");
			goto out;
		}
	}
	rg.now.fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	memset(&info, 0, sizeof(info));
	if (rg.now.fd < 0 || ioctl(rg.now.fd, NPU_MEM_IOCTL_GET_INFO, &info)) {
		finding("open/GET_INFO of %s as uid %u: %s", DEV_PATH, getuid(),
			strerrorname_np(errno) ?: "?");
		goto out;
	}
	/* Privileges are the opener's: this process's, now. */
	main_hidden = !(info.dev_flags & NPU_MEM_DEV_IOMMU) && !nm_desc_cap_sys_admin();
	printf("%s%u threads as uid %u, device addresses %s, seed %llu\n", who, n,
	       getuid(), main_hidden ? "hidden" : "shown", (unsigned long long)seed);
	ret = hostreg_setup();
	if (ret) {
		finding("host_register race setup: %s", strerrorname_np(-ret) ?: "?");
		goto out;
	}
	rg.now.gen = 1;
	rg.now.next_off = PAGE;
	/* Each pair four times over the run, when it is long enough. */
	rg.round_len = secs / (4 * R_UNITS);
	if (rg.round_len < 0.02)
		rg.round_len = 0.02;
	if (rg.round_len > 0.25)
		rg.round_len = 0.25;
	rg.deadline = nm_now() + secs;
	rg.r0.s = seed * 0x100000001b3ULL + 0xace;
	for (i = 0; i < R_NPAIRS; i++)
		rg.order[i] = i;
	pthread_barrier_init(&rg.bar, NULL, n);
	for (i = 0; i < n; i++) {
		thr[i].idx = i;
		thr[i].r.s = seed * 0x100000001b3ULL + (i + 64) * 0x9e3779b97f4a7c15ULL + 1;
		if (i && pthread_create(&thr[i].tid, NULL, race_thread, &thr[i])) {
			finding("pthread_create failed");
			_exit(1);	/* the barrier would wait for it */
		}
	}
	race_thread(&thr[0]);
	for (i = 1; i < n; i++)
		pthread_join(thr[i].tid, NULL);

	for (i = 0; i < (unsigned int)rg.nmaps; i++)
		munmap(rg.maps[i].addr, rg.maps[i].len);
	close(rg.now.fd);
	hostreg_teardown();
	race_print();
out:
	print_kinds();
	atomic_store(&sh->findings, atomic_load(&findings));
	atomic_store(&sh->calls, atomic_load(&total_calls));
	fflush(stdout);
	return atomic_load(&findings) ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Setup, cleanup, invariants                                           */

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

/* The race-mode process ends at the same deadline; it gets RACE_GRACE
 * seconds more (a hung one is a finding: its threads are stuck in the
 * driver).  Slowly, in a loaded guest, is not hung: the grace is
 * generous, and the wait ends as soon as the process does. */
#define RACE_GRACE	300

static void wait_race(pid_t pid, struct race_shared *sh)
{
	double end = nm_now() + RACE_GRACE;
	int status = 0;
	pid_t r;

	atomic_store(&sh->stop, true);
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && nm_now() < end)
		usleep(20000);
	if (r != pid) {
		kill(pid, SIGKILL);
		finding("race-mode process did not end within %d s of the deadline",
			RACE_GRACE);
		return;
	}
	atomic_fetch_add(&findings, atomic_load(&sh->findings));
	atomic_fetch_add(&total_calls, atomic_load(&sh->calls));
	if (WIFSIGNALED(status))
		finding("race-mode process killed by %s", strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) && !atomic_load(&sh->findings))
		finding("race-mode process exited %d", WEXITSTATUS(status));
}

static void usage(void)
{
	fprintf(stderr, "usage: npu_mem_fuzz [-s SEED] [-t SECONDS] [-n CALLS] "
		"[-j THREADS] [-R THREADS] [-m MAXBYTES] [-v]\n");
	exit(2);
}

/* The run's settings: NPU_MEM_FUZZ_* from the environment, then options. */
struct fuzz_cfg {
	uint64_t seed, maxbytes;
	double secs;
	unsigned int nthreads, rthreads;
};

/* The race-mode process, and the device node's mode while it runs. */
struct race_run {
	pid_t pid;
	struct race_shared *sh;
	bool node_changed;
	mode_t node_mode;
};

static void parse_args(int argc, char **argv, struct fuzz_cfg *c)
{
	int opt;

	c->seed = nm_env_u64("NPU_MEM_FUZZ_SEED", 1);
	c->secs = (double)nm_env_u64("NPU_MEM_FUZZ_SECONDS", 20);
	c->nthreads = nm_env_u64("NPU_MEM_FUZZ_THREADS", 4);
	c->rthreads = nm_env_u64("NPU_MEM_FUZZ_RACE", 2);
	c->maxbytes = nm_env_u64("NPU_MEM_FUZZ_MAXBYTES", 256ULL << 20);
	max_calls = nm_env_u64("NPU_MEM_FUZZ_CALLS", 0);
	while ((opt = getopt(argc, argv, "s:t:n:j:R:m:vh")) != -1) {
		switch (opt) {
		case 's': c->seed = strtoull(optarg, NULL, 0); break;
		case 't': c->secs = strtod(optarg, NULL); break;
		case 'n': max_calls = strtoull(optarg, NULL, 0); break;
		case 'j': c->nthreads = strtoul(optarg, NULL, 0); break;
		case 'R': c->rthreads = strtoul(optarg, NULL, 0); break;
		case 'm': c->maxbytes = strtoull(optarg, NULL, 0); break;
		case 'v': verbose++; break;
		default: usage();
		}
	}
	if (c->nthreads < 1 || c->nthreads > MAX_THREADS || c->rthreads == 1 ||
	    c->rthreads > R_MAX_THREADS)
		usage();
}

/* Operation weights, descriptor kinds, and faults turned into findings. */
static void setup_process(void)
{
	struct sigaction sa;
	unsigned int i;

	for (i = 0; i < OP_COUNT; i++)
		weight_sum += op_weight[i];
	init_desc_kinds();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * The race mode's process, forked before any thread exists.  As root
 * in a test guest it races as nobody, the usual caller, on a file it
 * opens itself (privileges are the opener's): the node is opened to
 * everyone meanwhile, never outside a guest.  Returns 0, or 1 if the
 * process could not be made.
 */
static int start_race(const struct fuzz_cfg *c, const struct stat *sb,
		      struct race_run *rr)
{
	const char *vm = getenv("VM_RUN");
	bool drop = false;

	if (geteuid() == 0 && vm && !strcmp(vm, "1")) {
		rr->node_mode = sb->st_mode & 07777;
		if (chmod(DEV_PATH, 0666) == 0)
			rr->node_changed = drop = true;
	}
	rr->sh = mmap(NULL, sizeof(*rr->sh), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rr->sh == MAP_FAILED)
		return 1;
	memset(rr->sh, 0, sizeof(*rr->sh));
	rr->pid = fork();
	if (rr->pid < 0)
		return 1;
	if (rr->pid == 0)
		_exit(race_child(c->rthreads, c->seed, c->secs, drop, rr->sh));
	return 0;
}

/* The pool's first three device fds; returns 0, or 1 after saying why. */
static int open_devices(void)
{
	struct npu_mem_info info;
	unsigned int i;
	int fd = -1;

	for (i = 0; i < 3; i++) {
		fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			printf("open %s: %s\n", DEV_PATH, strerror(errno));
			return 1;
		}
		add_fd(fd, FD_DEV, 0, false);
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info)) {
		printf("GET_INFO: %s\n", strerror(errno));
		return 1;
	}
	/* What every answer must say about device addresses: these files
	 * were opened with this process's privileges. */
	main_hidden = !(info.dev_flags & NPU_MEM_DEV_IOMMU) && !nm_desc_cap_sys_admin();
	if (info.device_count)
		npu_count = info.device_count;
	return 0;
}

/* Each thread's generator, argument buffer with guard and read-only pages,
 * and pipe; returns 0, or 1 if memory or a pipe could not be had. */
static int init_threads(struct thr *thr, const struct fuzz_cfg *c)
{
	unsigned int i;

	for (i = 0; i < c->nthreads; i++) {
		struct thr *t = &thr[i];
		uint8_t *mem;

		t->idx = i;
		t->r.s = c->seed * 0x100000001b3ULL + i * 0x9e3779b97f4a7c15ULL + 1;
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
	return 0;
}

/* Runs the threads until the deadline; returns the seconds they took. */
static double run_threads(struct thr *thr, const struct fuzz_cfg *c)
{
	double t0 = nm_now();
	unsigned int i;

	deadline = t0 + c->secs;
	if (c->nthreads == 1) {
		thread_main(&thr[0]);
	} else {
		for (i = 0; i < c->nthreads; i++)
			pthread_create(&thr[i].tid, NULL, thread_main, &thr[i]);
		for (i = 0; i < c->nthreads; i++)
			pthread_join(thr[i].tid, NULL);
	}
	return nm_now() - t0;
}

/* Everything released: the driver's counters must be back at zero. */
static void check_released(void)
{
	struct npu_mem_info info;
	int fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	double end = nm_now() + 120;

	memset(&info, 0, sizeof(info));
	/*
	 * Releases from exiting children and deferred fputs settle soon, but
	 * how soon depends on how fast the guest runs: poll until they have,
	 * giving up only after long enough for a leak to be one.
	 */
	for (;;) {
		if (ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) == 0 && !info.buffers &&
		    !info.allocated_bytes && !info.huge_pages && !info.normal_pages)
			break;
		if (nm_now() > end)
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
}

static void print_stats(void)
{
	unsigned int i, k;

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
	print_kinds();
}

/* Ends the race process, closes everything of this process. */
static void finish_run(struct thr *thr, const struct fuzz_cfg *c,
		       struct race_run *rr)
{
	unsigned int i, k;

	if (rr->pid > 0)
		wait_race(rr->pid, rr->sh);
	if (rr->node_changed)
		chmod(DEV_PATH, rr->node_mode);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	cleanup_all();
	for (k = 0; k < nforeign; k++)
		close(foreign[k].fd);
	for (i = 0; i < c->nthreads; i++) {
		close(thr[i].pipefd[0]);
		close(thr[i].pipefd[1]);
	}
}

int main(int argc, char **argv)
{
	struct race_run rr = { .pid = -1 };
	struct thr thr[MAX_THREADS];
	uint64_t old_param = 0, pin0, pin1;
	bool param_set = false;
	struct fuzz_cfg c;
	struct stat sb;
	double elapsed;

	parse_args(argc, argv, &c);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (stat(DEV_PATH, &sb)) {
		printf("no %s: npu_mem not loaded\n", DEV_PATH);
		return 77;
	}
	npu_rdev = sb.st_rdev;
	/* Every fd >= 3 must be ours (device, dma-buf, pipe, proc file). */
	syscall(SYS_close_range, 3U, ~0U, 0U);
	setup_process();
	if (c.maxbytes && nm_param_get("max_bytes", &old_param) == 0 &&
	    nm_param_set("max_bytes", c.maxbytes) == 0)
		param_set = true;
	zr_start();
	nm_vmpin(&pin0);
	printf("npu_mem_fuzz: seed %llu, %u threads (+%u racing), %.0f s, %llu calls max, "
	       "max_bytes %s\n", (unsigned long long)c.seed, c.nthreads, c.rthreads, c.secs,
	       (unsigned long long)max_calls, param_set ? "lowered" : "unchanged");
	if (c.rthreads && start_race(&c, &sb, &rr))
		return 1;
	if (open_devices())
		return 1;
	make_foreign();
	if (init_threads(thr, &c))
		return 1;
	elapsed = run_threads(thr, &c);
	finish_run(thr, &c, &rr);
	zr_set(0, 0);
	check_released();
	zr_check_drained();
	zr_set(zr_old_low, zr_old_high);
	nm_vmpin(&pin1);
	if (pin1 != pin0)
		finding("VmPin %llu kB after closing everything, %llu kB before",
			(unsigned long long)pin1 >> 10, (unsigned long long)pin0 >> 10);
	if (param_set)
		nm_param_set("max_bytes", old_param);
	print_stats();
	printf("npu_mem_fuzz: %s: %lu calls in %.1f s (seed %llu, %u threads + %u racing), "
	       "%lu findings\n",
	       atomic_load(&findings) ? "FAIL" : "PASS", atomic_load(&total_calls),
	       elapsed, (unsigned long long)c.seed, c.nthreads, c.rthreads, atomic_load(&findings));
	return atomic_load(&findings) ? 1 : 0;
}
