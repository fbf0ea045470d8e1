// SPDX-License-Identifier: MIT
/*
 * Whether ordinary host memory is there.  Memory that is not an ACL buffer
 * cannot be looked up in the library's tables, but the kernel can be asked,
 * so that a stale pointer (a freed buffer, the parent's buffer in a
 * fork()ed child) or a read-only mapping is refused with an error instead
 * of raising SIGSEGV in the copy.
 *
 * The question goes to the mappings: /proc/self/maps' PROCMAP_QUERY ioctl
 * (Linux 6.11 on) gives the mapping holding an address, its bounds and its
 * access, so a range costs one call per mapping it crosses whatever its
 * length.  Testing every page instead (below) cost about as much as the
 * copy itself (doc/benchmark.md).  Two cases still test every page: a
 * mapping of a file can fault inside its bounds (past the file's end,
 * SIGBUS), and kernels without the ioctl.  The test reads one byte of each
 * page (and for a destination writes it back) through process_vm_readv/
 * writev on the process itself, which fail with EFAULT instead of raising
 * a signal.  Where neither is allowed (seccomp) nothing is tested.
 *
 * The maps file is opened once and kept; a fork()ed child drops the
 * parent's (whose queries would answer for the parent) and opens its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fs.h>

#include "args.h"
#include "hostmem.h"

#ifndef PROCMAP_QUERY
/* The 6.11 UAPI (linux/fs.h), for older build hosts. */
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY			_IOWR('f', 17, struct procmap_query)
#define PROCMAP_QUERY_VMA_READABLE	0x01
#define PROCMAP_QUERY_VMA_WRITABLE	0x02
#endif

#define PROBE_BATCH	256

/* maps_fd: not opened yet, or no query on this kernel (or not allowed). */
#define MAPS_UNSET	-1
#define MAPS_NONE	-2

static _Atomic int maps_fd = MAPS_UNSET;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static size_t page_size(void)
{
	static size_t pg;

	if (!pg) {
		long v = sysconf(_SC_PAGESIZE);

		pg = v > 0 ? (size_t)v : 4096;
	}
	return pg;
}

/*
 * Can the process read (and, if write, write) one byte of every page of
 * [p, p + len)?  Writing puts back the byte just read: the range is about
 * to be overwritten by the caller anyway.
 */
static bool probe(const void *p, size_t len, bool write)
{
	struct iovec local[PROBE_BATCH], remote[PROBE_BATCH];
	unsigned char bytes[PROBE_BATCH];
	uintptr_t a = (uintptr_t)p, end;
	size_t pg = page_size();
	pid_t self = getpid();
	ssize_t n;
	int i;

	if (!len)
		return true;
	/* The last byte may be the address space's last. */
	if (aclmem_range_wraps(p, len - 1))
		return false;
	end = a + len - 1;
	while (a <= end) {
		for (i = 0; i < PROBE_BATCH && a <= end; i++) {
			local[i].iov_base = &bytes[i];
			local[i].iov_len = 1;
			remote[i].iov_base = (void *)a;
			remote[i].iov_len = 1;
			a = (a | (pg - 1)) + 1;	/* next page start */
			if (!a)
				break;		/* wrapped: last page done */
		}
		n = process_vm_readv(self, local, i, remote, i, 0);
		if (n < 0 && errno != EFAULT)
			return true;		/* not allowed here: no test */
		if (n != i)
			return false;
		if (write) {
			n = process_vm_writev(self, local, i, remote, i, 0);
			if (n < 0 && errno != EFAULT)
				return true;
			if (n != i)
				return false;
		}
		if (!a)
			break;
	}
	return true;
}

/* In a fork()ed child, alone: the inherited file shows the parent. */
static void atfork_child(void)
{
	int fd = atomic_load(&maps_fd);

	if (fd >= 0)
		close(fd);
	atomic_store(&maps_fd, MAPS_UNSET);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

static int query(int fd, uintptr_t a, struct procmap_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_addr = a;
	return ioctl(fd, PROCMAP_QUERY, q);
}

/* The maps file, once it is known to answer queries, or MAPS_NONE. */
static int maps_get(void)
{
	int fd = atomic_load(&maps_fd), want = MAPS_UNSET;
	struct procmap_query q;

	if (fd != MAPS_UNSET)
		return fd;
	pthread_once(&atfork_once, atfork_register);
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && query(fd, (uintptr_t)&maps_fd, &q)) {
		close(fd);
		fd = MAPS_NONE;
	}
	if (fd < 0)
		fd = MAPS_NONE;
	if (!atomic_compare_exchange_strong(&maps_fd, &want, fd)) {
		/* Another thread was first: use its answer. */
		if (fd >= 0)
			close(fd);
		fd = want;
	}
	return fd;
}

/*
 * [a, end] against the mappings, one query per mapping: 1 usable, 0 not,
 * -1 no answer (the caller tests every page).
 */
static int query_range(int fd, uintptr_t a, uintptr_t end, bool write)
{
	uint64_t need = PROCMAP_QUERY_VMA_READABLE |
			(write ? PROCMAP_QUERY_VMA_WRITABLE : 0);
	struct procmap_query q;
	uintptr_t last;

	for (;;) {
		if (query(fd, a, &q))
			return errno == ENOENT ? 0 : -1;
		/* Not an answer about a: the descriptor is not ours any more. */
		if (q.vma_start > a || q.vma_end <= a)
			return -1;
		if ((q.vma_flags & need) != need)
			return 0;
		last = q.vma_end - 1 < end ? q.vma_end - 1 : end;
		if (q.inode && !probe((void *)a, last - a + 1, write))
			return 0;
		if (last == end)
			return 1;
		a = q.vma_end;
	}
}

bool aclmem_host_usable(const void *p, size_t len, bool write)
{
	int fd, ret;

	if (!len)
		return true;
	if (aclmem_range_wraps(p, len - 1))
		return false;
	fd = maps_get();
	if (fd >= 0) {
		ret = query_range(fd, (uintptr_t)p, (uintptr_t)p + len - 1,
				  write);
		if (ret >= 0)
			return ret;
	}
	return probe(p, len, write);
}
