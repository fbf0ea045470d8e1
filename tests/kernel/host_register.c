// SPDX-License-Identifier: GPL-2.0-only
/*
 * host_register: NPU_MEM_IOCTL_HOST_REGISTER pins a range of the caller's
 * own memory for the device.
 *  - an anonymous range registers; ALLOC and QUERY-style answers agree
 *    (NPU_MEM_BUF_HOST, size, one 4 KiB page each, NORMAL_ONLY, mmap_offset
 *    0, a device address, one pin per page); the handle cannot be mapped
 *    (mmap of its offset, 0: EINVAL), exported (EXPORT, IPC_EXPORT:
 *    EINVAL), or named through another file; SYNC works in every
 *    direction, and a range outside it or of length 0 is EINVAL.  The
 *    charge is VmPin and the per-user locked count, never the global usage
 *    (allocated_bytes, normal_pages and buffers do not move; the file's
 *    own client counters do); a THP-backed 8 MiB range registers whole;
 *  - exact errors: EINVAL for unaligned address or size, size 0, unknown
 *    flags, an end that overflows; E2BIG past max_alloc; EFAULT for a hole,
 *    an unmapped or kernel address, PROT_NONE, and a read-only mapping
 *    without NPU_MEM_HOST_READONLY; EINVAL for a device index past
 *    device_count or a non-zero pad, while the struct of a binary built
 *    before ABI 1.5 (no device) registers for device 0; EOPNOTSUPP for a
 *    PCI BAR mapping (VM_IO | VM_PFNMAP, sysfs resourceN), [vvar] or
 *    [vvar_vclock] (VM_IO | VM_PFNMAP without a file, where the kernel has
 *    one), vgem's PFN-only mappings (VM_PFNMAP without VM_IO, where the
 *    kernel's GEM shmem helpers make them) and a shared mapping of a file
 *    on a real filesystem; EEXIST for npu-mem's own mappings (device file
 *    and dma-buf) even when only part of the range is one.  Shared memory
 *    (memfd/tmpfs, MAP_SHARED | MAP_ANONYMOUS, a hugetlb memfd's 2 MiB
 *    page), private file mappings and
 *    read-only registrations of PROT_READ memory succeed.  A refused call
 *    leaves VmPin and the counters as they were;
 *  - RLIMIT_MEMLOCK of an unprivileged opener: up to the limit works, a
 *    page more is ENOMEM; FREE, close(), munmap-then-FREE and exit of a
 *    registering child give the whole limit back (a new registration of
 *    all of it works again), VmPin returns;
 *  - the device sees the user's bytes (x86_64-iommu-edu / swiotlb-edu
 *    guests: debugfs dma_copy from the registered range into a buffer and
 *    back); a read-only registration is a DMA source, never a target;
 *  - a writable registration pins for writing: the device's write to
 *    memory only read (the zero page) or shared copy-on-write with a fork
 *    child reaches this process only, never the zero page or the child;
 *  - munmap while registered: the pinned pages stay the device's, FREE
 *    later works and gives everything back;
 *  - fork after registering: the parent keeps its pinned pages (same
 *    physical pages, and the device sees its later writes), the child's
 *    writes stay in the child;
 *  - a thread unmapping and remapping the range while the main thread
 *    registers and frees it: no crash, only 0 or EFAULT, progress, and
 *    nothing left charged;
 *  - a thread mapping anonymous memory and a shared ext4 file (loop
 *    device) over the range in turn while the main thread registers it:
 *    EOPNOTSUPP, or a pin of an anonymous page (kpageflags at the device
 *    address, x86_64 guest), never of the file's page cache;
 *  - device removal (PCI unbind, edu guests) with a registration live:
 *    QUERY says DEV_UNMAPPED, SYNC and a new registration give ENODEV, the
 *    memory stays the process's, FREE gives everything back; after the
 *    device is bound again registrations work again.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/magic.h>

#include "nmtest_cred.h"
#include "nmtest_dmabuf.h"
#include "nmtest_pci.h"
#include "nmtest_vgem.h"

#define RW	(PROT_READ | PROT_WRITE)

static int reg(int fd, const void *addr, uint64_t size, uint32_t flags,
	       struct npu_mem_host_register *out)
{
	struct npu_mem_host_register r = {
		.addr = (uint64_t)(uintptr_t)addr, .size = size, .flags = flags,
	};
	int ret = nm_ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, &r);

	if (out)
		*out = r;
	return ret;
}

#define reg_ok(fd, addr, size, flags, out) \
	_reg_ok((fd), (addr), (size), (flags), (out), __FILE__, __LINE__)
static uint32_t _reg_ok(int fd, const void *addr, uint64_t size,
			uint32_t flags, struct npu_mem_host_register *out,
			const char *f, int l)
{
	struct npu_mem_host_register r;
	int ret = reg(fd, addr, size, flags, &r);

	if (ret)
		_ck_assert_failed(f, l, "HOST_REGISTER",
				  "HOST_REGISTER(%p, %llu, %#x): %s", addr,
				  (unsigned long long)size, flags,
				  nm_retname(ret));
	if (out)
		*out = r;
	return r.handle;
}

static void *anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_msg(p != MAP_FAILED, "mmap anon %zu: %s", len,
		      nm_errname(errno));
	return p;
}

/* What a registration of @size must look like, read back by root. */
static void assert_host_desc(const struct npu_mem_buffer *b, uint64_t size,
			     bool readonly)
{
	ck_assert_msg(b->flags & NPU_MEM_BUF_HOST, "flags %#x lack HOST",
		      b->flags);
	ck_assert_msg(!!(b->flags & NPU_MEM_BUF_READONLY) == readonly,
		      "flags %#x: READONLY should be %d", b->flags, readonly);
	ck_assert_uint_eq(b->size, size);
	ck_assert_uint_eq(b->mmap_offset, 0);
	ck_assert_uint_eq(b->normal_pages, size / NM_4K);
	ck_assert_uint_eq(b->huge_pages, 0);
	ck_assert_uint_eq(b->giant_pages, 0);
	ck_assert_uint_eq(b->policy, NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_msg((b->flags & NPU_MEM_BUF_DEV_UNMAPPED) ||
		      (b->dev_addr && b->dev_segments),
		      "root sees no device address: dev_addr %#llx, %u "
		      "segments, flags %#x", (unsigned long long)b->dev_addr,
		      b->dev_segments, b->flags);
}

static int64_t pins_now(void)
{
	uint64_t acq, rel;

	/* fold the per-CPU deltas, or the figures lag by up to a second */
	nm_assert_ok(nm_write_file("/proc/sys/vm/stat_refresh", "1"));
	nm_assert_ok(nm_vmstat("nr_foll_pin_acquired", &acq));
	nm_assert_ok(nm_vmstat("nr_foll_pin_released", &rel));
	return (int64_t)(acq - rel);
}

/*
 * Pages pinned (FOLL_PIN) and not yet unpinned, system-wide: nothing else
 * in the test guest pins pages for long, so a FREE must bring it back.
 * Briefly, though: the log this program writes goes to 9p, whose writes
 * (netfs, 6.x) pin the stdio buffer and unpin it from a work item after
 * write() returned.  So stdout is flushed first and the figure read until
 * it holds still: the same in PINS_STILL readings in a row, each after a
 * sleep in which a pending work item gets the CPU however slowly the
 * guest runs (two readings alone can both come before a loaded guest ran
 * it), up to 60 s; and checks wait for the figure they want (pins_wait).
 * Root only (stat_refresh); the tests run as root.
 */
#define PINS_STILL	25

static int64_t pins_held(void)
{
	double end = nm_now() + 60;
	int64_t was, now;
	int same = 0;

	fflush(stdout);
	now = pins_now();
	do {
		was = now;
		usleep(20 * 1000);
		now = pins_now();
		same = now == was ? same + 1 : 0;
	} while (same < PINS_STILL && nm_now() < end);
	return now;
}

/*
 * The figure once it is want: a check that something was pinned or
 * unpinned waits for it (up to 60 s) instead of taking the first reading,
 * which a pin of the log's still in flight can put one off.  Returns the
 * last reading.
 */
static int64_t pins_wait(int64_t want)
{
	double end = nm_now() + 60;
	int64_t now;

	fflush(stdout);
	while ((now = pins_now()) != want && nm_now() < end)
		usleep(20 * 1000);
	return now;
}

#define assert_pins(want, when) do {					\
	int64_t _w = (want), _h = pins_wait(_w);			\
									\
	ck_assert_msg(_h == _w, "pins held %lld %s, want %lld",	\
		      (long long)_h, (when), (long long)_w);		\
} while (0)

