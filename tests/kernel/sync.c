// SPDX-License-Identifier: GPL-2.0-only
/*
 * sync: NPU_MEM_IOCTL_SYNC (CPU cache maintenance on a byte range) and the
 * device properties GET_INFO reports for it.
 *  - directions TO_DEVICE (1), FROM_DEVICE (2), BIDIRECTIONAL (3) on whole
 *    NORMAL_ONLY, HUGE_ONLY, mixed HUGE_FIRST and READONLY buffers succeed
 *    and leave the contents alone;
 *  - sub-ranges crossing 4 KiB page boundaries and 2 MiB chunk boundaries
 *    (including the huge/normal seam of a HUGE_FIRST buffer), single bytes
 *    at both ends, and the last byte succeed;
 *  - length 0 -> EINVAL; direction 0, 4, 5, 7, 0x80000001, 0xffffffff ->
 *    EINVAL; reserved != 0 -> EINVAL; offset+length past the end ->
 *    EINVAL; offset+length overflowing u64 (also when the wrapped end lands
 *    inside the buffer) -> EINVAL;
 *  - handle 0, never allocated, freed, another file's, or freed while a
 *    dma-buf still holds the buffer -> ENOENT;
 *  - ioctl framing: wrong direction bits -> ENOTTY, short struct -> EINVAL,
 *    longer struct with a zero tail works, non-zero tail -> EINVAL, NULL ->
 *    EFAULT;
 *  - GET_INFO.dev_flags: COHERENT on x86; PCI and IOMMU exactly as sysfs
 *    says for the bound device (npu_pci=), and both set in the
 *    x86_64-iommu-edu guest, neither in the plain x86_64 one; the debugfs
 *    "device" file agrees;
 *  - NPU_MEM_BUF_BOUNCED on every buffer, of every policy and size, exactly
 *    where the device sees bounce buffers (swiotlb forced on the command
 *    line, no IOMMU: the x86_64-swiotlb-edu guest), on none elsewhere; a
 *    buffer 2 MiB chunks back is allocated there too (one swiotlb mapping
 *    holds at most 256 KiB).
 *  - a reader (a read-only handle of a buffer its owner writes, here the
 *    DMABUF_IMPORT of its read-only dma-buf) cannot undo the owner's
 *    writes: after the owner writes, syncs, and writes again unsynced, the
 *    reader's SYNC in every direction and its dma-buf's START READ leave the
 *    second bytes in place; on a bounced buffer, where each of those would
 *    copy one copy over the other, they are refused with EACCES.
 * After every refused call: an unrelated live buffer (contents, QUERY) and
 * the driver's GET_INFO counters are unchanged (NM_SENTINEL_CHECK).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_bounce.h"
#include "nmtest_dmabuf.h"
#include "nmtest_fixture.h"

static const uint32_t dirs[] = {
	NPU_MEM_SYNC_TO_DEVICE, NPU_MEM_SYNC_FROM_DEVICE,
	NPU_MEM_SYNC_BIDIRECTIONAL,
};

/* A buffer to sync, mapped and patterned so a SYNC that corrupts shows. */
static void tbuf_new(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		     uint32_t policy, uint32_t flags)
{
	nm_tbuf_alloc(t, c, size, policy, flags);
	nm_tbuf_map(t, c, 0x5c0ffee ^ t->a.handle ^ size);
}

static void tbuf_check(struct nm_tbuf *t)
{
	size_t bad;

	if (t->a.buf.flags & NPU_MEM_BUF_READONLY)
		bad = nm_nonzero(t->map, t->a.buf.size);
	else
		bad = nm_verify(t->map, t->a.buf.size, t->seed);
	ck_assert_msg(bad == SIZE_MAX, "handle %u: contents changed at %zu",
		      t->a.handle, bad);
}

static void tbuf_free(struct nm_tbuf *t, struct nm_ctx *c)
{
	tbuf_check(t);
	nm_tbuf_free(t, c);
}

/* ---- what works ------------------------------------------------------ */

