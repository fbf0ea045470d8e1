// SPDX-License-Identifier: GPL-2.0-only
/*
 * edu_dma: a real DMA engine behind an IOMMU.  In the x86_64-iommu-edu guest
 * the module is bound to QEMU's edu device (npu_pci=1234:11e8) behind
 * intel-iommu, and debugfs npu_mem/dma_copy makes the device copy bytes
 * between two device addresses (kernel/edu.c: "SRC DST LEN", root only,
 * through its 4 KiB internal buffer, ~100 ms per 4 KiB DMA, so transfers
 * here are a few KiB).  In the x86_64-swiotlb-edu guest the same engine
 * has no IOMMU and swiotlb bounces every mapping: there it copies between
 * bounce buffers, and the CPU's bytes reach them, and come back, only
 * through SYNC.  Elsewhere the program exits 77.
 *  - data the CPU wrote into buffer A, copied by the device A -> B, reads
 *    back correctly in B through the CPU mapping (SYNC TO_DEVICE on both
 *    ranges before, FROM_DEVICE on B's after), and nothing else in B
 *    changes: normal buffers across 4 KiB and 2 MiB boundaries, huge
 *    buffers across their 2 MiB chunk boundary, and between a huge chunk
 *    and the 4 KiB pages of HUGE_FIRST buffers, both ways;
 *  - the device's writes show through a dma-buf mapping of B (with
 *    DMA_BUF_IOCTL_SYNC), and a buffer whose handle is freed but which a
 *    dma-buf still holds stays a valid DMA target until the dma-buf goes;
 *  - with the IOMMU on (dev_flags IOMMU): every buffer is one device range
 *    (DEV_CONTIG, dev_segments 1) even when its pages are scattered, and
 *    device addresses are IOVAs: dev_addr is not the physical address of
 *    the first page (/proc/self/pagemap), and a physical address is not
 *    accepted as a device address;
 *  - dma_copy refuses (EINVAL) ranges outside every live buffer, ranges
 *    running past a buffer's end or from one buffer into the next, the
 *    address of a freed buffer, length 0, lengths that overflow, and
 *    malformed or over-long input; non-root cannot open it (EACCES).
 *  - bounce buffers: NPU_MEM_BUF_BOUNCED on every buffer exactly where
 *    swiotlb bounces them (forced, no IOMMU); CPU write, SYNC TO_DEVICE,
 *    device copy, SYNC FROM_DEVICE, CPU read is right for 4 KiB, 64 KiB
 *    and 2 MiB buffers (a 2 MiB chunk is bounced in 256 KiB pieces);
 *    without SYNC TO_DEVICE a bounced device copies stale bytes, and its
 *    writes reach the pages only at SYNC FROM_DEVICE (so a SYNC that did
 *    nothing would be caught); unbounced and coherent, it sees the CPU's
 *    bytes without SYNC; a full bounce pool is -ENOMEM, not -EIO.
 * The CPU's initial pattern is synced to the device (SYNC TO_DEVICE) as
 * every writer of a BOUNCED buffer must.
 * After refused copies: the target buffer, an unrelated live buffer and the
 * counters are unchanged.
 */
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_bounce.h"
#include "nmtest_dmabuf.h"
#include "nmtest_fixture.h"

#define RW	(PROT_READ | PROT_WRITE)

/* The fixture, in the guest configuration it was meant for. */
static void ctx_init(struct nm_ctx *c)
{
	const uint32_t both = NPU_MEM_DEV_IOMMU | NPU_MEM_DEV_PCI;
	uint32_t f;

	nm_ctx_init(c, NM_CTX_BASE);
	f = c->info.dev_flags;
	if (!strcmp(nm_vm_config(), "x86_64-iommu-edu"))
		ck_assert_msg((f & both) == both,
			      "edu guest without IOMMU|PCI: dev_flags %#x", f);
	if (!strcmp(nm_vm_config(), "x86_64-swiotlb-edu"))
		ck_assert_msg((f & both) == NPU_MEM_DEV_PCI &&
			      nm_swiotlb_forced(),
			      "swiotlb guest: dev_flags %#x (want PCI, no "
			      "IOMMU), swiotlb %sforced", f,
			      nm_swiotlb_forced() ? "" : "not ");
}