/* The global figures, and the file's own with one more handle of @size. */
static void assert_counters_host(int fd, const struct nm_counters *before,
				 uint64_t size)
{
	struct nm_counters want = *before;

	want.client_buffers++;
	want.client_bytes += size;
	nm_assert_counters_now(fd, &want);
}

START_TEST(register_anon_and_describe)
{
	const uint64_t size = 16 * NM_4K;
	struct npu_mem_host_register r;
	struct npu_mem_buffer q;
	struct nm_counters c0;
	uint64_t pin0;
	uint8_t *p = anon(size, RW);
	int fd = nm_open(), other, dfd;
	int64_t held0;

	nm_fill(p, size, 17);
	nm_counters(fd, &c0);
	pin0 = nm_vmpin_bytes();
	held0 = pins_held();
	reg_ok(fd, p, size, 0, &r);
	assert_pins(held0 + (int64_t)(size / NM_4K),
		    "after registering (one per page)");
	ck_assert_msg(r.handle, "handle 0");
	assert_host_desc(&r.buf, size, false);
	nm_assert_ok(nm_query(fd, r.handle, &q));
	nm_assert_buf_eq(&r.buf, &q);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + size);
	assert_counters_host(fd, &c0, size);
	ck_assert_msg(nm_verify(p, size, 17) == SIZE_MAX,
		      "registering changed the memory");

	/* Not mappable through the file, not exportable. */
	nm_assert_mmap_errno(mmap(NULL, size, RW, MAP_SHARED, fd,
				  (off_t)r.buf.mmap_offset), EINVAL);
	nm_assert_mmap_errno(mmap(NULL, NM_4K, PROT_READ, MAP_SHARED, fd, 0),
			     EINVAL);
	nm_assert_ret(nm_export(fd, r.handle, O_CLOEXEC, &dfd), -EINVAL);
	nm_assert_ret(nm_export(fd, r.handle, O_CLOEXEC | O_RDWR, &dfd),
		      -EINVAL);
	{
		struct npu_mem_ipc_export e = { .handle = r.handle };

		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, &e),
			      -EINVAL);
	}
	/* Another file does not know the handle. */
	other = nm_open();
	nm_assert_ret(nm_query(other, r.handle, NULL), -ENOENT);
	close(other);

	/* SYNC as for any buffer. */
	for (uint32_t d = NPU_MEM_SYNC_TO_DEVICE; d <= NPU_MEM_SYNC_BIDIRECTIONAL; d++) {
		nm_assert_ok(nm_sync(fd, r.handle, d, 0, size));
		nm_assert_ok(nm_sync(fd, r.handle, d, NM_4K + 5, 3 * NM_4K));
		nm_assert_ok(nm_sync(fd, r.handle, d, size - 1, 1));
		nm_assert_ret(nm_sync(fd, r.handle, d, 0, size + 1), -EINVAL);
		nm_assert_ret(nm_sync(fd, r.handle, d, size, 1), -EINVAL);
		nm_assert_ret(nm_sync(fd, r.handle, d, 1, 0), -EINVAL);
		nm_assert_ret(nm_sync(fd, r.handle, d, 8, UINT64_MAX), -EINVAL);
	}
	ck_assert_msg(nm_verify(p, size, 17) == SIZE_MAX,
		      "SYNC changed the memory");

	nm_free_ok(fd, r.handle);
	nm_assert_ret(nm_free(fd, r.handle), -ENOENT);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_pins(held0, "after FREE");
	nm_assert_counters_now(fd, &c0);
	/* The memory is the process's as before, and registers again. */
	ck_assert_msg(nm_verify(p, size, 17) == SIZE_MAX,
		      "FREE changed the memory");
	p[0] ^= 1;
	reg_ok(fd, p, size, 0, &r);
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_pins(held0, "after close");
	munmap(p, size);
}
END_TEST

/* A refused registration: exact error, and nothing charged. */
#define assert_refused(fd, addr, size, flags, err) do {			\
	struct nm_counters _c0;						\
	uint64_t _pin0 = nm_vmpin_bytes();				\
	nm_counters((fd), &_c0);					\
	nm_assert_ret(reg((fd), (addr), (size), (flags), NULL), (err));	\
	ck_assert_uint_eq(nm_vmpin_bytes(), _pin0);			\
	nm_assert_counters_now((fd), &_c0);				\
} while (0)

START_TEST(bad_arguments)
{
	struct npu_mem_info info;
	uint8_t *p = anon(8 * NM_4K, RW), *hole;
	int fd = nm_open();

	memset(p, 1, 8 * NM_4K);
	nm_get_info_ok(fd, &info);
	assert_refused(fd, p + 1, NM_4K, 0, -EINVAL);
	assert_refused(fd, p + 2048, 2 * NM_4K, 0, -EINVAL);
	assert_refused(fd, p, NM_4K + 1, 0, -EINVAL);
	assert_refused(fd, p, NM_4K - 1, 0, -EINVAL);
	assert_refused(fd, p, 0, 0, -EINVAL);
	assert_refused(fd, NULL, 0, 0, -EINVAL);
	assert_refused(fd, p, NM_4K, 1U << 1, -EINVAL);
	assert_refused(fd, p, NM_4K, 1U << 31, -EINVAL);
	assert_refused(fd, p, NM_4K, ~NPU_MEM_HOST_VALID, -EINVAL);
	/* addr + size wraps around */
	assert_refused(fd, (void *)(uintptr_t)(UINT64_MAX - NM_4K + 1),
		       2 * NM_4K, 0, -EINVAL);
	assert_refused(fd, p, UINT64_MAX & ~(NM_4K - 1), 0, -EINVAL);
	/* larger than any buffer may be */
	assert_refused(fd, p, NM_ALIGN(info.max_alloc + 1, NM_4K), 0, -E2BIG);
	/* not mapped */
	assert_refused(fd, (uint8_t *)nm_unmapped_addr() - 64, NM_4K, 0, -EFAULT);
	assert_refused(fd, NULL, NM_4K, 0, -EFAULT);
	assert_refused(fd, (void *)(uintptr_t)0xffff888000000000ULL, NM_4K, 0,
		       -EFAULT);
	assert_refused(fd, (void *)(uintptr_t)0x0000800000000000ULL, NM_4K, 0,
		       -EFAULT);
	/* a hole in the middle, and a range running past the end */
	hole = p + 3 * NM_4K;
	nm_assert_sys(munmap(hole, NM_4K));
	assert_refused(fd, p, 8 * NM_4K, 0, -EFAULT);
	assert_refused(fd, p, 8 * NM_4K, NPU_MEM_HOST_READONLY, -EFAULT);
	assert_refused(fd, hole, NM_4K, 0, -EFAULT);
	reg_ok(fd, p, 3 * NM_4K, 0, NULL);
	reg_ok(fd, hole + NM_4K, 4 * NM_4K, 0, NULL);
	/* PROT_NONE: nothing may touch it */
	nm_assert_sys(mprotect(p + 6 * NM_4K, NM_4K, PROT_NONE));
	assert_refused(fd, p + 5 * NM_4K, 2 * NM_4K, 0, -EFAULT);
	assert_refused(fd, p + 6 * NM_4K, NM_4K, NPU_MEM_HOST_READONLY, -EFAULT);
	close(fd);
	munmap(p, 8 * NM_4K);
}
END_TEST

/*
 * The NPU index (ABI 1.5): one that names no NPU, or a non-zero pad, is
 * -EINVAL with nothing charged; the struct of a binary built before it
 * (up to buf) registers for device 0 and gets no more back than it passed.
 */
START_TEST(device_index_and_old_size)
{
	const size_t v1 = offsetof(struct npu_mem_host_register, device);
	struct npu_mem_host_register r;
	struct npu_mem_info info;
	struct npu_mem_query q;
	struct nm_counters c0;
	uint8_t *p = anon(NM_4K, RW), old[sizeof(r) + 8];
	int fd = nm_open();
	uint32_t bad[] = { 0, 0x80000000u, 0xffffffffu };

	memset(p, 1, NM_4K);
	nm_get_info_ok(fd, &info);
	bad[0] = info.device_count;
	nm_counters(fd, &c0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		memset(&r, 0, sizeof(r));
		r.addr = (uint64_t)(uintptr_t)p;
		r.size = NM_4K;
		r.device = bad[i];
		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, &r),
			      -EINVAL);
	}
	memset(&r, 0, sizeof(r));
	r.addr = (uint64_t)(uintptr_t)p;
	r.size = NM_4K;
	r.pad = 1;
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, &r), -EINVAL);
	nm_assert_counters_now(fd, &c0);

	ck_assert_uint_eq(v1, 72);
	r.pad = 0;
	memset(old, 0xee, sizeof(old));
	memcpy(old, &r, v1);
	nm_assert_ok(nm_ioctl(fd, NM_IOC(NM_IOC_RW,
					 _IOC_NR(NPU_MEM_IOCTL_HOST_REGISTER), v1),
			      old));
	ck_assert_uint_eq(old[v1], 0xee);
	memcpy(&r, old, v1);
	ck_assert_uint_ne(r.handle, 0);
	memset(&q, 0, sizeof(q));
	q.handle = r.handle;
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_QUERY, &q));
	ck_assert_uint_eq(q.device, 0);
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_HOST, 0);
	ck_assert_uint_eq(q.buf.dev_addr, r.buf.dev_addr);
	nm_free_ok(fd, r.handle);
	close(fd);
	munmap(p, NM_4K);
}
END_TEST