static void whole_buffer(uint64_t size, uint32_t policy, uint32_t flags)
{
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, size, policy, flags);
	printf("%s %llu flags %#x: %u huge %u normal, %u device segments\n",
	       nm_policy_name(policy), (unsigned long long)t.a.buf.size, flags,
	       t.a.buf.huge_pages, t.a.buf.normal_pages, t.a.buf.dev_segments);
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++)
		nm_sync_ok(c.fd, t.a.handle, dirs[d], 0, t.a.buf.size);
	tbuf_check(&t);
	/* Syncing twice, and every direction in turn, is harmless too. */
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++)
		nm_sync_ok(c.fd, t.a.handle, dirs[NM_ARRAY_SIZE(dirs) - 1 - d],
			   0, t.a.buf.size);
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}

START_TEST(sync_whole_normal)
{
	whole_buffer(3 * NM_MiB + 12 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
}
END_TEST

START_TEST(sync_whole_huge)
{
	whole_buffer(6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0);
}
END_TEST

START_TEST(sync_whole_mixed)
{
	/* one (or two) 2 MiB chunks and a 4 KiB tail */
	whole_buffer(4 * NM_MiB + 3 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0);
}
END_TEST

START_TEST(sync_whole_readonly)
{
	whole_buffer(NM_2M, NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_ALLOC_READONLY);
}
END_TEST

struct range {
	uint64_t off, len;	/* off relative to "at" below */
};

/* Ranges around the boundary at byte `at` of the buffer. */
static void sync_around(int fd, struct nm_tbuf *t, uint64_t at)
{
	const struct range r[] = {
		{ -1, 2 },		/* the two bytes either side */
		{ -8, 16 },
		{ -NM_4K, 2 * NM_4K },	/* a page either side */
		{ -NM_4K + 100, NM_4K },
		{ -3 * NM_4K - 7, 5 * NM_4K + 13 },
		{ 0, 1 },		/* starts exactly on it */
		{ -1, 1 },		/* ends exactly on it */
	};

	for (size_t i = 0; i < NM_ARRAY_SIZE(r); i++) {
		uint64_t off = at + r[i].off;

		if ((int64_t)r[i].off < 0 && -(int64_t)r[i].off > (int64_t)at)
			continue;	/* would start before the buffer */
		if (off + r[i].len > t->a.buf.size)
			continue;	/* would end after it */
		for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++)
			nm_sync_ok(fd, t->a.handle, dirs[d], off, r[i].len);
	}
	tbuf_check(t);
}

static void ends_of(int fd, struct nm_tbuf *t)
{
	uint64_t size = t->a.buf.size;

	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		nm_sync_ok(fd, t->a.handle, dirs[d], 0, 1);
		nm_sync_ok(fd, t->a.handle, dirs[d], size - 1, 1);
		nm_sync_ok(fd, t->a.handle, dirs[d], size - NM_4K, NM_4K);
		nm_sync_ok(fd, t->a.handle, dirs[d], 1, size - 1);
		nm_sync_ok(fd, t->a.handle, dirs[d], 0, size - 1);
	}
}

START_TEST(sync_subranges_cross_4k)
{
	struct nm_ctx c;
	struct nm_tbuf n, h;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&n, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	tbuf_new(&h, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0);
	for (uint64_t at = NM_4K; at < n.a.buf.size; at += 5 * NM_4K)
		sync_around(c.fd, &n, at);
	/* inside a 2 MiB chunk, 4 KiB boundaries are not chunk boundaries */
	for (uint64_t at = 4 * NM_4K; at < h.a.buf.size; at += 97 * NM_4K)
		sync_around(c.fd, &h, at);
	ends_of(c.fd, &n);
	ends_of(c.fd, &h);
	tbuf_free(&n, &c);
	tbuf_free(&h, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(sync_subranges_cross_2m)
{
	struct nm_ctx c;
	struct nm_tbuf n, h, m;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&n, &c, 4 * NM_MiB + NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	tbuf_new(&h, &c, 6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0);
	tbuf_new(&m, &c, 2 * NM_MiB + 8 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST, 0);
	printf("device segments: normal %u, huge %u, mixed %u (%u huge + %u "
	       "normal)\n", n.a.buf.dev_segments, h.a.buf.dev_segments,
	       m.a.buf.dev_segments, m.a.buf.huge_pages, m.a.buf.normal_pages);
	sync_around(c.fd, &n, NM_2M);
	sync_around(c.fd, &n, 2 * NM_2M);
	sync_around(c.fd, &h, NM_2M);
	sync_around(c.fd, &h, 2 * NM_2M);
	sync_around(c.fd, &m, NM_2M);	/* the huge/normal seam */
	/* ranges spanning whole chunks and more */
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		nm_sync_ok(c.fd, h.a.handle, dirs[d], NM_2M - 100, NM_2M + 200);
		nm_sync_ok(c.fd, h.a.handle, dirs[d], 100, h.a.buf.size - 200);
		nm_sync_ok(c.fd, n.a.handle, dirs[d], NM_2M - 100, NM_2M + 200);
		nm_sync_ok(c.fd, m.a.handle, dirs[d], NM_2M - NM_4K,
			   m.a.buf.size - NM_2M + NM_4K);
	}
	ends_of(c.fd, &m);
	tbuf_free(&n, &c);
	tbuf_free(&h, &c);
	tbuf_free(&m, &c);
	nm_ctx_fini(&c);
}
END_TEST

/* ---- what is refused ------------------------------------------------- */

/* Refused with want, and nothing about the buffer or the sentinel moved. */
#define SYNC_REFUSED(c, t, dir, off, len, want) do {			\
	nm_assert_ret(nm_sync((c)->fd, (t)->a.handle, (dir), (off), (len)), \
		      (want));						\
	tbuf_check(t);							\
	NM_SENTINEL_CHECK(&(c)->s);					\
} while (0)