static void tbuf_new(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		     uint32_t policy)
{
	/* the copies here address the buffer by offset from dev_addr */
	nm_tbuf_alloc_dev(t, c, size, policy, 0);
	nm_tbuf_map(t, c, 0xed0 ^ ((uint64_t)t->a.handle << 36) ^ size);
	/*
	 * The CPU wrote: where the device sees bounce buffers it sees these
	 * bytes only after a SYNC (and a later SYNC for the CPU would copy
	 * the bounce buffers' zeroes back over them).
	 */
	nm_sync_ok(c->fd, t->a.handle, NPU_MEM_SYNC_TO_DEVICE, 0,
		   t->a.buf.size);
	ck_assert_msg(!(t->a.buf.flags & NPU_MEM_BUF_DEV_HIDDEN) &&
		      t->a.buf.dev_addr, "device address hidden from root");
	if (c->info.dev_flags & NPU_MEM_DEV_IOMMU)
		ck_assert_msg((t->a.buf.flags & NPU_MEM_BUF_DEV_CONTIG) &&
			      t->a.buf.dev_segments == 1,
			      "%s %llu under an IOMMU: flags %#x, %u device "
			      "segments, want DEV_CONTIG and 1",
			      nm_policy_name(policy),
			      (unsigned long long)t->a.buf.size, t->a.buf.flags,
			      t->a.buf.dev_segments);
}

static uint64_t dev(const struct nm_tbuf *t, uint64_t off)
{
	ck_assert_msg(t->a.buf.flags & NPU_MEM_BUF_DEV_CONTIG,
		      "offsets need one contiguous device range");
	return t->a.buf.dev_addr + off;
}

/* B is everywhere its own pattern except [off, off+len) */
static void assert_untouched_except(const struct nm_tbuf *b, uint64_t off,
				    uint64_t len)
{
	size_t bad = nm_verify(b->map, off, b->seed);

	ck_assert_msg(bad == SIZE_MAX, "target changed at %zu, before the "
		      "copied range at %llu", bad, (unsigned long long)off);
	bad = nm_verify_at(b->map + off + len, b->a.buf.size - off - len,
			   b->seed, off + len);
	ck_assert_msg(bad == SIZE_MAX, "target changed at %llu, after the "
		      "copied range [%llu, %llu)",
		      (unsigned long long)(off + len + bad),
		      (unsigned long long)off, (unsigned long long)(off + len));
}

/* CPU writes A, device copies A+aoff -> B+boff, CPU reads B. */
static void copy_and_check(struct nm_ctx *c, struct nm_tbuf *A, uint64_t aoff,
			   struct nm_tbuf *B, uint64_t boff, uint64_t len)
{
	uint64_t bsize = B->a.buf.size;
	uint8_t *want = malloc(bsize);
	size_t bad;
	double t0;

	ck_assert(want);
	/* fresh bytes in the source range, written by the CPU just now */
	A->seed += 0x100;
	nm_fill_at(A->map + aoff, len, A->seed, aoff);
	/* B afterwards: as it is now, with A's bytes in [boff, boff+len) */
	memcpy(want, B->map, bsize);
	memcpy(want + boff, A->map + aoff, len);
	nm_sync_ok(c->fd, A->a.handle, NPU_MEM_SYNC_TO_DEVICE, aoff, len);
	nm_sync_ok(c->fd, B->a.handle, NPU_MEM_SYNC_TO_DEVICE, boff, len);
	t0 = nm_now();
	nm_assert_ok(nm_dma_copy(dev(A, aoff), dev(B, boff), len));
	nm_sync_ok(c->fd, B->a.handle, NPU_MEM_SYNC_FROM_DEVICE, boff, len);
	printf("copied %llu bytes %s+%#llx (dev %#llx) -> %s+%#llx (dev %#llx)"
	       " in %.2f s\n", (unsigned long long)len,
	       nm_policy_name(A->a.buf.policy), (unsigned long long)aoff,
	       (unsigned long long)dev(A, aoff),
	       nm_policy_name(B->a.buf.policy), (unsigned long long)boff,
	       (unsigned long long)dev(B, boff), nm_now() - t0);
	bad = nm_cmp(B->map, want, bsize);
	ck_assert_msg(bad == SIZE_MAX, "B byte %zu is %#x, want %#x (%s the "
		      "copied range [%llu, %llu))", bad, B->map[bad], want[bad],
		      bad < boff ? "before" : bad < boff + len ? "inside" :
		      "after", (unsigned long long)boff,
		      (unsigned long long)(boff + len));
	/* the source is only read */
	ck_assert_uint_eq(nm_verify_at(A->map + aoff, len, A->seed, aoff),
			  SIZE_MAX);
	free(want);
}

