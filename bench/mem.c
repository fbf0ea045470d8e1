// SPDX-License-Identifier: GPL-2.0-only
/*
 * The memory every section works on: anonymous mappings (2 MiB-aligned for
 * THP), npu-mem buffers through the raw ioctls, the first touch and a
 * full read; and the system-wide knobs around them (hugetlb reservation,
 * dropping caches), turned only where that bothers nobody.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "bench.h"

char thp_mode[32] = "unknown";

uint64_t meminfo(const char *key)
{
	char *text = nm_read_file("/proc/meminfo"), *p;
	uint64_t v = 0;

	p = text ? strstr(text, key) : NULL;
	if (p)
		v = strtoull(p + strlen(key) + 1, NULL, 10) * KiB;
	free(text);
	return v;
}

char clocksource[32] = "?";

/*
 * The clock every time here is read from: with tsc a timestamp is a vDSO
 * read, with hpet or acpi_pm a system call and a device register read,
 * which under emulation adds microseconds to each timed step.
 */
void read_clocksource(void)
{
	char *text = nm_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource");

	if (text) {
		text[strcspn(text, "\n")] = 0;
		snprintf(clocksource, sizeof(clocksource), "%s", text);
	}
	free(text);
}

void read_thp_mode(void)
{
	char *text = nm_read_file("/sys/kernel/mm/transparent_hugepage/enabled");
	char *a, *b;

	a = text ? strchr(text, '[') : NULL;
	b = a ? strchr(a, ']') : NULL;
	if (a && b && (size_t)(b - a) < sizeof(thp_mode)) {
		*b = 0;
		strcpy(thp_mode, a + 1);
	}
	free(text);
}

/*
 * System-wide knobs (huge page reservation, dropping caches) are only turned
 * inside a vm-run guest, or with -f: never behind other users' backs.
 */
static bool may_tune(void)
{
	return opt.force || getenv("VM_RUN");
}

long hugetlb_count(void)
{
	long n;

	return nm_read_long("/proc/sys/vm/nr_hugepages", &n) ? -1 : n;
}

/* Reserve @n 2 MiB hugetlb pages; returns how many the kernel has now. */
long hugetlb_reserve(long n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", n);
	if (may_tune())
		nm_write_file("/proc/sys/vm/nr_hugepages", buf);
	return hugetlb_count();
}

/* Give the buddy allocator back what the page cache took, and defragment. */
void drop_caches(void)
{
	if (!may_tune())
		return;
	sync();
	nm_write_file("/proc/sys/vm/drop_caches", "3");
	nm_write_file("/proc/sys/vm/compact_memory", "1");
}
/* ---- memory primitives --------------------------------------------------- */

/* First touch: one byte written per 4 KiB page. */
void touch(void *p, uint64_t size)
{
	volatile char *c = p;
	uint64_t off;

	for (off = 0; off < size; off += PAGE)
		c[off] = 1;
}

uint64_t sum_read(const void *p, uint64_t size)
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
void *map_anon(uint64_t size, int extra_flags)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* An anonymous mapping aligned to 2 MiB, so THP can back all of it. */
void *map_anon_aligned(uint64_t size)
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

/* The same with @advice (MADV_HUGEPAGE or MADV_NOHUGEPAGE) taken. */
void *map_anon_advised(uint64_t size, int advice)
{
	void *p = map_anon_aligned(size);

	if (p)
		madvise(p, size, advice);
	return p;
}

int npu_alloc(int fd, uint64_t size, uint32_t policy, struct npu_mem_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
	a->policy = policy;
	return ioctl(fd, NPU_MEM_IOCTL_ALLOC, a) ? -errno : 0;
}

int npu_free(int fd, uint32_t handle)
{
	struct npu_mem_free f = { .handle = handle };

	return ioctl(fd, NPU_MEM_IOCTL_FREE, &f) ? -errno : 0;
}

/* A mapped npu-mem buffer; the handle goes at once (the VMA keeps it). */
void *npu_map_buffer(uint64_t size, uint32_t policy, uint64_t *maplen,
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