START_TEST(sync_length_zero)
{
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, NM_2M + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0);
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		SYNC_REFUSED(&c, &t, dirs[d], 0, 0, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], NM_4K, 0, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], t.a.buf.size - 1, 0, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], t.a.buf.size, 0, -EINVAL);
	}
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(sync_bad_direction)
{
	static const uint32_t bad[] = {
		0, 4, 5, 6, 7, 8, 0x10, 0x100, 0x80000001, 0x7fffffff,
		0xfffffffe, 0xffffffff,
	};
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		SYNC_REFUSED(&c, &t, bad[i], 0, t.a.buf.size, -EINVAL);
		SYNC_REFUSED(&c, &t, bad[i], NM_4K, 1, -EINVAL);
	}
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(sync_reserved_nonzero)
{
	static const uint64_t bad[] = {
		1, 2, 0x80, 1ULL << 32, 1ULL << 63, ~0ULL,
	};
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
			struct npu_mem_sync s = {
				.handle = t.a.handle, .direction = dirs[d],
				.offset = 0, .length = NM_4K,
				.reserved = bad[i],
			};

			nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_SYNC, &s),
				      -EINVAL);
			tbuf_check(&t);
			NM_SENTINEL_CHECK(&c.s);
		}
	}
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

static void past_end(uint64_t size, uint32_t policy)
{
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, size, policy, 0);
	size = t.a.buf.size;
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		SYNC_REFUSED(&c, &t, dirs[d], size, 1, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], 0, size + 1, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], size - 1, 2, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], size - NM_4K, NM_4K + 1, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], 1, size, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], size + NM_4K, NM_4K, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], size, size, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], 0, 2 * size, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], 1ULL << 62, 1, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], 0, 1ULL << 62, -EINVAL);
	}
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}