START_TEST(readonly_registration)
{
	const uint64_t size = 4 * NM_4K;
	struct npu_mem_host_register r;
	uint8_t *w = anon(size, RW), *ro = anon(size, PROT_READ);
	uint64_t pin0 = nm_vmpin_bytes();
	int fd = nm_open();

	/* Writable pins of a read-only mapping: what GUP refuses, EFAULT. */
	assert_refused(fd, ro, size, 0, -EFAULT);
	/* Read-only pins of it, untouched (the zero page) or not. */
	reg_ok(fd, ro, size, NPU_MEM_HOST_READONLY, &r);
	assert_host_desc(&r.buf, size, true);
	for (uint32_t d = NPU_MEM_SYNC_TO_DEVICE; d <= NPU_MEM_SYNC_BIDIRECTIONAL; d++)
		nm_assert_ok(nm_sync(fd, r.handle, d, 0, size));
	nm_free_ok(fd, r.handle);
	/* A writable mapping may be registered read-only too. */
	nm_fill(w, size, 3);
	reg_ok(fd, w, size, NPU_MEM_HOST_READONLY, &r);
	assert_host_desc(&r.buf, size, true);
	/* One read-only page in a writable range: only READONLY works. */
	nm_assert_sys(mprotect(w + NM_4K, NM_4K, PROT_READ));
	assert_refused(fd, w, size, 0, -EFAULT);
	reg_ok(fd, w, size, NPU_MEM_HOST_READONLY, NULL);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + 2 * size);
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	munmap(w, size);
	munmap(ro, size);
}
END_TEST

/* First PCI memory BAR that sysfs lets us map: VM_IO | VM_PFNMAP. */
static void *map_pci_bar(char *path, size_t len)
{
	DIR *d = opendir(NM_PCI_DEVICES);
	struct dirent *e;
	void *p = MAP_FAILED;

	if (!d)
		return MAP_FAILED;
	while (p == MAP_FAILED && (e = readdir(d))) {
		int bfd;

		if (e->d_name[0] == '.')
			continue;
		for (int bar = 0; bar < 6 && p == MAP_FAILED; bar++) {
			snprintf(path, len, NM_PCI_DEVICES "/%s/resource%d",
				 e->d_name, bar);
			bfd = open(path, O_RDONLY | O_CLOEXEC);
			if (bfd < 0)
				continue;
			p = mmap(NULL, NM_4K, PROT_READ, MAP_SHARED, bfd, 0);
			close(bfd);
		}
	}
	closedir(d);
	return p;
}

START_TEST(pfn_map_refused)
{
	char path[512];
	int fd = nm_open();
	void *bar = map_pci_bar(path, sizeof(path));

	if (bar == MAP_FAILED) {
		close(fd);
		nm_skip("no PCI BAR in sysfs could be mapped (resourceN)");
	}
	printf("PFN map: %s\n", path);
	assert_refused(fd, bar, NM_4K, NPU_MEM_HOST_READONLY, -EOPNOTSUPP);
	assert_refused(fd, bar, NM_4K, 0, -EOPNOTSUPP);
	munmap(bar, NM_4K);
	close(fd);
}
END_TEST

/*
 * The smaps entry of the mapping holding @addr: its first line (range,
 * file) in @head and its VmFlags ("rd wr pf ...") in @flags; false when
 * no mapping holds it.
 */
static bool vma_of(const void *addr, char *head, size_t hlen, char *flags,
		   size_t flen)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	ck_assert_msg(f, "/proc/self/smaps: %s", nm_errname(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			if (in)
				snprintf(head, hlen, "%s", line);
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, flen, "%.*s", (int)flen - 1,
				 line + 8);
			fclose(f);
			return true;
		}
	}
	fclose(f);
	return false;
}

/* Whether the VmFlags string @flags holds the two-letter flag @f. */
static bool vm_flag(const char *flags, const char *f)
{
	for (const char *p = flags; (p = strstr(p, f)); p++)
		if ((p == flags || p[-1] == ' ') && (!p[2] || p[2] == ' '))
			return true;
	return false;
}

/*
 * A special mapping of the kernel's with VM_IO and no file ([vvar], the
 * vDSO's data, up to 6.x; 7.x maps [vvar] as mixed pages and keeps VM_IO
 * for [vvar_vclock], where there is one): refused for its flags alone,
 * where a device file's shared mapping (a BAR above) would also be
 * refused as a shared file mapping.
 */
START_TEST(io_map_refused)
{
	char head[512] = "", flags[256] = "", line[512], seen[512] = "";
	unsigned long lo = 0, hi = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	int fd = nm_open();

	ck_assert_msg(f, "/proc/self/maps: %s", nm_errname(errno));
	while (!hi && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (!strstr(line, "[vvar") ||
		    sscanf(line, "%lx-%lx ", &a, &b) != 2)
			continue;
		ck_assert(vma_of((void *)a, head, sizeof(head), flags,
				 sizeof(flags)));
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
			 "%s%.*s:%s", *seen ? "; " : "",
			 (int)strcspn(strchr(line, '['), "\n"),
			 strchr(line, '['), flags);
		if (vm_flag(flags, "io")) {
			lo = a;
			hi = b;
		}
	}
	fclose(f);
	if (!hi) {
		close(fd);
		nm_skip("no [vvar*] mapping here is VM_IO (%s)",
			*seen ? seen : "none at all");
	}
	printf("I/O map: %s:%s\n", head, flags);
	assert_refused(fd, (void *)lo, NM_4K, NPU_MEM_HOST_READONLY,
		       -EOPNOTSUPP);
	assert_refused(fd, (void *)lo, NM_4K, 0, -EOPNOTSUPP);
	assert_refused(fd, (void *)lo, hi - lo, NPU_MEM_HOST_READONLY,
		       -EOPNOTSUPP);
	close(fd);
}
END_TEST

/*
 * A PFN map that is not an I/O map: vgem's mappings of its shmem-backed
 * buffers, through the card and through a dma-buf, are VM_PFNMAP alone
 * on kernels whose GEM shmem helpers insert PFNs (5.10's vgem maps
 * ordinary pages).  Each such mapping is refused whole and by its first
 * page, writable and read-only; the test skips where none is PFN-only.
 */
START_TEST(pfn_only_map_refused)
{
	const uint32_t size = 16 * NM_4K;
	char why[256], head[512], flags[256];
	int fd, card, dfd, tried = 0;
	uint64_t gsize = 0, off = 0;
	uint32_t gem = 0;
	void *maps[2];

	if (nm_vgem_ensure(why, sizeof(why)))
		nm_skip("%s", why);
	fd = nm_open();
	card = nm_vgem_open();
	nm_assert_ok(nm_vgem_dumb_create(card, size, &gem, &gsize));
	nm_assert_ok(nm_vgem_map_dumb(card, gem, &off));
	maps[0] = mmap(NULL, gsize, RW, MAP_SHARED, card, (off_t)off);
	ck_assert_msg(maps[0] != MAP_FAILED, "mmap vgem dumb: %s",
		      nm_errname(errno));
	dfd = nm_vgem_export_ok(card, gem);
	maps[1] = mmap(NULL, gsize, RW, MAP_SHARED, dfd, 0);
	ck_assert_msg(maps[1] != MAP_FAILED, "mmap vgem dma-buf: %s",
		      nm_errname(errno));
	for (int i = 0; i < 2; i++) {
		ck_assert(vma_of(maps[i], head, sizeof(head), flags,
				 sizeof(flags)));
		printf("vgem %s: %s:%s\n", i ? "dma-buf" : "card", head, flags);
		if (!vm_flag(flags, "pf") || vm_flag(flags, "io"))
			continue;
		assert_refused(fd, maps[i], gsize, 0, -EOPNOTSUPP);
		assert_refused(fd, maps[i], gsize, NPU_MEM_HOST_READONLY,
			       -EOPNOTSUPP);
		assert_refused(fd, maps[i], NM_4K, 0, -EOPNOTSUPP);
		tried++;
	}
	munmap(maps[0], gsize);
	munmap(maps[1], gsize);
	close(dfd);
	nm_assert_ok(nm_gem_close(card, gem));
	close(card);
	close(fd);
	if (!tried)
		nm_skip("no vgem mapping is VM_PFNMAP without VM_IO on this "
			"kernel (VmFlags:%s)", flags);
}
END_TEST