START_TEST(copy_normal_cross_4k)
{
	struct nm_ctx c;
	struct nm_tbuf a, b;

	ctx_init(&c);
	tbuf_new(&a, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	/* both ranges cross a 4 KiB page boundary, at different offsets */
	copy_and_check(&c, &a, NM_4K - 100, &b, 3 * NM_4K - 300, NM_4K + 200);
	/* page aligned, two whole pages */
	copy_and_check(&c, &a, 5 * NM_4K, &b, 9 * NM_4K, 2 * NM_4K);
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(copy_huge_cross_2m)
{
	struct nm_ctx c;
	struct nm_tbuf a, b;

	ctx_init(&c);
	tbuf_new(&a, &c, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
	tbuf_new(&b, &c, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
	ck_assert_uint_eq(a.a.buf.huge_pages, 2);
	/* from across A's chunk boundary to across B's */
	copy_and_check(&c, &a, NM_2M - 3000, &b, NM_2M - 5000, 8000);
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(copy_normal_cross_2m)
{
	struct nm_ctx c;
	struct nm_tbuf a, b;

	ctx_init(&c);
	tbuf_new(&a, &c, NM_2M + 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b, &c, NM_2M + 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	copy_and_check(&c, &a, NM_2M - NM_4K, &b, NM_2M - 2 * NM_KiB,
		       2 * NM_4K);
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(copy_huge_normal_seams)
{
	struct nm_ctx c;
	struct nm_tbuf h, n, m;

	ctx_init(&c);
	tbuf_new(&h, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY);
	tbuf_new(&n, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	/* a 2 MiB chunk followed by 4 KiB pages */
	tbuf_new(&m, &c, NM_2M + 16 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
	printf("mixed buffer: %u huge, %u normal\n", m.a.buf.huge_pages,
	       m.a.buf.normal_pages);
	/* huge -> normal, normal -> huge */
	copy_and_check(&c, &h, NM_2M - 6000, &n, NM_4K + 10, 5000);
	copy_and_check(&c, &n, 7 * NM_4K + 1, &h, NM_2M / 2 - 77, 4500);
	/* across the huge/normal seam of the mixed buffer, both ways */
	copy_and_check(&c, &h, 1000, &m, NM_2M - 2500, 5000);
	copy_and_check(&c, &m, NM_2M - 3000, &n, 20 * NM_KiB, 6000);
	nm_tbuf_free(&h, &c);
	nm_tbuf_free(&n, &c);
	nm_tbuf_free(&m, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(copy_seen_through_dmabuf)
{
	struct nm_ctx c;
	struct nm_tbuf a, b, g;
	uint8_t *d, *dg;
	uint64_t gdev, gsize;
	int dfd, gfd;

	ctx_init(&c);
	tbuf_new(&a, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY);
	tbuf_new(&b, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	dfd = nm_export_ok(c.fd, b.a.handle, O_RDWR | O_CLOEXEC);
	d = nm_dmabuf_map_ok(dfd, 0, b.a.buf.size, RW);
	nm_fill_at(a.map + 100, NM_4K, a.seed + 7, 100);
	nm_sync_ok(c.fd, a.a.handle, NPU_MEM_SYNC_TO_DEVICE, 100, NM_4K);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_assert_ok(nm_dma_copy(dev(&a, 100), dev(&b, 2 * NM_4K - 50),
				   NM_4K));
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	ck_assert_uint_eq(nm_verify_at(d + 2 * NM_4K - 50, NM_4K, a.seed + 7,
				       100), SIZE_MAX);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	munmap(d, b.a.buf.size);
	close(dfd);

	/* G: handle freed, a dma-buf holds it: still a DMA target */
	tbuf_new(&g, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	gdev = g.a.buf.dev_addr;
	gsize = g.a.buf.size;
	gfd = nm_export_ok(c.fd, g.a.handle, O_RDWR | O_CLOEXEC);
	dg = nm_dmabuf_map_ok(gfd, 0, gsize, RW);
	nm_tbuf_free(&g, &c);
	nm_assert_ok(nm_dma_copy(dev(&a, 100), gdev + NM_4K, NM_4K));
	nm_dmabuf_sync_ok(gfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	ck_assert_uint_eq(nm_verify_at(dg + NM_4K, NM_4K, a.seed + 7, 100),
			  SIZE_MAX);
	ck_assert_uint_eq(nm_verify(dg, NM_4K, g.seed), SIZE_MAX);
	nm_dmabuf_sync_ok(gfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	/* fd closed, mapping left: still live */
	close(gfd);
	nm_assert_ok(nm_dma_copy(gdev, dev(&b, 0), 64));
	/* mapping gone: the buffer, and its device range, are gone */
	munmap(dg, gsize);
	nm_assert_ret(nm_dma_copy(dev(&a, 100), gdev + NM_4K, 256), -EINVAL);
	nm_assert_ret(nm_dma_copy(gdev, dev(&b, 0), 64), -EINVAL);
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(iova_not_physical)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} spec[] = {
		{ 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
		{ 8 * NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY },
		{ 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
		{ 2 * NM_MiB + 12 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST },
	};
	struct nm_tbuf t[NM_ARRAY_SIZE(spec)];
	struct nm_ctx c;
	unsigned int max_runs = 0;

	ctx_init(&c);
	if (!(c.info.dev_flags & NPU_MEM_DEV_IOMMU)) {
		printf("no IOMMU translates for the device (dev_flags %#x): "
		       "device addresses are physical, nothing to show\n",
		       c.info.dev_flags);
		nm_ctx_fini(&c);
		return;
	}
	for (size_t i = 0; i < NM_ARRAY_SIZE(spec); i++) {
		unsigned int runs = 0;
		uint64_t phys = 0;
		int ret;

		tbuf_new(&t[i], &c, spec[i].size, spec[i].policy);
		ret = nm_phys_runs(t[i].map, t[i].a.buf.size, &phys, &runs);
		ck_assert_msg(ret == 0, "pagemap: %s (root reads PFNs)",
			      nm_retname(ret));
		printf("%s %llu: dev_addr %#llx, dev_segments %u, flags %#x; "
		       "first page at physical %#llx, pages in %u physical "
		       "ranges\n", nm_policy_name(spec[i].policy),
		       (unsigned long long)t[i].a.buf.size,
		       (unsigned long long)t[i].a.buf.dev_addr,
		       t[i].a.buf.dev_segments, t[i].a.buf.flags,
		       (unsigned long long)phys, runs);
		ck_assert_msg(t[i].a.buf.dev_addr != phys,
			      "dev_addr %#llx is the physical address: not an "
			      "IOVA", (unsigned long long)phys);
		if (runs > max_runs)
			max_runs = runs;
	}
	/* scattered pages, one device range: the IOMMU made it so */
	ck_assert_msg(max_runs > 1, "every buffer happened to be physically "
		      "contiguous; cannot show the IOMMU joining pages");
	for (size_t i = 0; i < NM_ARRAY_SIZE(spec); i++)
		nm_tbuf_free(&t[i], &c);
	nm_ctx_fini(&c);
}
END_TEST

/* Is [addr, addr+len) inside any of these buffers' device ranges? */
static bool inside_any(const struct nm_tbuf *const *b, size_t n,
		       const struct nm_sentinel *s, uint64_t addr, uint64_t len)
{
	for (size_t i = 0; i < n + 2; i++) {
		const struct npu_mem_buffer *x = i < n ? &b[i]->a.buf :
						 &s->alloc[i - n].buf;

		if (addr + len > x->dev_addr && addr < x->dev_addr + x->size)
			return true;
	}
	return false;
}

/*
 * Are all of them one device range each?  Bounce slots that do not abut
 * put a buffer's pieces outside [dev_addr, dev_addr + size), maybe right
 * next to another buffer: then no address near the others is known free.
 */
static bool all_one_range(const struct nm_tbuf *const *b, size_t n,
			  const struct nm_sentinel *s)
{
	for (size_t i = 0; i < n + 2; i++) {
		const struct npu_mem_buffer *x = i < n ? &b[i]->a.buf :
						 &s->alloc[i - n].buf;

		if (!(x->flags & NPU_MEM_BUF_DEV_CONTIG))
			return false;
	}
	return true;
}

START_TEST(physical_address_refused)
{
	struct nm_ctx c;
	struct nm_tbuf a, b;
	const struct nm_tbuf *all[2] = { &a, &b };
	uint64_t phys;

	ctx_init(&c);
	if (!(c.info.dev_flags & NPU_MEM_DEV_IOMMU)) {
		printf("no IOMMU: physical addresses are device addresses\n");
		nm_ctx_fini(&c);
		return;
	}
	tbuf_new(&a, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	nm_assert_ok(nm_virt_to_phys(a.map, &phys));
	if (inside_any(all, 2, &c.s, phys, NM_4K)) {
		printf("physical %#llx happens to be an IOVA in use; skipped\n",
		       (unsigned long long)phys);
	} else {
		nm_assert_ret(nm_dma_copy(phys, dev(&b, 0), 256), -EINVAL);
		nm_assert_ret(nm_dma_copy(dev(&b, 0), phys, 256), -EINVAL);
		assert_untouched_except(&b, 0, 0);
		NM_SENTINEL_CHECK(&c.s);
	}
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(copy_bad_ranges)
{
	struct nm_ctx c;
	struct nm_tbuf a, b;
	const struct nm_tbuf *all[2] = { &a, &b };
	uint64_t out[4], A, B, asz;
	int n_out = 0;

	ctx_init(&c);
	tbuf_new(&a, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	A = dev(&a, 0);
	B = dev(&b, 0);
	asz = a.a.buf.size;
	{
		const uint64_t cand[] = {
			A + asz, A - NM_4K, 0x1000, 0xdead00000000ULL,
			UINT64_MAX & ~(NM_4K - 1),
		};
		size_t i = all_one_range(all, 2, &c.s) ? 0 : 2;

		for (; i < NM_ARRAY_SIZE(cand) && n_out < 4; i++)
			if (!inside_any(all, 2, &c.s, cand[i], NM_4K))
				out[n_out++] = cand[i];
	}
	ck_assert_int_ge(n_out, 2);
#define REFUSED(src, dst, len) do {					\
	nm_assert_ret(nm_dma_copy((src), (dst), (len)), -EINVAL);		\
	assert_untouched_except(&b, 0, 0);				\
	NM_SENTINEL_CHECK(&c.s);					\
} while (0)
	for (int i = 0; i < n_out; i++) {
		REFUSED(out[i], B, 64);			/* source outside */
		REFUSED(A, out[i], 64);			/* target outside */
		REFUSED(out[i], out[i], 64);
	}
	REFUSED(A + asz - 100, B, 200);		/* source runs past A's end */
	REFUSED(A, B + b.a.buf.size - 100, 200);	/* target past B's */
	REFUSED(A, B, asz + 1);
	REFUSED(A, B, 0);				/* length 0 */
	REFUSED(A, B, 1ULL << 63);
	REFUSED(A, B, UINT64_MAX);			/* end overflows */
	REFUSED(A + 8, B, UINT64_MAX - 6);
	REFUSED(UINT64_MAX - 10, B, 64);
	/* input that is not "SRC DST LEN" */
	{
		const char *junk[] = {
			"garbage", "1 2", "0x1000", " ", "\n",
			"0x1000 0x2000 -", "one two three",
		};
		char big[200];

		for (size_t i = 0; i < NM_ARRAY_SIZE(junk); i++)
			nm_assert_ret(nm_write_file(NM_DMA_COPY, junk[i]),
				      -EINVAL);
		memset(big, ' ', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		snprintf(big + 100, sizeof(big) - 100, "%#llx %#llx 64",
			 (unsigned long long)A, (unsigned long long)B);
		nm_assert_ret(nm_write_file(NM_DMA_COPY, big), -EINVAL);
		NM_SENTINEL_CHECK(&c.s);
	}
#undef REFUSED
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

/* A range from the end of one buffer into the start of the next one,
 * adjacent in device address space, is not inside one buffer. */
START_TEST(copy_across_buffer_seam)
{
	enum { N = 8 };
	struct nm_ctx c;
	struct nm_tbuf dst, t[N], *lo = NULL, *hi = NULL;
	int n = 0;

	ctx_init(&c);
	tbuf_new(&dst, &c, 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	/* IOVAs are handed out downwards: neighbours are likely */
	while (n < N && !lo) {
		tbuf_new(&t[n], &c, 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
		for (int j = 0; j < n && !lo; j++) {
			struct nm_tbuf *x = &t[j], *y = &t[n];

			if (x->a.buf.dev_addr + x->a.buf.size == y->a.buf.dev_addr) {
				lo = x;
				hi = y;
			} else if (y->a.buf.dev_addr + y->a.buf.size ==
				   x->a.buf.dev_addr) {
				lo = y;
				hi = x;
			}
		}
		n++;
	}
	if (!lo) {
		printf("no two of %d buffers abut in device address space: "
		       "nothing to show\n", N);
	} else {
		uint64_t seam = hi->a.buf.dev_addr;

		printf("buffers at %#llx and %#llx abut\n",
		       (unsigned long long)lo->a.buf.dev_addr,
		       (unsigned long long)seam);
		nm_assert_ret(nm_dma_copy(seam - 64, dev(&dst, 0), 128), -EINVAL);
		nm_assert_ret(nm_dma_copy(dev(&dst, 0), seam - 64, 128), -EINVAL);
		assert_untouched_except(lo, 0, 0);
		assert_untouched_except(hi, 0, 0);
		assert_untouched_except(&dst, 0, 0);
		NM_SENTINEL_CHECK(&c.s);
		/* each side on its own is fine */
		nm_assert_ok(nm_dma_copy(seam - 64, dev(&dst, 0), 64));
		nm_assert_ok(nm_dma_copy(seam, dev(&dst, 64), 64));
		nm_sync_ok(c.fd, dst.a.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, 128);
		ck_assert_uint_eq(nm_cmp(dst.map, lo->map + lo->a.buf.size - 64,
					 64), SIZE_MAX);
		ck_assert_uint_eq(nm_cmp(dst.map + 64, hi->map, 64), SIZE_MAX);
	}
	for (int k = 0; k < n; k++)
		nm_tbuf_free(&t[k], &c);
	nm_tbuf_free(&dst, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(copy_freed_buffer)
{
	struct nm_ctx c;
	struct nm_tbuf a, b, f;
	uint64_t fdev, fsize;

	ctx_init(&c);
	tbuf_new(&a, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&f, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	fdev = dev(&f, 0);
	fsize = f.a.buf.size;
	/* live: works */
	nm_assert_ok(nm_dma_copy(fdev, dev(&b, NM_4K), 256));
	nm_sync_ok(c.fd, b.a.handle, NPU_MEM_SYNC_FROM_DEVICE, NM_4K, 256);
	ck_assert_uint_eq(nm_verify(b.map + NM_4K, 256, f.seed), SIZE_MAX);
	nm_fill_at(b.map + NM_4K, 256, b.seed, NM_4K);
	nm_tbuf_free(&f, &c);
	/* freed (and unmapped): its device addresses are nobody's */
	nm_assert_ret(nm_dma_copy(fdev, dev(&b, 0), 256), -EINVAL);
	nm_assert_ret(nm_dma_copy(dev(&a, 0), fdev, 256), -EINVAL);
	nm_assert_ret(nm_dma_copy(fdev + fsize - NM_4K, dev(&b, 0), 64), -EINVAL);
	assert_untouched_except(&b, 0, 0);
	NM_SENTINEL_CHECK(&c.s);
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_ctx_fini(&c);
}
END_TEST

/* ---- bounce buffers --------------------------------------------------- */

/* The buffer carries NPU_MEM_BUF_BOUNCED exactly where the device sees
 * bounce buffers. */
static void assert_bounce_flag(const struct nm_ctx *c, const struct nm_tbuf *t)
{
	bool want = nm_expect_bounced(c->info.dev_flags);

	ck_assert_msg(!!(t->a.buf.flags & NPU_MEM_BUF_BOUNCED) == want,
		      "%s %llu: flags %#x, but the device sees %s (swiotlb %s"
		      "forced, dev_flags %#x)",
		      nm_policy_name(t->a.buf.policy),
		      (unsigned long long)t->a.buf.size, t->a.buf.flags,
		      want ? "only bounce buffers" : "the pages themselves",
		      nm_swiotlb_forced() ? "" : "not ", c->info.dev_flags);
}

/*
 * CPU writes, SYNC TO_DEVICE, the device copies, SYNC FROM_DEVICE, the CPU
 * reads the copy: right for 4 KiB, 64 KiB and 2 MiB buffers, across the
 * 256 KiB pieces a 2 MiB chunk is bounced in and across a huge/normal seam.
 * Where the device sees bounce buffers this is the SYNC copying; a 2 MiB
 * chunk is more than one swiotlb mapping can hold, so it must be mapped in
 * pieces to be allocated at all.
 */
START_TEST(bounce_roundtrip)
{
	struct nm_ctx c;
	struct nm_tbuf a4, b4, a64, b64, h, m;

	ctx_init(&c);
	tbuf_new(&a4, &c, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b4, &c, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&a64, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b64, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&h, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY);
	tbuf_new(&m, &c, NM_2M + 76 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
	assert_bounce_flag(&c, &a4);
	assert_bounce_flag(&c, &b4);
	assert_bounce_flag(&c, &a64);
	assert_bounce_flag(&c, &b64);
	assert_bounce_flag(&c, &h);
	assert_bounce_flag(&c, &m);
	printf("2 MiB HUGE_ONLY: %u huge, dev_addr %#llx, %u device segments, "
	       "flags %#x\n", h.a.buf.huge_pages,
	       (unsigned long long)h.a.buf.dev_addr, h.a.buf.dev_segments,
	       h.a.buf.flags);
	copy_and_check(&c, &a4, 0, &b4, 0, NM_4K);
	copy_and_check(&c, &a4, 1, &b4, 100, 3000);
	copy_and_check(&c, &a64, NM_4K - 100, &b64, 5 * NM_4K - 7, NM_4K + 300);
	/* out of, into and at the end of the 2 MiB chunk, across 256 KiB */
	copy_and_check(&c, &h, 256 * NM_KiB - 1000, &b64, 1000, 3000);
	copy_and_check(&c, &a64, 10, &h, 3 * 256 * NM_KiB - 2000, 4000);
	copy_and_check(&c, &b4, 0, &h, NM_2M - 3000, 3000);
	/* across the huge/normal seam of the mixed buffer, both ways */
	copy_and_check(&c, &h, NM_MiB + 5, &m, NM_2M - 2500, 5000);
	copy_and_check(&c, &m, NM_2M - 3000, &h, 7, 6000);
	nm_tbuf_free(&a4, &c);
	nm_tbuf_free(&b4, &c);
	nm_tbuf_free(&a64, &c);
	nm_tbuf_free(&b64, &c);
	nm_tbuf_free(&h, &c);
	nm_tbuf_free(&m, &c);
	nm_ctx_fini(&c);
}
END_TEST

/*
 * The bounce is real, so the SYNCs above are what made the copies right
 * (a SYNC that did nothing would fail bounce_roundtrip): where buffers are
 * BOUNCED, without SYNC TO_DEVICE the device copies what A held at its
 * last SYNC, and its write reaches B's pages only at SYNC FROM_DEVICE.
 * Where they are not and DMA is coherent, the device reads and writes the
 * pages themselves: the flag's absence is true as well.
 */
static void stale_check(struct nm_ctx *c, struct nm_tbuf *A, uint64_t aoff,
			struct nm_tbuf *B, uint64_t boff, uint64_t len)
{
	bool bounced = A->a.buf.flags & NPU_MEM_BUF_BOUNCED;
	bool coherent = c->info.dev_flags & NPU_MEM_DEV_COHERENT;
	uint8_t *synced = malloc(len), *fresh = malloc(len);
	uint8_t *b_before = malloc(len);
	size_t bad;

	ck_assert(synced && fresh && b_before);
	ck_assert_msg(!!(B->a.buf.flags & NPU_MEM_BUF_BOUNCED) == bounced,
		      "A and B disagree about bouncing");
	/* what the device last got of A */
	A->seed += 0x100;
	nm_fill_at(A->map + aoff, len, A->seed, aoff);
	nm_sync_ok(c->fd, A->a.handle, NPU_MEM_SYNC_TO_DEVICE, aoff, len);
	memcpy(synced, A->map + aoff, len);
	memcpy(b_before, B->map + boff, len);
	/* the CPU writes A again and does not say so */
	A->seed += 0x100;
	nm_fill_at(A->map + aoff, len, A->seed, aoff);
	memcpy(fresh, A->map + aoff, len);
	ck_assert_msg(memcmp(synced, fresh, len), "two seeds, same bytes");
	nm_assert_ok(nm_dma_copy(dev(A, aoff), dev(B, boff), len));
	if (bounced) {
		bad = nm_cmp(B->map + boff, b_before, len);
		ck_assert_msg(bad == SIZE_MAX, "bounced: B changed at %zu "
			      "before SYNC FROM_DEVICE: the device wrote B's "
			      "pages, not a bounce buffer", bad);
	} else if (coherent) {
		bad = nm_cmp(B->map + boff, fresh, len);
		ck_assert_msg(bad == SIZE_MAX, "not bounced, coherent: B "
			      "differs at %zu from what the CPU wrote into A "
			      "(without SYNC)", bad);
	}
	nm_sync_ok(c->fd, B->a.handle, NPU_MEM_SYNC_FROM_DEVICE, boff, len);
	if (bounced) {
		bad = nm_cmp(B->map + boff, synced, len);
		ck_assert_msg(bad == SIZE_MAX, "bounced: without SYNC "
			      "TO_DEVICE the device must copy A as last synced;"
			      " B differs at %zu (%s)", bad,
			      bad != SIZE_MAX && B->map[boff + bad] ==
			      fresh[bad] ? "it saw the CPU's unsynced write: "
			      "no bounce" : "neither old nor new");
		printf("bounced %s: without SYNC TO_DEVICE the device copied "
		       "%llu stale bytes, as it must\n",
		       nm_policy_name(A->a.buf.policy),
		       (unsigned long long)len);
	} else if (coherent) {
		ck_assert_uint_eq(nm_cmp(B->map + boff, fresh, len), SIZE_MAX);
	} else {
		printf("not bounced, not coherent: what the device saw "
		       "without SYNC is undefined, not checked\n");
	}
	/* and with the SYNC, the device gets the CPU's bytes */
	nm_sync_ok(c->fd, A->a.handle, NPU_MEM_SYNC_TO_DEVICE, aoff, len);
	nm_sync_ok(c->fd, B->a.handle, NPU_MEM_SYNC_TO_DEVICE, boff, len);
	nm_assert_ok(nm_dma_copy(dev(A, aoff), dev(B, boff), len));
	nm_sync_ok(c->fd, B->a.handle, NPU_MEM_SYNC_FROM_DEVICE, boff, len);
	bad = nm_cmp(B->map + boff, fresh, len);
	ck_assert_msg(bad == SIZE_MAX, "after SYNC TO_DEVICE, copy, SYNC "
		      "FROM_DEVICE: B differs at %zu", bad);
	free(synced);
	free(fresh);
	free(b_before);
}

START_TEST(bounce_is_real)
{
	struct nm_ctx c;
	struct nm_tbuf a, b, h;

	ctx_init(&c);
	tbuf_new(&a, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&b, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	tbuf_new(&h, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY);
	assert_bounce_flag(&c, &a);
	assert_bounce_flag(&c, &b);
	assert_bounce_flag(&c, &h);
	stale_check(&c, &a, NM_4K - 10, &b, 3 * NM_4K + 1, NM_4K);
	stale_check(&c, &h, 256 * NM_KiB - 700, &b, 9 * NM_4K, 1400);
	stale_check(&c, &a, 100, &h, NM_2M - 2000, 2000);
	nm_tbuf_free(&a, &c);
	nm_tbuf_free(&b, &c);
	nm_tbuf_free(&h, &c);
	nm_ctx_fini(&c);
}
END_TEST

/*
 * A full bounce pool is the caller's -ENOMEM (never -EIO), at no more than
 * the pool's size, with RAM to spare; freeing gives the room back.
 */
START_TEST(bounce_pool_full)
{
	enum { MAXBUF = 256 };
	const uint64_t step = 32 * NM_MiB;
	uint32_t h[MAXBUF];
	struct npu_mem_alloc a;
	struct npu_mem_info info;
	struct nm_counters before;
	uint64_t pool, total = 0;
	int n = 0, r = 0, fd = nm_open();

	/* no sentinel: its 2 MiB chunk would fail first where that is broken */
	nm_get_info_ok(fd, &info);
	if (!nm_expect_bounced(info.dev_flags)) {
		printf("the device sees no bounce buffers: no pool to fill\n");
		close(fd);
		return;
	}
	pool = nm_swiotlb_pool_bytes();
	ck_assert_msg(pool, "swiotlb pool size unknown");
	nm_counters(fd, &before);
	while (n < MAXBUF) {
		r = nm_alloc(fd, step, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
		if (r)
			break;
		h[n++] = a.handle;
		total += a.buf.size;
	}
	nm_get_info_ok(fd, &info);
	printf("bounce pool %llu MiB: %d buffers, %llu MiB, then %s; free RAM "
	       "%llu MiB\n", (unsigned long long)(pool >> 20), n,
	       (unsigned long long)(total >> 20), nm_retname(r),
	       (unsigned long long)(info.free_ram >> 20));
	ck_assert_msg(r == -ENOMEM, "ALLOC with the bounce pool full: %s, "
		      "want -ENOMEM", nm_retname(r));
	ck_assert_msg(total <= pool && total >= pool / 2,
		      "%llu MiB in buffers when the %llu MiB pool ran out",
		      (unsigned long long)(total >> 20),
		      (unsigned long long)(pool >> 20));
	/* the pool ran out, not RAM */
	ck_assert_msg(info.free_ram > 2 * step, "free RAM %llu MiB",
		      (unsigned long long)(info.free_ram >> 20));
	/* a failed ALLOC leaves nothing behind, and freeing makes room */
	nm_free_ok(fd, h[--n]);
	nm_alloc_ok(fd, step, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	h[n++] = a.handle;
	while (n)
		nm_free_ok(fd, h[--n]);
	nm_assert_counters_now(fd, &before);
	close(fd);
}
END_TEST

START_TEST(dma_copy_root_only)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		fd = open(NM_DMA_COPY, O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			_exit(4);
		_exit(errno == EACCES ? 0 : 5);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "as nobody, open(dma_copy): status %#x (3: setuid failed, "
		      "4: opened, 5: not EACCES)", st);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("edu_dma");

	nm_require_device();
	if (access(NM_DMA_COPY, F_OK)) {
		printf("SKIP: no edu device: run in the x86_64-iommu-edu or "
		       "x86_64-swiotlb-edu guest "
		       "(%s: %s)\n", NM_DMA_COPY, strerror(errno));
		return 77;
	}
	nm_add(s, copy_normal_cross_4k, 60);
	nm_add(s, copy_huge_cross_2m, 60);
	nm_add(s, copy_normal_cross_2m, 60);
	nm_add(s, copy_huge_normal_seams, 60);
	nm_add(s, copy_seen_through_dmabuf, 60);
	nm_add(s, iova_not_physical, 60);
	nm_add(s, physical_address_refused, 30);
	nm_add(s, copy_bad_ranges, 60);
	nm_add(s, copy_across_buffer_seam, 60);
	nm_add(s, copy_freed_buffer, 60);
	nm_add(s, dma_copy_root_only, 30);
	nm_add(s, bounce_roundtrip, 60);
	nm_add(s, bounce_is_real, 60);
	nm_add(s, bounce_pool_full, 120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