START_TEST(sync_past_end_normal)
{
	past_end(64 * NM_KiB + NM_4K, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(sync_past_end_huge)
{
	past_end(4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(sync_range_overflow)
{
	struct nm_ctx c;
	struct nm_tbuf t;
	uint64_t size;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, NM_2M, NPU_MEM_POLICY_HUGE_FIRST, 0);
	size = t.a.buf.size;
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		SYNC_REFUSED(&c, &t, dirs[d], UINT64_MAX, 1, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], UINT64_MAX, UINT64_MAX, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], 1, UINT64_MAX, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], UINT64_MAX - NM_4K + 1, NM_4K,
			     -EINVAL);
		/* The end wraps to 100: inside the buffer if unchecked. */
		SYNC_REFUSED(&c, &t, dirs[d], NM_4K, 0 - NM_4K + 100, -EINVAL);
		/* ... or to exactly 0, or to the buffer's end. */
		SYNC_REFUSED(&c, &t, dirs[d], size / 2, 0 - size / 2, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], UINT64_MAX, size + 1, -EINVAL);
		SYNC_REFUSED(&c, &t, dirs[d], UINT64_MAX - size + 1,
			     2 * size, -EINVAL);
	}
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(sync_unknown_handle)
{
	struct nm_ctx c;
	struct nm_tbuf t;
	struct npu_mem_alloc other, gone;
	int fd2 = nm_open(), dfd;
	uint32_t foreign = 0;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	/* A handle that names a buffer in another open file, not in ours. */
	for (int i = 0; i < 8 && !foreign; i++) {
		nm_alloc_ok(fd2, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &other);
		if (nm_query(c.fd, other.handle, NULL) == -ENOENT)
			foreign = other.handle;
	}
	ck_assert_msg(foreign, "no handle of fd2 is unknown in fd1");
	nm_alloc_ok(c.fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &gone);
	nm_free_ok(c.fd, gone.handle);
	/* counters without the other file's buffers: they are global */
	nm_counters(c.fd, &c.s.counters);

	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		const uint32_t bad[] = {
			0, gone.handle, foreign, 0x7fffffff, 0xfffffffe,
			0xffffffff,
		};

		for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
			nm_assert_ret(nm_sync(c.fd, bad[i], dirs[d], 0, NM_4K),
				      -ENOENT);
			NM_SENTINEL_CHECK(&c.s);
		}
	}

	/* Freed while a dma-buf keeps the buffer alive: the handle is gone. */
	dfd = nm_export_ok(c.fd, t.a.handle, O_CLOEXEC);
	munmap(t.map, t.a.buf.size);
	nm_free_ok(c.fd, t.a.handle);
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++)
		nm_assert_ret(nm_sync(c.fd, t.a.handle, dirs[d], 0, NM_4K),
			      -ENOENT);
	close(dfd);
	close(fd2);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(sync_struct_framing)
{
	struct {
		struct npu_mem_sync s;
		uint64_t tail[2];
	} big;
	struct nm_ctx c;
	struct nm_tbuf t;
	unsigned long cmd;

	nm_ctx_init(&c, NM_CTX_BASE);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	memset(&big, 0, sizeof(big));
	big.s.handle = t.a.handle;
	big.s.direction = NPU_MEM_SYNC_BIDIRECTIONAL;
	big.s.length = t.a.buf.size;

	/* SYNC is _IOW: read/write or read-only direction bits are not it */
	cmd = NM_IOC(NM_IOC_RW, 0x04, sizeof(big.s));
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -ENOTTY);
	cmd = NM_IOC(_IOC_READ, 0x04, sizeof(big.s));
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -ENOTTY);
	NM_SENTINEL_CHECK(&c.s);
	/* shorter than v1 */
	cmd = NM_IOC(_IOC_WRITE, 0x04, sizeof(big.s) - 8);
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -EINVAL);
	NM_SENTINEL_CHECK(&c.s);
	/* longer, zero tail: a newer caller with nothing new to say */
	cmd = NM_IOC(_IOC_WRITE, 0x04, sizeof(big));
	nm_assert_ok(nm_ioctl(c.fd, cmd, &big));
	big.tail[1] = 1;
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -EINVAL);
	NM_SENTINEL_CHECK(&c.s);
	nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_SYNC, NULL), -EFAULT);
	nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_SYNC, nm_unmapped_addr()),
		      -EFAULT);
	NM_SENTINEL_CHECK(&c.s);
	tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

/* ---- the device ------------------------------------------------------- */

/*
 * dev_segments counts the contiguous device address ranges the buffer
 * occupies, and DEV_CONTIG is set exactly when that is one.  Under an IOMMU
 * every buffer is one IOVA range.  Without one the device address is the
 * physical address, so the ranges are the runs of physically adjacent
 * pages (/proc/self/pagemap, root).  The 2 MiB chunks of a freshly booted
 * guest are often adjacent: that is when a count of scatterlist entries
 * and a count of ranges differ.
 */