START_TEST(shared_memory_and_files)
{
	const uint64_t size = 4 * NM_4K;
	const char *dir = getenv("VM_OUTDIR");
	uint64_t pin0 = nm_vmpin_bytes();
	char path[512];
	struct statfs sf;
	uint8_t *p;
	int fd = nm_open(), mfd, ffd, rfd;

	/* tmpfs/shmem: a memfd, and MAP_SHARED | MAP_ANONYMOUS */
	mfd = memfd_create("host_register", MFD_CLOEXEC);
	ck_assert_int_ge(mfd, 0);
	nm_assert_sys(ftruncate(mfd, size));
	p = mmap(NULL, size, RW, MAP_SHARED, mfd, 0);
	ck_assert(p != MAP_FAILED);
	nm_fill(p, size, 5);
	reg_ok(fd, p, size, 0, NULL);
	reg_ok(fd, p, size, NPU_MEM_HOST_READONLY, NULL);
	munmap(p, size);
	close(mfd);
	p = mmap(NULL, size, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	reg_ok(fd, p, size, 0, NULL);
	munmap(p, size);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + 3 * size);
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);

	/* a regular file on a filesystem with writeback */
	if (!dir || statfs(dir, &sf) || sf.f_type == TMPFS_MAGIC)
		nm_skip("no writable directory off tmpfs ($VM_OUTDIR): the "
			"shared file mapping case was not run");
	snprintf(path, sizeof(path), "%s/host_register.%d", dir, (int)getpid());
	ffd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(ffd >= 0, "%s: %s", path, nm_errname(errno));
	nm_assert_sys(ftruncate(ffd, size));
	fd = nm_open();
	printf("file on f_type %#lx\n", (unsigned long)sf.f_type);
	p = mmap(NULL, size, RW, MAP_SHARED, ffd, 0);
	if (p != MAP_FAILED) {
		assert_refused(fd, p, size, 0, -EOPNOTSUPP);
		assert_refused(fd, p, size, NPU_MEM_HOST_READONLY, -EOPNOTSUPP);
		munmap(p, size);
	} else {
		printf("no writable shared mapping here (%s): read-only one\n",
		       nm_errname(errno));
	}
	/* opened read-only: filesystems without shared writable mmap (9p) */
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(rfd >= 0, "%s: %s", path, nm_errname(errno));
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, rfd, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap shared read-only: %s",
		      nm_errname(errno));
	close(rfd);
	assert_refused(fd, p, size, NPU_MEM_HOST_READONLY, -EOPNOTSUPP);
	munmap(p, size);
	/* private mappings of the same file are fine */
	p = mmap(NULL, size, RW, MAP_PRIVATE, ffd, 0);
	ck_assert(p != MAP_FAILED);
	reg_ok(fd, p, size, 0, NULL);
	reg_ok(fd, p, size, NPU_MEM_HOST_READONLY, NULL);
	munmap(p, size);
	close(ffd);
	unlink(path);
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
}
END_TEST

/*
 * hugetlbfs has no writeback for a device to write behind: a shared
 * mapping of a hugetlb memfd registers, writable and read-only, as one
 * 2 MiB chunk.  The guest's nr_hugepages is raised for it and put back.
 */
START_TEST(hugetlbfs_shared_registers)
{
	static const char *const nr = "/proc/sys/vm/nr_hugepages";
	struct npu_mem_host_register r;
	char *old = nm_read_file(nr);
	uint8_t *p = MAP_FAILED;
	int fd, mfd = -1;

	if (!old || nm_write_file(nr, "2")) {
		free(old);
		nm_skip("cannot reserve 2 MiB pages through %s (root in a "
			"test guest)", nr);
	}
	mfd = memfd_create("host_register", MFD_CLOEXEC | MFD_HUGETLB);
	if (mfd >= 0 && !ftruncate(mfd, NM_2M))
		p = mmap(NULL, NM_2M, RW, MAP_SHARED, mfd, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		nm_write_file(nr, old);
		free(old);
		nm_skip("no shared hugetlb mapping of 2 MiB: %s",
			nm_errname(err));
	}
	fd = nm_open();
	nm_fill(p, NM_2M, 9);
	reg_ok(fd, p, NM_2M, 0, &r);
	ck_assert_uint_eq(r.buf.size, NM_2M);
	nm_free_ok(fd, r.handle);
	reg_ok(fd, p, NM_2M, NPU_MEM_HOST_READONLY, &r);
	reg_ok(fd, p + NM_4K, NM_4K, 0, NULL);
	close(fd);
	munmap(p, NM_2M);
	close(mfd);
	nm_assert_ok(nm_write_file(nr, old));
	free(old);
}
END_TEST

START_TEST(own_mappings_refused)
{
	struct npu_mem_alloc a;
	uint8_t *m, *d, *big;
	int fd = nm_open(), dfd, other = nm_open();

	nm_alloc_ok(fd, 4 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	m = nm_map_ok(fd, &a, RW);
	assert_refused(fd, m, 4 * NM_4K, 0, -EEXIST);
	assert_refused(fd, m + NM_4K, NM_4K, NPU_MEM_HOST_READONLY, -EEXIST);
	/* from another open file as well */
	assert_refused(other, m, 4 * NM_4K, 0, -EEXIST);
	/* a dma-buf of ours, mapped */
	dfd = nm_export_ok(fd, a.handle, O_CLOEXEC | O_RDWR);
	d = nm_dmabuf_map_ok(dfd, 0, 4 * NM_4K, RW);
	assert_refused(fd, d, 4 * NM_4K, 0, -EEXIST);
	munmap(d, 4 * NM_4K);
	close(dfd);
	/* part of the range is anonymous memory, part is ours */
	big = anon(8 * NM_4K, RW);
	munmap(m, 4 * NM_4K);
	m = mmap(big + 4 * NM_4K, 4 * NM_4K, RW, MAP_SHARED | MAP_FIXED, fd,
		 (off_t)a.buf.mmap_offset);
	ck_assert_msg(m == big + 4 * NM_4K, "mmap fixed: %s", nm_errname(errno));
	assert_refused(fd, big, 8 * NM_4K, 0, -EEXIST);
	reg_ok(fd, big, 4 * NM_4K, 0, NULL);
	munmap(big, 8 * NM_4K);
	close(other);
	close(fd);
}
END_TEST

/* ---------------------------------------------------------------- */
/* As an unprivileged user: RLIMIT_MEMLOCK and the user's locked count */

#define LIMIT	(64 * NM_4K)
#define UID	NM_UID_OTHER

/* The whole limit registers (and is freed): nothing of this user's is charged. */
static void assert_room(const char *when)
{
	uint8_t *p = anon(LIMIT, RW);
	struct npu_mem_host_register r;
	int fd = nm_open(), ret;

	memset(p, 7, LIMIT);
	ret = reg(fd, p, LIMIT, 0, &r);
	ck_assert_msg(ret == 0, "%s: registering the whole RLIMIT_MEMLOCK "
		      "(%llu bytes): %s; something is still charged", when,
		      (unsigned long long)LIMIT, nm_retname(ret));
	nm_free_ok(fd, r.handle);
	close(fd);
	munmap(p, LIMIT);
}

static void run_as_user(void (*fn)(void), const char *what)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		nm_become_ok(UID, LIMIT);
		fn();
		_exit(0);
	}
	nm_wait_ok(pid, what);
}

/*
 * A page is registered for the device to write once at a time (UAPI
 * header, -EEXIST): not the same range twice, not through another mapping
 * of the same shared page, not a range that holds one page twice, not by
 * another user's process sharing the mapping.  Read-only registrations
 * share pages with anything; FREE (and close) give the pages back.  A
 * refusal pins and charges nothing, and the registration that holds the
 * pages goes on working.  Without the rule a debug kernel's DMA-API check
 * reports the second mapping (dmesg, which the guest checks).
 */
static uint8_t *g_shared;

static void claimed_body(void)
{
	int fd = nm_open();

	assert_refused(fd, g_shared, 4 * NM_4K, 0, -EEXIST);
	reg_ok(fd, g_shared, 4 * NM_4K, NPU_MEM_HOST_READONLY, NULL);
	close(fd);
}