START_TEST(dev_segments_are_ranges)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} spec[] = {
		{ 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
		{ 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
		{ 6 * NM_MiB + 8 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST },
		{ 16 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
		{ 256 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
		{ 4 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
	};
	struct npu_mem_alloc a[NM_ARRAY_SIZE(spec)];
	void *map[NM_ARRAY_SIZE(spec)];
	struct npu_mem_info info;
	int fd = nm_open(), bad = 0;

	nm_get_info_ok(fd, &info);
	for (size_t i = 0; i < NM_ARRAY_SIZE(spec); i++) {
		unsigned int runs = 0;
		uint64_t phys = 0;
		int ret;

		nm_alloc_ok(fd, spec[i].size, spec[i].policy, 0, &a[i]);
		map[i] = nm_map_ok(fd, &a[i], PROT_READ);
		ret = nm_phys_runs(map[i], a[i].buf.size, &phys, &runs);
		printf("%s %llu: %u huge %u normal, dev_segments %u, flags %#x, "
		       "dev_addr %#llx, physical runs %u (%s) at %#llx\n",
		       nm_policy_name(spec[i].policy),
		       (unsigned long long)a[i].buf.size, a[i].buf.huge_pages,
		       a[i].buf.normal_pages, a[i].buf.dev_segments,
		       a[i].buf.flags, (unsigned long long)a[i].buf.dev_addr,
		       runs, nm_retname(ret), (unsigned long long)phys);
		if (!!(a[i].buf.flags & NPU_MEM_BUF_DEV_CONTIG) !=
		    (a[i].buf.dev_segments == 1)) {
			printf("  BAD: DEV_CONTIG %s with dev_segments %u\n",
			       a[i].buf.flags & NPU_MEM_BUF_DEV_CONTIG ?
			       "set" : "clear", a[i].buf.dev_segments);
			bad++;
		}
		if (a[i].buf.flags & NPU_MEM_BUF_BOUNCED &&
		    !(info.dev_flags & NPU_MEM_DEV_IOMMU)) {
			/* swiotlb slots: nothing to compare with the pages */
			printf("  bounced: device addresses are bounce "
			       "buffers, not these pages\n");
		} else if (info.dev_flags & NPU_MEM_DEV_IOMMU) {
			if (a[i].buf.dev_segments != 1) {
				printf("  BAD: %u segments under an IOMMU\n",
				       a[i].buf.dev_segments);
				bad++;
			}
		} else if (ret == 0) {
			if (a[i].buf.dev_segments != runs) {
				printf("  BAD: dev_segments %u, but the pages "
				       "form %u physical ranges\n",
				       a[i].buf.dev_segments, runs);
				bad++;
			}
			if (!(a[i].buf.flags & NPU_MEM_BUF_DEV_HIDDEN) &&
			    a[i].buf.dev_addr != phys) {
				printf("  BAD: dev_addr %#llx is not the "
				       "physical address %#llx (no IOMMU)\n",
				       (unsigned long long)a[i].buf.dev_addr,
				       (unsigned long long)phys);
				bad++;
			}
		}
	}
	for (size_t i = 0; i < NM_ARRAY_SIZE(spec); i++) {
		munmap(map[i], a[i].buf.size);
		nm_free_ok(fd, a[i].handle);
	}
	close(fd);
	ck_assert_msg(!bad, "%d buffer(s) report device segments that are "
		      "not their device address ranges (see output)", bad);
}
END_TEST

START_TEST(get_info_dev_flags)
{
	struct npu_mem_info info;
	char why[256];
	uint32_t want = nm_expected_dev_flags(why, sizeof(why));
	const char *cfg = nm_vm_config();
	char *coh = nm_debugfs_device("coherent");
	char *iommu = nm_debugfs_device("iommu");
	char *dev = nm_debugfs_device("device");
	int fd = nm_open();

	nm_get_info_ok(fd, &info);
	printf("dev_flags %#x (%s%s%s), expected %#x from sysfs: %s; VM_CONFIG "
	       "'%s'; debugfs: device '%s' coherent '%s' iommu '%s'\n",
	       info.dev_flags,
	       info.dev_flags & NPU_MEM_DEV_COHERENT ? "COHERENT " : "",
	       info.dev_flags & NPU_MEM_DEV_IOMMU ? "IOMMU " : "",
	       info.dev_flags & NPU_MEM_DEV_PCI ? "PCI" : "", want, why, cfg,
	       dev ? dev : "-", coh ? coh : "-", iommu ? iommu : "-");
#if defined(__x86_64__) || defined(__i386__)
	ck_assert_msg(info.dev_flags & NPU_MEM_DEV_COHERENT,
		      "x86 DMA is cache-coherent, dev_flags %#x lacks COHERENT",
		      info.dev_flags);
#endif
	ck_assert_msg(info.dev_flags == want,
		      "dev_flags %#x, sysfs says %#x (%s)", info.dev_flags,
		      want, why);
	if (!strcmp(cfg, "x86_64-iommu-edu"))
		ck_assert_msg((info.dev_flags & (NPU_MEM_DEV_IOMMU |
						 NPU_MEM_DEV_PCI)) ==
			      (NPU_MEM_DEV_IOMMU | NPU_MEM_DEV_PCI),
			      "edu guest: dev_flags %#x lacks IOMMU|PCI",
			      info.dev_flags);
	else if (!strcmp(cfg, "x86_64"))
		ck_assert_msg(!(info.dev_flags & (NPU_MEM_DEV_IOMMU |
						  NPU_MEM_DEV_PCI)),
			      "plain guest (platform device): dev_flags %#x",
			      info.dev_flags);
	/* debugfs says the same, when it is there */
	if (coh)
		ck_assert_str_eq(coh, info.dev_flags & NPU_MEM_DEV_COHERENT ?
				 "yes" : "no");
	if (iommu)
		ck_assert_str_eq(iommu, info.dev_flags & NPU_MEM_DEV_IOMMU ?
				 "yes" : "no");
	if (dev)
		ck_assert_msg(!strncmp(dev, info.dev_flags & NPU_MEM_DEV_PCI ?
				       "pci " : "platform ",
				       info.dev_flags & NPU_MEM_DEV_PCI ? 4 : 9),
			      "debugfs device '%s' vs dev_flags %#x", dev,
			      info.dev_flags);
	free(coh);
	free(iommu);
	free(dev);
	close(fd);
}
END_TEST

START_TEST(bounced_flag)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} spec[] = {
		{ NM_4K, NPU_MEM_POLICY_NORMAL_ONLY },
		{ 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
		{ NM_2M + NM_4K, NPU_MEM_POLICY_NORMAL_ONLY },
		{ NM_2M, NPU_MEM_POLICY_HUGE_ONLY },
		{ 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
		{ 6 * NM_MiB + 140 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST },
	};
	struct npu_mem_info info;
	struct npu_mem_buffer q;
	int fd = nm_open(), bad = 0;
	bool want;

	/* no sentinel: its 2 MiB chunk would hide what each size does */
	nm_get_info_ok(fd, &info);
	want = nm_expect_bounced(info.dev_flags);
	printf("swiotlb %s, dev_flags %#x: every buffer %s NPU_MEM_BUF_BOUNCED"
	       "\n", nm_swiotlb_forced() ? "forced" : "not forced",
	       info.dev_flags, want ? "has" : "lacks");
	for (size_t i = 0; i < NM_ARRAY_SIZE(spec); i++) {
		struct npu_mem_alloc a;
		int r = nm_alloc(fd, spec[i].size, spec[i].policy, 0, &a);
		bool got;

		if (r) {
			/* before the fix: a 2 MiB chunk was one mapping */
			printf("  BAD: %s %llu: ALLOC %s\n",
			       nm_policy_name(spec[i].policy),
			       (unsigned long long)spec[i].size, nm_retname(r));
			bad++;
			continue;
		}
		nm_assert_ok(nm_query(fd, a.handle, &q));
		got = a.buf.flags & NPU_MEM_BUF_BOUNCED;
		printf("  %s %llu: %u huge %u normal, flags %#x, %u device "
		       "segments%s\n", nm_policy_name(spec[i].policy),
		       (unsigned long long)a.buf.size, a.buf.huge_pages,
		       a.buf.normal_pages, a.buf.flags, a.buf.dev_segments,
		       got != want ? "  BAD" : "");
		bad += got != want;
		/* QUERY says what ALLOC said */
		ck_assert_uint_eq(q.flags, a.buf.flags);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
	ck_assert_msg(!bad, "%d buffer(s) %s (see output)", bad,
		      want ? "not flagged BOUNCED although swiotlb bounces "
		      "every mapping, or not allocated" :
		      "flagged BOUNCED where nothing bounces");
}
END_TEST

START_TEST(reader_keeps_owners_writes)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} spec[] = {
		{ 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
		{ NM_2M, NPU_MEM_POLICY_HUGE_ONLY },
	};
	int fd = nm_open();

	for (size_t i = 0; i < NM_ARRAY_SIZE(spec); i++) {
		struct npu_mem_dmabuf_import d = { 0 };
		struct npu_mem_alloc a;
		uint64_t size = spec[i].size;
		uint8_t *p, *want = malloc(size);
		int dfd, exp, ret;

		ck_assert_ptr_nonnull(want);
		nm_assert_ok(nm_alloc(fd, size, spec[i].policy, 0, &a));
		p = nm_mmap(fd, a.buf.mmap_offset, size, PROT_READ | PROT_WRITE);
		ck_assert_ptr_ne(p, MAP_FAILED);
		memset(p, 0xa1, size);
		nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size);
		memset(p, 0xb2, size);		/* the owner's, not yet synced */
		memset(want, 0xb2, size);

		dfd = nm_export_ok(fd, a.handle, O_CLOEXEC);
		d.fd = dfd;
		nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, &d));
		ck_assert_msg(d.buf.flags & NPU_MEM_BUF_READONLY,
			      "import of a read-only dma-buf: flags %#x",
			      d.buf.flags);
		exp = a.buf.flags & NPU_MEM_BUF_BOUNCED ? -EACCES : 0;
		printf("%s %llu, flags %#x: a reader's syncs must give %s\n",
		       nm_policy_name(spec[i].policy), (unsigned long long)size,
		       a.buf.flags, nm_retname(exp));
		ret = nm_sync(fd, d.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
		ck_assert_msg(nm_cmp(p, want, size) == SIZE_MAX, "the reader's "
			      "FROM_DEVICE (%s) undid the owner's write at byte "
			      "%zu", nm_retname(ret), nm_cmp(p, want, size));
		ck_assert_int_eq(ret, exp);
		ck_assert_int_eq(nm_sync(fd, d.handle, NPU_MEM_SYNC_BIDIRECTIONAL,
					 1, size - 1), exp);
		ck_assert_int_eq(nm_sync(fd, d.handle, NPU_MEM_SYNC_TO_DEVICE, 0,
					 size), exp);
		ck_assert_int_eq(nm_dmabuf_sync(dfd, DMA_BUF_SYNC_START |
						DMA_BUF_SYNC_READ), exp);
		/* no copy towards the pages: allowed */
		ck_assert_int_eq(nm_dmabuf_sync(dfd, DMA_BUF_SYNC_END |
						DMA_BUF_SYNC_READ), 0);
		ck_assert_msg(nm_cmp(p, want, size) == SIZE_MAX, "a reader's sync "
			      "undid the owner's write at byte %zu",
			      nm_cmp(p, want, size));
		/* the owner may: its FROM_DEVICE takes the device's copy */
		nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size);
		nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
		ck_assert(nm_cmp(p, want, size) == SIZE_MAX);
		nm_free_ok(fd, d.handle);
		close(dfd);
		munmap(p, size);
		nm_free_ok(fd, a.handle);
		free(want);
	}
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("sync");

	nm_add(s, sync_whole_normal, 60);
	nm_add(s, sync_whole_huge, 60);
	nm_add(s, sync_whole_mixed, 60);
	nm_add(s, sync_whole_readonly, 60);
	nm_add(s, sync_subranges_cross_4k, 60);
	nm_add(s, sync_subranges_cross_2m, 60);
	nm_add(s, sync_length_zero, 30);
	nm_add(s, sync_bad_direction, 30);
	nm_add(s, sync_reserved_nonzero, 30);
	nm_add(s, sync_past_end_normal, 30);
	nm_add(s, sync_past_end_huge, 30);
	nm_add(s, sync_range_overflow, 30);
	nm_add(s, sync_unknown_handle, 30);
	nm_add(s, sync_struct_framing, 30);
	nm_add(s, get_info_dev_flags, 30);
	nm_add(s, dev_segments_are_ranges, 60);
	nm_add(s, bounced_flag, 60);
	nm_add(s, reader_keeps_owners_writes, 60);
	return nm_run(s, NM_NEEDS_DEVICE);
}