START_TEST(writable_pages_claimed_once)
{
	const uint64_t size = 4 * NM_4K;
	uint64_t pin0 = nm_vmpin_bytes();
	int64_t pins0 = pins_held();
	struct npu_mem_host_register h;
	int fd = nm_open(), other = nm_open(), mfd;
	uint8_t *a, *twice;
	uint32_t ro;

	mfd = memfd_create("claimed", MFD_CLOEXEC);
	ck_assert_int_ge(mfd, 0);
	nm_assert_sys(ftruncate(mfd, size));
	a = mmap(NULL, size, RW, MAP_SHARED, mfd, 0);
	g_shared = mmap(NULL, size, RW, MAP_SHARED, mfd, 0);
	ck_assert(a != MAP_FAILED && g_shared != MAP_FAILED);
	nm_fill(a, size, 41);
	reg_ok(fd, a, size, 0, &h);

	assert_refused(fd, a, size, 0, -EEXIST);
	assert_refused(other, a, size, 0, -EEXIST);
	assert_refused(fd, g_shared, size, 0, -EEXIST);
	assert_refused(fd, g_shared + 3 * NM_4K, NM_4K, 0, -EEXIST);
	ro = reg_ok(fd, g_shared, size, NPU_MEM_HOST_READONLY, NULL);
	run_as_user(claimed_body, "another user's registration");
	assert_pins(pins0 + 2 * (int64_t)(size / NM_4K), "after the refusals");
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + 2 * size);
	nm_assert_ok(nm_sync(fd, h.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, size));
	nm_assert_pattern(g_shared, size, 41, 0);

	/* FREE gives the pages back, to any registration */
	nm_free_ok(fd, h.handle);
	reg_ok(other, g_shared, size, 0, NULL);
	assert_refused(fd, a, NM_4K, 0, -EEXIST);
	nm_free_ok(fd, ro);
	close(other);
	reg_ok(fd, a, size, 0, NULL);
	close(fd);

	/* one range, the same page twice */
	fd = nm_open();
	twice = mmap(NULL, 2 * NM_4K, RW, MAP_SHARED, mfd, 0);
	ck_assert(twice != MAP_FAILED);
	ck_assert(mmap(twice + NM_4K, NM_4K, RW, MAP_SHARED | MAP_FIXED, mfd,
		       0) == twice + NM_4K);
	assert_refused(fd, twice, 2 * NM_4K, 0, -EEXIST);
	reg_ok(fd, twice, 2 * NM_4K, NPU_MEM_HOST_READONLY, NULL);
	reg_ok(fd, twice + NM_4K, NM_4K, 0, NULL);
	close(fd);
	munmap(twice, 2 * NM_4K);
	munmap(a, size);
	munmap(g_shared, size);
	close(mfd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_pins(pins0, "after close");
}
END_TEST

static void memlock_body(void)
{
	uint8_t *p = anon(LIMIT + NM_4K, RW);
	struct npu_mem_host_register r, r2;
	uint64_t pin0 = nm_vmpin_bytes();
	int fd = nm_open();

	memset(p, 9, LIMIT + NM_4K);
	assert_refused(fd, p, LIMIT + NM_4K, 0, -ENOMEM);
	reg_ok(fd, p, LIMIT / 2, 0, &r);
	/* the same pages twice count twice, as two buffers would */
	reg_ok(fd, p, LIMIT / 2, NPU_MEM_HOST_READONLY, &r2);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + LIMIT);
	assert_refused(fd, p + LIMIT, NM_4K, 0, -ENOMEM);
	nm_free_ok(fd, r2.handle);
	assert_refused(fd, p, LIMIT / 2 + NM_4K, 0, -ENOMEM);
	reg_ok(fd, p + LIMIT / 2, LIMIT / 2, 0, &r2);
	nm_free_ok(fd, r.handle);
	nm_free_ok(fd, r2.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_room("after FREE");

	/* close() with registrations */
	reg_ok(fd, p, LIMIT, 0, NULL);
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_room("after close");

	/* munmap while registered, FREE later */
	fd = nm_open();
	reg_ok(fd, p, LIMIT, 0, &r);
	nm_assert_sys(munmap(p, LIMIT + NM_4K));
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + LIMIT);
	nm_assert_ok(nm_query(fd, r.handle, NULL));
	nm_assert_ok(nm_sync(fd, r.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, LIMIT));
	nm_free_ok(fd, r.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_room("after munmap, then FREE");
	close(fd);
}

START_TEST(memlock_limit_and_give_back)
{
	run_as_user(memlock_body, "RLIMIT_MEMLOCK as uid 65533");
}
END_TEST

static void exit_body(void)
{
	for (int how = 0; how < 2; how++) {
		int go[2];
		pid_t pid;
		int st;

		ck_assert_int_eq(pipe(go), 0);
		fflush(stdout);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			uint8_t *p = anon(LIMIT, RW);
			int fd = nm_open();

			close(go[0]);
			memset(p, 3, LIMIT);
			if (reg(fd, p, LIMIT, 0, NULL))
				_exit(3);
			nm_signal(go[1]);
			if (how)
				pause();	/* killed holding it */
			_exit(0);		/* exits holding it */
		}
		close(go[1]);
		ck_assert_msg(nm_await(go[0]) == 0, "child did not register");
		close(go[0]);
		if (how)
			kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(how ? WIFSIGNALED(st) : WIFEXITED(st) &&
			      WEXITSTATUS(st) == 0, "registering child: %s",
			      nm_status_str(st));
		assert_room(how ? "after a registering child was killed" :
				  "after a registering child exited");
	}
}

START_TEST(exit_gives_back)
{
	run_as_user(exit_body, "exit with registrations");
}
END_TEST

/* ---------------------------------------------------------------- */
/* Racing munmap/mmap of the range against register/free */

struct racer {
	uint8_t *addr;
	size_t len;
	volatile int stop;
	unsigned long remaps;
};

static void *remapper(void *arg)
{
	struct racer *r = arg;

	/*
	 * Yield in both states, so that with one CPU the registering thread
	 * also runs while the range is mapped (and while it is not).
	 */
	while (!r->stop) {
		munmap(r->addr, r->len);
		if (r->remaps & 1)
			sched_yield();
		if (mmap(r->addr, r->len, RW, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED, -1, 0) != r->addr)
			break;
		/* Mostly untouched: the pin faults the pages in itself, a
		 * longer window for the munmap to land in. */
		if (!(r->remaps & 7))
			memset(r->addr, 1, r->len);
		/* read by the registering thread, which decides when to stop */
		__atomic_store_n(&r->remaps, r->remaps + 1, __ATOMIC_RELAXED);
		sched_yield();
	}
	return NULL;
}

/* What a run must have done: registrations that won, and remaps (the
 * other thread runs only when the scheduler lets it, on one CPU). */
#define RACE_MIN	20

static double race_seconds(void)
{
	return (double)nm_env_u64("HOST_REGISTER_RACE_SECONDS", 4);
}

static void race_body(void)
{
	const size_t len = 16 * NM_4K;
	struct racer rc = { .len = len };
	struct nm_span span;
	unsigned long ok = 0, efault = 0;
	uint64_t pin0 = nm_vmpin_bytes();
	pthread_t th;
	int fd = nm_open();

	rc.addr = anon(len, RW);
	ck_assert_int_eq(pthread_create(&th, NULL, remapper, &rc), 0);
	nm_span_start(&span, race_seconds());
	while (nm_span_more(&span, ok >= RACE_MIN &&
			    __atomic_load_n(&rc.remaps, __ATOMIC_RELAXED) >=
			    RACE_MIN)) {
		struct npu_mem_host_register r;
		int ret = reg(fd, rc.addr, len, 0, &r);

		if (ret == 0) {
			ok++;
			NM_REQUIRE(r.buf.flags & NPU_MEM_BUF_HOST, "flags %#x",
				   r.buf.flags);
			NM_REQUIRE(nm_free(fd, r.handle) == 0, "FREE failed");
		} else if (ret == -EFAULT) {
			efault++;
		} else {
			rc.stop = 1;
			pthread_join(th, NULL);
			ck_abort_msg("register racing munmap: %s", nm_retname(ret));
		}
	}
	rc.stop = 1;
	pthread_join(th, NULL);
	printf("race: %.1f s: %lu registered, %lu EFAULT, %lu remaps\n",
	       nm_span_secs(&span), ok, efault, rc.remaps);
	ck_assert_msg(ok >= RACE_MIN && rc.remaps >= RACE_MIN,
		      "too little progress in %.0f s, the ceiling: %lu "
		      "registered, %lu remaps (want %d of each)",
		      nm_span_secs(&span), ok, rc.remaps, RACE_MIN);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	close(fd);
	munmap(rc.addr, len);
	assert_room("after the race");
}

START_TEST(race_munmap_register)
{
	run_as_user(race_body, "munmap racing register");
}
END_TEST

/* ---------------------------------------------------------------- */
/* Racing MAP_FIXED of a shared disk-file mapping against register   */

/* /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst) */
#define KPF_ANON	12
#define KPF_ZERO_PAGE	24

/*
 * An ext4 file system on a loop device over a tmpfs file, mounted at @dir:
 * page cache with writeback, which the guest's own file systems (9p, tmpfs)
 * do not give.  0, or the shell's status with its output in @why.
 */
static int disk_fs_mount(const char *dir, char *why, size_t len)
{
	char cmd[512], *out = NULL;
	int st;

	snprintf(cmd, sizeof(cmd), "set -e; modprobe loop 2>/dev/null || true; "
		 "modprobe ext4 2>/dev/null || true; "
		 "img=$(mktemp /tmp/npu-mem-ext4.XXXXXX); truncate -s 16M $img; "
		 "mkfs.ext4 -q -F $img; mount -t ext4 -o loop $img %s; rm $img",
		 dir);
	st = nm_shell(cmd, &out);
	snprintf(why, len, "%s", out ? out : "no output");
	free(out);
	return st;
}

struct swapper {
	uint8_t *addr;
	size_t len;
	int ffd;
	volatile int stop;
	volatile unsigned long swaps;	/* anonymous memory mapped, n-th time */
	volatile unsigned long go;	/* try n is about to register */
	volatile unsigned long tried;	/* try n is over */
	volatile int done;
	int err;
};

/*
 * In step with the registering thread: maps fresh anonymous memory over
 * the range, and as the n-th registration starts, a shared mapping of the
 * disk file, each MAP_FIXED (the range is never a hole, only the kind of
 * memory under it changes).  Neither is touched, so a pin finds no page
 * table entries and faults in whatever is mapped when it looks.  Only
 * spinning waits, so neither thread starves the other of the mmap lock.
 */
static void *swapper(void *arg)
{
	struct swapper *s = arg;

	while (!s->stop) {
		if (mmap(s->addr, s->len, RW, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED, -1, 0) != s->addr) {
			s->err = errno;
			break;
		}
		s->swaps++;
		while (s->go != s->swaps && !s->stop)
			sched_yield();
		if (mmap(s->addr, s->len, RW, MAP_SHARED | MAP_FIXED, s->ffd,
			 0) != s->addr) {
			s->err = errno;
			break;
		}
		while (s->tried != s->swaps && !s->stop)
			sched_yield();
	}
	s->done = 1;
	return NULL;
}

/* What the page at @pfn is: its /proc/kpageflags word. */
static uint64_t kpageflags(uint64_t pfn)
{
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint64_t kpf = 0;

	NM_REQUIRE(fd >= 0, "/proc/kpageflags: %s", nm_errname(errno));
	NM_REQUIRE(pread(fd, &kpf, sizeof(kpf), (off_t)(pfn * sizeof(kpf))) ==
		   sizeof(kpf), "/proc/kpageflags at pfn %#llx: %s",
		   (unsigned long long)pfn, nm_errname(errno));
	close(fd);
	return kpf;
}

/*
 * Starts the swapper, on another CPU than this thread where there are two:
 * the threads hand over by spinning, and sharing one CPU each spin would
 * cost a time slice.
 */
static void spread_threads(pthread_t *th, struct swapper *sw)
{
	int cpus[2], n = 0;
	pthread_attr_t attr;
	cpu_set_t set;

	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n == 2) {
		CPU_ZERO(&set);
		CPU_SET(cpus[1], &set);
		ck_assert_int_eq(pthread_attr_setaffinity_np(&attr, sizeof(set),
							     &set), 0);
		CPU_ZERO(&set);
		CPU_SET(cpus[0], &set);
		ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	}
	ck_assert_int_eq(pthread_create(th, &attr, swapper, sw), 0);
	pthread_attr_destroy(&attr);
}

/*
 * The VMAs are checked, then the pages pinned: another thread's
 * MAP_FIXED of a shared file mapping in between must not get page cache
 * pinned for the long term.  Every registration of the one-page range is
 * refused (EOPNOTSUPP, the file was there) or pinned an anonymous page
 * (or, read-only, the zero page): without an IOMMU the device address is
 * the physical one, so /proc/kpageflags tells what was pinned.  Both
 * outcomes must occur often.  The tries run to a count, with a generous
 * time ceiling (HOST_REGISTER_SWAP_TRIES, HOST_REGISTER_SWAP_SECONDS): on
 * 6.1 before the fix, a page-cache pin came within a few hundred tries.
 */
START_TEST(race_shared_file_register)
{
	const size_t len = NM_4K;
	const unsigned long want = nm_env_u64("HOST_REGISTER_SWAP_TRIES", 2000);
	const double t0 = nm_now();
	const double ceiling = t0 + nm_env_u64("HOST_REGISTER_SWAP_SECONDS", 300);
	char dir[] = "/tmp/npu-mem-hr.XXXXXX", path[256], why[512];
	unsigned long tries = 0, ok = 0, refused = 0;
	struct swapper sw = { .len = len };
	struct npu_mem_info info;
	uint64_t pin0 = nm_vmpin_bytes(), file_phys = 0;
	uint8_t *stable;
	pthread_t th;
	int fd = nm_open(), st;

	nm_get_info_ok(fd, &info);
	if (info.dev_flags & NPU_MEM_DEV_IOMMU) {
		close(fd);
		nm_skip("device addresses are IOVAs here: what a registration "
			"pinned cannot be told (run in x86_64)");
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = disk_fs_mount(dir, why, sizeof(why));
	if (st) {
		close(fd);
		rmdir(dir);
		nm_skip("no ext4 on a loop device (exit %d): %s", st, why);
	}
	snprintf(path, sizeof(path), "%s/file", dir);
	sw.ffd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_msg(sw.ffd >= 0, "%s: %s", path, nm_errname(errno));
	nm_assert_sys(ftruncate(sw.ffd, len));
	/* the file's page, held in the page cache by a mapping of its own */
	stable = mmap(NULL, len, RW, MAP_SHARED, sw.ffd, 0);
	ck_assert(stable != MAP_FAILED);
	memset(stable, 0xe4, len);
	nm_assert_ok(nm_virt_to_phys(stable, &file_phys));
	/* the file refused, before any race */
	sw.addr = mmap(NULL, len, RW, MAP_SHARED, sw.ffd, 0);
	ck_assert(sw.addr != MAP_FAILED);
	assert_refused(fd, sw.addr, len, 0, -EOPNOTSUPP);
	assert_refused(fd, sw.addr, len, NPU_MEM_HOST_READONLY, -EOPNOTSUPP);

	spread_threads(&th, &sw);
	while ((tries < want || ok < 100 || refused < 100) &&
	       (nm_now() < ceiling || !tries)) {
		uint32_t flags = (tries & 1) ? 0 : NPU_MEM_HOST_READONLY;
		struct npu_mem_host_register r;
		int ret;

		/* anonymous memory there, and the file on its way */
		while (sw.swaps != tries + 1 && !sw.done)
			sched_yield();
		if (sw.done)
			break;
		sw.go = ++tries;
		ret = reg(fd, sw.addr, len, flags, &r);
		if (ret == -EOPNOTSUPP) {
			refused++;
			sw.tried = tries;
			continue;
		}
		if (ret) {
			sw.stop = 1;
			pthread_join(th, NULL);
			ck_abort_msg("try %lu (flags %#x): %s, not 0 or "
				     "-EOPNOTSUPP", tries, flags,
				     nm_retname(ret));
		}
		ok++;
		if (r.buf.flags & (NPU_MEM_BUF_DEV_HIDDEN | NPU_MEM_BUF_BOUNCED |
				   NPU_MEM_BUF_DEV_UNMAPPED)) {
			sw.stop = 1;
			pthread_join(th, NULL);
			nm_skip("flags %#x: the device address is not the "
				"physical one", r.buf.flags);
		}
		{
			uint64_t pfn = r.buf.dev_addr / NM_4K;
			uint64_t kpf = kpageflags(pfn);
			bool allowed = (kpf >> KPF_ANON) & 1 ||
				       (flags && ((kpf >> KPF_ZERO_PAGE) & 1));

			if (!allowed) {
				sw.stop = 1;
				pthread_join(th, NULL);
				ck_abort_msg("try %lu (flags %#x): pinned pfn "
					     "%#llx, kpageflags %#llx: not "
					     "anonymous (the ext4 file's page "
					     "is pfn %#llx)", tries, flags,
					     (unsigned long long)pfn,
					     (unsigned long long)kpf,
					     (unsigned long long)(file_phys / NM_4K));
			}
		}
		NM_REQUIRE(nm_free(fd, r.handle) == 0, "FREE failed");
		sw.tried = tries;
	}
	sw.stop = 1;
	pthread_join(th, NULL);
	printf("shared file race: %lu tries in %.1f s, %lu registered, "
	       "%lu refused\n", tries, nm_now() - t0, ok, refused);
	ck_assert_msg(!sw.err, "swapping mmap: %s", nm_errname(sw.err));
	ck_assert_msg(ok >= 100 && refused >= 100,
		      "too little progress in the time allowed: %lu tries, "
		      "%lu registered, %lu refused", tries, ok, refused);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	close(fd);
	munmap(sw.addr, len);
	munmap(stable, len);
	close(sw.ffd);
	snprintf(path, sizeof(path), "umount %s", dir);
	ck_assert_int_eq(nm_shell(path, NULL), 0);
	rmdir(dir);
}
END_TEST

/* ---------------------------------------------------------------- */
/* fork() after registering                                          */

static bool have_edu(void)
{
	return access(NM_DMA_COPY, W_OK) == 0;
}

/* A buffer the device copies to and from, mapped, first 4 KiB at dev_addr */
struct target {
	struct npu_mem_alloc a;
	uint8_t *map;
};

static void target_new(struct target *t, int fd)
{
	nm_alloc_ok(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &t->a);
	t->map = nm_map_ok(fd, &t->a, RW);
	memset(t->map, 0xee, NM_4K);
	nm_sync_ok(fd, t->a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
}

/* The device's view of the first 4 KiB of @h: copied into @t, read back */
static void assert_device_sees(int fd, const struct npu_mem_host_register *h,
			       struct target *t, uint64_t seed, const char *when)
{
	size_t bad;

	nm_sync_ok(fd, h->handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
	nm_assert_ok(nm_dma_copy(h->buf.dev_addr, t->a.buf.dev_addr, NM_4K));
	nm_sync_ok(fd, t->a.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, NM_4K);
	bad = nm_verify(t->map, NM_4K, seed);
	ck_assert_msg(bad == SIZE_MAX, "%s: the device read other bytes "
		      "(first at %zu)", when, bad);
}

START_TEST(fork_keeps_parent_pages)
{
	const uint64_t size = 4 * NM_4K;
	struct npu_mem_host_register r;
	uint64_t phys0[4], phys1;
	struct target t;
	int fd = nm_open(), go[2];
	uint8_t *p = anon(size, RW);
	pid_t pid;

	nm_fill(p, size, 100);
	reg_ok(fd, p, size, 0, &r);
	for (int i = 0; i < 4; i++)
		nm_assert_ok(nm_virt_to_phys(p + i * NM_4K, &phys0[i]));
	ck_assert_int_eq(pipe(go), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/*
		 * The child has copies: the parent's writes after fork() are
		 * not in them, and its own writes stay its own.
		 */
		close(go[1]);
		if (nm_await(go[0]))
			_exit(2);
		if (nm_verify(p, size, 100) != SIZE_MAX)
			_exit(3);
		nm_fill(p, size, 200);
		_exit(nm_verify(p, size, 200) == SIZE_MAX ? 0 : 4);
	}
	close(go[0]);
	/*
	 * The parent writes first, while the child still shares whatever it
	 * shares: pages that were merely copy-on-write would be replaced
	 * under the parent now, and the device would keep the old ones.
	 */
	nm_fill(p, size, 300);
	for (int i = 0; i < 4; i++) {
		nm_assert_ok(nm_virt_to_phys(p + i * NM_4K, &phys1));
		ck_assert_msg(phys1 == phys0[i], "page %d moved at fork: %#llx "
			      "-> %#llx: the device keeps the old one", i,
			      (unsigned long long)phys0[i],
			      (unsigned long long)phys1);
	}
	if (have_edu()) {
		target_new(&t, fd);
		assert_device_sees(fd, &r, &t, 300, "parent's write after fork");
	} else {
		printf("no edu device: device view after fork not checked\n");
	}
	nm_signal(go[1]);
	nm_wait_ok(pid, "forked child (2: no go, 3: saw the parent's writes, "
		   "4: lost its own)");
	ck_assert_msg(nm_verify(p, size, 300) == SIZE_MAX,
		      "the child's writes reached the parent");
	close(fd);
	munmap(p, size);
}
END_TEST

/* ---------------------------------------------------------------- */
/* The device reads and writes the user's pages (edu guests)          */

START_TEST(device_sees_user_bytes)
{
	const uint64_t size = 8 * NM_4K;
	struct npu_mem_host_register h, ro;
	struct target t;
	uint8_t *p = anon(size, RW);
	uint64_t off;
	size_t bad;
	int fd = nm_open();

	if (!have_edu()) {
		close(fd);
		nm_skip("no edu DMA engine (%s): run in x86_64-iommu-edu",
			NM_DMA_COPY);
	}
	nm_fill(p, size, 41);
	reg_ok(fd, p, size, 0, &h);
	target_new(&t, fd);
	printf("host range dev_addr %#llx flags %#x segments %u\n",
	       (unsigned long long)h.buf.dev_addr, h.buf.flags,
	       h.buf.dev_segments);

	/* user -> device -> buffer */
	assert_device_sees(fd, &h, &t, 41, "first page");
	/* buffer -> device -> user, at an offset if the range is one run */
	off = (h.buf.flags & NPU_MEM_BUF_DEV_CONTIG) ? 5 * NM_4K : 0;
	nm_fill(t.map, NM_4K, 77);
	nm_sync_ok(fd, t.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
	nm_sync_ok(fd, h.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size);
	nm_assert_ok(nm_dma_copy(t.a.buf.dev_addr, h.buf.dev_addr + off, NM_4K));
	nm_sync_ok(fd, h.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
	bad = nm_verify(p + off, NM_4K, 77);
	ck_assert_msg(bad == SIZE_MAX, "device write at %llu did not reach "
		      "the user's memory (first wrong byte %zu)",
		      (unsigned long long)off, bad);
	/* and nothing else of the user's changed */
	ck_assert_msg(nm_verify(p, off, 41) == SIZE_MAX &&
		      nm_verify_at(p + off + NM_4K, size - off - NM_4K, 41,
				   off + NM_4K) == SIZE_MAX,
		      "device write spilled outside [%llu, +4096)",
		      (unsigned long long)off);
	/* outside the registered range: refused */
	if (h.buf.flags & NPU_MEM_BUF_DEV_CONTIG)
		nm_assert_ret(nm_dma_copy(t.a.buf.dev_addr,
				       h.buf.dev_addr + size - 8, 16), -EINVAL);

	/* FREE: the device address is gone */
	nm_free_ok(fd, h.handle);
	nm_assert_ret(nm_dma_copy(h.buf.dev_addr, t.a.buf.dev_addr, NM_4K),
		      -EINVAL);

	/* read-only registration: a source, never a target */
	nm_fill(p, size, 55);
	reg_ok(fd, p, size, NPU_MEM_HOST_READONLY, &ro);
	assert_device_sees(fd, &ro, &t, 55, "read-only registration");
	nm_assert_ret(nm_dma_copy(t.a.buf.dev_addr, ro.buf.dev_addr, NM_4K),
		      -EINVAL);
	nm_sync_ok(fd, ro.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
	ck_assert_msg(nm_verify(p, size, 55) == SIZE_MAX,
		      "read-only registration written");
	nm_free_ok(fd, ro.handle);
	close(fd);
	munmap(p, size);
}
END_TEST

/*
 * A writable registration pins for writing: memory the process has only
 * read (the shared zero page) and memory it shares copy-on-write with a
 * fork child get pages of their own first, so a device write reaches this
 * process and nobody else.
 */
START_TEST(device_writes_only_this_process)
{
	const uint64_t size = 2 * NM_4K;
	struct npu_mem_host_register h;
	struct target t, zero;
	uint8_t *rd, *fresh, *cow;
	int fd = nm_open(), go[2];
	size_t bad;
	pid_t pid;

	if (!have_edu()) {
		close(fd);
		nm_skip("no edu DMA engine (%s): run in x86_64-iommu-edu",
			NM_DMA_COPY);
	}
	target_new(&t, fd);
	nm_fill(t.map, NM_4K, 91);
	nm_sync_ok(fd, t.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);

	/* only read: every page is the zero page until written */
	rd = anon(size, RW);
	for (uint64_t i = 0; i < size; i += NM_4K)
		(void)*(volatile uint8_t *)(rd + i);
	reg_ok(fd, rd, size, 0, &h);
	nm_assert_ok(nm_dma_copy(t.a.buf.dev_addr, h.buf.dev_addr, NM_4K));
	nm_sync_ok(fd, h.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
	fresh = anon(NM_4K, PROT_READ);
	if (nm_nonzero(fresh, NM_4K) != SIZE_MAX) {
		/* give the system its zeroes back before failing */
		target_new(&zero, fd);
		memset(zero.map, 0, NM_4K);
		nm_sync_ok(fd, zero.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
		nm_dma_copy(zero.a.buf.dev_addr, h.buf.dev_addr, NM_4K);
		ck_abort_msg("the device wrote the shared zero page: the "
			     "registration pinned it instead of a page of "
			     "the process's own");
	}
	bad = nm_verify(rd, NM_4K, 91);
	ck_assert_msg(bad == SIZE_MAX, "the device's write to memory only "
		      "read before did not reach the process (first wrong "
		      "byte %zu)", bad);
	ck_assert_msg(nm_nonzero(rd + NM_4K, NM_4K) == SIZE_MAX,
		      "the page the device did not write changed");
	nm_free_ok(fd, h.handle);

	/* shared copy-on-write with a child */
	cow = anon(size, RW);
	nm_fill(cow, size, 92);
	ck_assert_int_eq(pipe(go), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(go[1]);
		if (nm_await(go[0]))
			_exit(2);
		_exit(nm_verify(cow, size, 92) == SIZE_MAX ? 0 : 3);
	}
	close(go[0]);
	reg_ok(fd, cow, size, 0, &h);
	nm_assert_ok(nm_dma_copy(t.a.buf.dev_addr, h.buf.dev_addr, NM_4K));
	nm_sync_ok(fd, h.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
	nm_signal(go[1]);
	nm_wait_ok(pid, "fork child (2: no go, 3: saw the device's write to "
		   "the parent's registration)");
	bad = nm_verify(cow, NM_4K, 91);
	ck_assert_msg(bad == SIZE_MAX, "the device's write to memory shared "
		      "copy-on-write did not reach the registering process "
		      "(first wrong byte %zu)", bad);
	ck_assert_msg(nm_verify_at(cow + NM_4K, NM_4K, 92, NM_4K) == SIZE_MAX,
		      "the page the device did not write changed");
	nm_free_ok(fd, h.handle);
	close(fd);
	munmap(rd, size);
	munmap(fresh, NM_4K);
	munmap(cow, size);
}
END_TEST

START_TEST(munmap_while_registered)
{
	const uint64_t size = 4 * NM_4K;
	struct npu_mem_host_register h;
	struct nm_counters c0;
	uint64_t pin0 = nm_vmpin_bytes();
	int64_t held0 = pins_held();
	struct target t;
	uint8_t *p = anon(size, RW);
	int fd = nm_open();

	nm_counters(fd, &c0);
	nm_fill(p, size, 61);
	reg_ok(fd, p, size, 0, &h);
	nm_assert_sys(munmap(p, size));
	/* a new mapping in the same place is not what the device sees */
	p = mmap(p, size, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ck_assert(p != MAP_FAILED);
	nm_fill(p, size, 62);
	if (have_edu()) {
		target_new(&t, fd);
		assert_device_sees(fd, &h, &t, 61, "after munmap");
		munmap(t.map, NM_4K);
		nm_free_ok(fd, t.a.handle);
	}
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + size);
	nm_free_ok(fd, h.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_pins(held0, "after FREE");
	nm_assert_counters_now(fd, &c0);
	close(fd);
	munmap(p, size);
}
END_TEST

/* THP-backed ranges register whole and describe as 4 KiB pages. */
START_TEST(large_range)
{
	const uint64_t size = 8 * NM_MiB;
	struct npu_mem_host_register h;
	uint64_t pin0 = nm_vmpin_bytes();
	int64_t held0 = pins_held();
	uint8_t *raw = anon(size + NM_2M, RW);
	uint8_t *p = (uint8_t *)NM_ALIGN((uintptr_t)raw, NM_2M);
	double t0;
	int fd = nm_open();

	madvise(p, size, MADV_HUGEPAGE);
	nm_fill(p, size, 9);
	t0 = nm_now();
	reg_ok(fd, p, size, 0, &h);
	printf("8 MiB registered in %.3f s: %u device segments\n",
	       nm_now() - t0, h.buf.dev_segments);
	assert_host_desc(&h.buf, size, false);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + size);
	nm_assert_ok(nm_sync(fd, h.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, size));
	ck_assert_msg(nm_verify(p, size, 9) == SIZE_MAX, "memory changed");
	/* THP pages pin as one pin per 4 KiB page, and all go at FREE */
	assert_pins(held0 + (int64_t)(size / NM_4K),
		    "with THP registered (one per 4 KiB page)");
	nm_free_ok(fd, h.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_pins(held0, "after FREE");
	close(fd);
	munmap(raw, size + NM_2M);
}
END_TEST

/* Check's parent process, after the test whatever its result. */
static char g_bdf[NM_BDF_LEN];

static void restore_device(void)
{
	nm_pci_give_back(g_bdf, 60);
}

START_TEST(device_removal)
{
	const uint64_t size = 4 * NM_4K;
	struct npu_mem_host_register h;
	struct npu_mem_buffer q;
	uint64_t pin0 = nm_vmpin_bytes();
	int64_t held0 = pins_held();
	uint8_t *p = anon(size, RW), *p2 = anon(size, RW);
	int fd = nm_open();

	if (!g_bdf[0]) {
		close(fd);
		nm_skip("no PCI function bound to npu_mem: run in "
			"x86_64-iommu-edu");
	}
	nm_fill(p, size, 71);
	reg_ok(fd, p, size, 0, &h);
	nm_assert_ok(nm_pci_unbind(g_bdf));
	ck_assert_msg(nm_pci_wait_bound(g_bdf, false, 60), "%s still bound",
		      g_bdf);
	nm_assert_ok(nm_query(fd, h.handle, &q));
	ck_assert_msg((q.flags & (NPU_MEM_BUF_HOST | NPU_MEM_BUF_DEV_UNMAPPED)) ==
		      (NPU_MEM_BUF_HOST | NPU_MEM_BUF_DEV_UNMAPPED) && !q.dev_addr,
		      "after unbind: flags %#x dev_addr %#llx", q.flags,
		      (unsigned long long)q.dev_addr);
	nm_assert_ret(nm_sync(fd, h.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size),
		      -ENODEV);
	/* other pages: these are still claimed by h (writable_pages_claimed_once) */
	assert_refused(fd, p2, size, 0, -ENODEV);
	ck_assert_msg(nm_verify(p, size, 71) == SIZE_MAX, "memory changed");
	nm_free_ok(fd, h.handle);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	assert_pins(held0, "after FREE");
	nm_assert_ok(nm_pci_bind(g_bdf));
	ck_assert_msg(nm_pci_wait_bound(g_bdf, true, 60), "%s not bound again",
		      g_bdf);
	reg_ok(fd, p, size, 0, &h);
	ck_assert_msg(!(h.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED) && h.buf.dev_addr,
		      "after bind: flags %#x", h.buf.flags);
	close(fd);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	munmap(p2, size);
	munmap(p, size);
}
END_TEST

/* In Check's own process, after the test, passed or failed: gives the
 * device back so that later programs in the guest have it. */
static const struct nm_fixture restore_fx = {
	.teardown = restore_device, .unchecked = true,
};

int main(void)
{
	Suite *s = nm_suite("host_register");
	int ret;

	nm_require_device();
	ret = nm_node_open_to_all();
	if (ret) {
		printf("SKIP: needs root in a test guest, to let uid %d open "
		       NM_DEV_PATH ": %s\n", UID, nm_retname(ret));
		return 77;
	}
	nm_add(s, register_anon_and_describe, 60);
	nm_add(s, bad_arguments, 60);
	nm_add(s, device_index_and_old_size, 30);
	nm_add(s, readonly_registration, 60);
	nm_add(s, pfn_map_refused, 60);
	nm_add(s, io_map_refused, 60);
	nm_add(s, pfn_only_map_refused, 60);
	nm_add(s, shared_memory_and_files, 60);
	nm_add(s, hugetlbfs_shared_registers, 60);
	nm_add(s, own_mappings_refused, 60);
	nm_add(s, writable_pages_claimed_once, 120);
	nm_add(s, memlock_limit_and_give_back, 60);
	nm_add(s, exit_gives_back, 60);
	nm_add(s, race_munmap_register, nm_span_ceiling(race_seconds()) + 120);
	nm_add(s, race_shared_file_register, 300 + 120);
	nm_add(s, fork_keeps_parent_pages, 60);
	nm_add(s, device_sees_user_bytes, 120);
	nm_add(s, device_writes_only_this_process, 120);
	nm_add(s, munmap_while_registered, 60);
	nm_add(s, large_range, 120);
	/* last: it takes the device away and gives it back */
	if (nm_pci_bound(g_bdf, sizeof(g_bdf)))
		g_bdf[0] = 0;
	nm_add_fx(s, device_removal, 240, &restore_fx);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_node_restore();
	return ret;
}
