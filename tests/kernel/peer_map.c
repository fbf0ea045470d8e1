// SPDX-License-Identifier: GPL-2.0-only
/*
 * peer_map: a buffer of one NPU DMA-mapped for another (PEER_MAP,
 * PEER_UNMAP, PEER_QUERY), and per-device usage in GET_INFO.  Runs in the
 * x86_64-multi-edu guest (four edu devices, each in its own IOMMU
 * domain), in the x86_64-race guest (the same four without an IOMMU, one
 * vCPU: the racing threads meet at the kernel's scheduling points) and on
 * arm64 (four edu devices behind an SMMUv3, one node); elsewhere (fewer
 * than two NPUs, no edu engine) it exits 77.
 *  - device B's edu engine (debugfs dma_copyN) refuses A's buffer
 *    (-EINVAL: not a live mapping of B's) until PEER_MAP, then reads it and
 *    writes it at the peer address PEER_MAP returned; PEER_QUERY gives the
 *    same address for B, and the buffer's own for A; nothing is charged;
 *    without an IOMMU on B's side the peer address is the physical one,
 *    the buffer's own address when A has no IOMMU either;
 *  - the mapping ends with PEER_UNMAP, with the buffer's last reference
 *    (FREE while a CPU mapping lives keeps it; the munmap ends it), with
 *    removal of the peer's device and with removal of the buffer's own;
 *    each time B's engine refuses the old peer address again and debugfs
 *    counts one peer mapping less (a freed buffer is out of the engine's
 *    sight anyway: only the count shows a mapping left behind);
 *  - removing one device while other devices' engines copy leaves their
 *    buffers, own and peer mappings and copies untouched;
 *  - exact errors: flags, pad, reserved, a bad index, the buffer's own
 *    device (-EINVAL); an unknown handle (-ENOENT); double map (-EEXIST);
 *    unmap or query of what is not mapped (-ENXIO); a read-only import of a
 *    writable buffer (-EACCES); registered host memory (-EOPNOTSUPP); a
 *    removed peer (-ENODEV); a PEER_MAP whose answer cannot be copied
 *    back (-EFAULT) leaves no mapping;
 *  - threads racing PEER_MAP, PEER_UNMAP, PEER_QUERY and FREE on shared
 *    handles: every answer is one the rules allow, nothing leaks
 *    (GET_INFO back to where it started);
 *  - GET_INFO's dev_bytes and dev_buffers follow ALLOC and FREE for the
 *    device the buffer is for only, dev_node_bytes (and debugfs usage's
 *    nodeN_bytes) for its node; a peer mapping changes none of them.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"
#include "nmtest_fixture.h"
#include "nmtest_multi.h"
#include "nmtest_pci.h"

#define RW		(PROT_READ | PROT_WRITE)
#define MAX_NPUS	NM_MAX_NPUS
#define LEN		(2 * NM_4K)

static unsigned int g_count;
static struct npu_mem_info g_info[MAX_NPUS];

static int peer(int fd, unsigned long cmd, uint32_t handle, uint32_t dev,
		struct npu_mem_peer *p)
{
	struct npu_mem_peer local;

	if (!p)
		p = &local;
	memset(p, 0, sizeof(*p));
	p->handle = handle;
	p->device = dev;
	return nm_ioctl(fd, cmd, p);
}

#define peer_map(fd, h, d, p)	peer((fd), NPU_MEM_IOCTL_PEER_MAP, (h), (d), (p))
#define peer_unmap(fd, h, d)	peer((fd), NPU_MEM_IOCTL_PEER_UNMAP, (h), (d), NULL)
#define peer_query(fd, h, d, p)	peer((fd), NPU_MEM_IOCTL_PEER_QUERY, (h), (d), (p))

/* Peer mappings alive, all buffers (debugfs usage: only the module knows). */
static uint64_t peer_maps(void)
{
	uint64_t v = 0;
	int ret = nm_kv_file(NM_DEBUGFS "/usage", "peer_mappings", &v);

	ck_assert_msg(ret == 0, "usage peer_mappings: %s", nm_retname(ret));
	return v;
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

static void check(const uint8_t *p, size_t len, uint8_t seed, const char *what)
{
	for (size_t i = 0; i < len; i++)
		NM_REQUIRE(p[i] == (uint8_t)(i * 13 + seed),
			   "%s: byte %zu is %#x, want %#x", what, i, p[i],
			   (uint8_t)(i * 13 + seed));
}

/*
 * Device b's engine reads buffer a (of device a_dev) at its peer address
 * into b's own buffer, then writes b's back over a's second half: both
 * directions of a peer mapping, checked through the CPU mappings.
 */
static void peer_roundtrip(int fd, uint32_t bdev, struct npu_mem_alloc *a,
			   uint64_t a_peer, struct npu_mem_alloc *b,
			   uint8_t seed)
{
	uint8_t *pa = nm_map_ok(fd, a, RW), *pb = nm_map_ok(fd, b, RW);
	char what[64];

	fill(pa, LEN, seed);
	memset(pb, 0, LEN);
	nm_sync_ok(fd, a->handle, NPU_MEM_SYNC_TO_DEVICE, 0, LEN);
	nm_sync_ok(fd, b->handle, NPU_MEM_SYNC_TO_DEVICE, 0, LEN);
	nm_assert_ok(nm_dma_copy_on(bdev, a_peer, b->buf.dev_addr, LEN));
	nm_sync_ok(fd, b->handle, NPU_MEM_SYNC_FROM_DEVICE, 0, LEN);
	snprintf(what, sizeof(what), "device %u read its peer", bdev);
	check(pb, LEN, seed, what);

	fill(pb, NM_4K, (uint8_t)(seed + 1));
	nm_sync_ok(fd, b->handle, NPU_MEM_SYNC_TO_DEVICE, 0, LEN);
	nm_assert_ok(nm_dma_copy_on(bdev, b->buf.dev_addr, a_peer + NM_4K, NM_4K));
	nm_sync_ok(fd, a->handle, NPU_MEM_SYNC_FROM_DEVICE, 0, LEN);
	snprintf(what, sizeof(what), "device %u wrote its peer", bdev);
	check(pa + NM_4K, NM_4K, (uint8_t)(seed + 1), what);
	check(pa, NM_4K, seed, "the half no one wrote");
	munmap(pa, a->buf.size);
	munmap(pb, b->buf.size);
}

START_TEST(peer_dma_reads_and_writes)
{
	int fd = nm_open();
	struct npu_mem_info before, after;

	/* 0 -> 1 on one node, and the last -> 0 across nodes where there are */
	const uint32_t pairs[][2] = { { 0, 1 }, { g_count - 1, 0 } };

	for (size_t i = 0; i < NM_ARRAY_SIZE(pairs); i++) {
		uint32_t adev = pairs[i][0], bdev = pairs[i][1];
		struct npu_mem_alloc a, b;
		struct npu_mem_peer p, q;

		nm_assert_ok(nm_alloc_dma_on(fd, adev, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &a));
		nm_assert_ok(nm_alloc_dma_on(fd, bdev, NM_2M, NPU_MEM_POLICY_HUGE_FIRST, &b));
		/*
		 * Without it, B has no mapping of A's buffer: its address (in
		 * A's domain) is refused, unless it happens to fall in b, the
		 * one mapping of B's this test has made.
		 */
		if (a.buf.dev_addr + LEN <= b.buf.dev_addr ||
		    a.buf.dev_addr >= b.buf.dev_addr + b.buf.size)
			nm_assert_ret(nm_dma_copy_on(bdev, a.buf.dev_addr,
						  b.buf.dev_addr, LEN), -EINVAL);
		else
			printf("device %u: %#llx is in b as well\n", bdev,
			       (unsigned long long)a.buf.dev_addr);
		nm_assert_ret(peer_query(fd, a.handle, bdev, &q), -ENXIO);

		nm_assert_ok(nm_info_of(fd, adev, &before));
		nm_assert_ok(peer_map(fd, a.handle, bdev, &p));
		nm_assert_ok(nm_info_of(fd, adev, &after));
		printf("buffer of device %u at %#llx, for device %u at %#llx (%u segment(s), flags %#x)\n",
		       adev, (unsigned long long)a.buf.dev_addr, bdev,
		       (unsigned long long)p.dev_addr, p.dev_segments,
		       p.buf_flags);
		ck_assert_uint_ne(p.dev_addr, 0);
		ck_assert_uint_eq(p.buf_flags & NPU_MEM_BUF_DEV_HIDDEN, 0);
		ck_assert_uint_ge(p.dev_segments, 1);
		/* Direct DMA on both sides: one address space, the CPU's */
		if (!((g_info[adev].dev_flags | g_info[bdev].dev_flags) &
		      NPU_MEM_DEV_IOMMU)) {
			ck_assert_uint_eq(p.dev_addr, a.buf.dev_addr);
			ck_assert_uint_eq(p.dev_segments, a.buf.dev_segments);
		}
		/* the same pages: nothing more charged or counted */
		ck_assert_uint_eq(after.allocated_bytes, before.allocated_bytes);
		ck_assert_uint_eq(after.buffers, before.buffers);
		ck_assert_uint_eq(after.dev_bytes, before.dev_bytes);
		ck_assert_uint_eq(after.dev_node_bytes, before.dev_node_bytes);

		nm_assert_ok(peer_query(fd, a.handle, bdev, &q));
		ck_assert_uint_eq(q.dev_addr, p.dev_addr);
		ck_assert_uint_eq(q.dev_segments, p.dev_segments);
		ck_assert_uint_eq(q.buf_flags, p.buf_flags);
		nm_assert_ok(peer_query(fd, a.handle, adev, &q));
		ck_assert_uint_eq(q.dev_addr, a.buf.dev_addr);
		ck_assert_uint_eq(q.dev_segments, a.buf.dev_segments);

		peer_roundtrip(fd, bdev, &a, p.dev_addr, &b, (uint8_t)(0x10 * i));
		/* A's own engine still reaches it at its own address */
		nm_assert_ok(nm_dma_copy_on(adev, a.buf.dev_addr,
					 a.buf.dev_addr + NM_4K, NM_4K));

		nm_assert_ok(peer_unmap(fd, a.handle, bdev));
		nm_assert_ret(nm_dma_copy_on(bdev, p.dev_addr, b.buf.dev_addr, LEN),
			      -EINVAL);
		nm_assert_ret(peer_query(fd, a.handle, bdev, &q), -ENXIO);
		nm_assert_ret(peer_unmap(fd, a.handle, bdev), -ENXIO);
		/* and it can be mapped again */
		nm_assert_ok(peer_map(fd, a.handle, bdev, &p));
		nm_assert_ok(nm_dma_copy_on(bdev, p.dev_addr, b.buf.dev_addr, LEN));
		nm_free_ok(fd, a.handle);
		nm_free_ok(fd, b.handle);
	}
	close(fd);
}
END_TEST

START_TEST(unmapped_with_the_last_reference)
{
	int fd = nm_open();
	struct npu_mem_alloc a, b;
	struct npu_mem_peer p;
	uint64_t base = peer_maps();
	uint8_t *pa;

	nm_assert_ok(nm_alloc_dma_on(fd, 1, NM_2M, NPU_MEM_POLICY_HUGE_FIRST, &b));

	/* FREE of the only reference */
	nm_assert_ok(nm_alloc_dma_on(fd, 0, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &a));
	nm_assert_ok(peer_map(fd, a.handle, 1, &p));
	nm_assert_ok(nm_dma_copy_on(1, p.dev_addr, b.buf.dev_addr, LEN));
	ck_assert_uint_eq(peer_maps(), base + 1);
	nm_free_ok(fd, a.handle);
	ck_assert_uint_eq(peer_maps(), base);
	nm_assert_ret(nm_dma_copy_on(1, p.dev_addr, b.buf.dev_addr, LEN), -EINVAL);
	nm_assert_ret(peer_query(fd, a.handle, 1, &p), -ENOENT);

	/* FREE while mapped: the buffer lives on, and so does its peer map */
	nm_assert_ok(nm_alloc_dma_on(fd, 0, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &a));
	nm_assert_ok(peer_map(fd, a.handle, 1, &p));
	pa = nm_map_ok(fd, &a, RW);
	fill(pa, LEN, 0x33);
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, LEN);
	nm_free_ok(fd, a.handle);
	nm_assert_ok(nm_dma_copy_on(1, p.dev_addr, b.buf.dev_addr, LEN));
	ck_assert_uint_eq(peer_maps(), base + 1);
	munmap(pa, a.buf.size);
	ck_assert_uint_eq(peer_maps(), base);
	nm_assert_ret(nm_dma_copy_on(1, p.dev_addr, b.buf.dev_addr, LEN), -EINVAL);

	nm_free_ok(fd, b.handle);
	close(fd);
}
END_TEST

static int host_register(int fd, void *addr, size_t len, uint32_t *handle)
{
	struct npu_mem_host_register r = { .addr = (uintptr_t)addr, .size = len };
	int ret = nm_ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, &r);

	*handle = r.handle;
	return ret;
}

START_TEST(errors)
{
	int fd = nm_open();
	struct npu_mem_alloc a, a2;
	struct npu_mem_dmabuf_import imp;
	struct npu_mem_peer p;
	uint32_t host;
	void *mem;
	int dfd;

	nm_assert_ok(nm_alloc_on(fd, 0, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &a));
	nm_assert_ok(nm_alloc_on(fd, 1, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &a2));

	/* flags, pad and reserved */
	for (int field = 0; field < 3; field++) {
		memset(&p, 0, sizeof(p));
		p.handle = a.handle;
		p.device = 1;
		if (field == 0)
			p.flags = 1;
		else if (field == 1)
			p.pad = 1;
		else
			p.reserved = 1;
		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_PEER_MAP, &p), -EINVAL);
		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_PEER_UNMAP, &p), -EINVAL);
		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_PEER_QUERY, &p), -EINVAL);
	}
	/* an index that names no NPU */
	nm_assert_ret(peer_map(fd, a.handle, g_count, NULL), -EINVAL);
	nm_assert_ret(peer_map(fd, a.handle, 0xffffffffu, NULL), -EINVAL);
	nm_assert_ret(peer_unmap(fd, a.handle, g_count), -EINVAL);
	nm_assert_ret(peer_query(fd, a.handle, g_count, &p), -EINVAL);
	/* the buffer's own device */
	nm_assert_ret(peer_map(fd, a.handle, 0, NULL), -EINVAL);
	nm_assert_ret(peer_unmap(fd, a.handle, 0), -EINVAL);
	nm_assert_ret(peer_map(fd, a2.handle, 1, NULL), -EINVAL);
	/* unknown handles */
	nm_assert_ret(peer_map(fd, 0, 1, NULL), -ENOENT);
	nm_assert_ret(peer_map(fd, a.handle + 1000, 1, NULL), -ENOENT);
	nm_assert_ret(peer_unmap(fd, 0, 1), -ENOENT);
	nm_assert_ret(peer_query(fd, 0, 1, &p), -ENOENT);
	/* twice, and undone twice */
	nm_assert_ok(peer_map(fd, a.handle, 1, NULL));
	nm_assert_ret(peer_map(fd, a.handle, 1, NULL), -EEXIST);
	nm_assert_ok(peer_unmap(fd, a.handle, 1));
	nm_assert_ret(peer_unmap(fd, a.handle, 1), -ENXIO);
	nm_assert_ret(peer_query(fd, a.handle, 1, &p), -ENXIO);
	if (g_count > 2)
		nm_assert_ret(peer_unmap(fd, a.handle, 2), -ENXIO);

	/*
	 * An answer that cannot be written back (the struct on a read-only
	 * page: read in, the copy out fails) leaves no mapping behind.
	 */
	{
		struct npu_mem_peer *ro = mmap(NULL, NM_4K, RW,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ck_assert(ro != MAP_FAILED);
		memset(ro, 0, sizeof(*ro));
		ro->handle = a.handle;
		ro->device = 1;
		ck_assert(!mprotect(ro, NM_4K, PROT_READ));
		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_PEER_MAP, ro), -EFAULT);
		nm_assert_ret(peer_query(fd, a.handle, 1, &p), -ENXIO);
		nm_assert_ok(peer_map(fd, a.handle, 1, NULL));
		nm_assert_ok(peer_unmap(fd, a.handle, 1));
		munmap(ro, NM_4K);
	}

	/* a read-only handle of a writable buffer may look, not map */
	dfd = nm_export_ok(fd, a.handle, O_CLOEXEC);
	memset(&imp, 0, sizeof(imp));
	imp.fd = dfd;
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, &imp));
	ck_assert_uint_ne(imp.buf.flags & NPU_MEM_BUF_READONLY, 0);
	nm_assert_ret(peer_map(fd, imp.handle, 1, NULL), -EACCES);
	nm_assert_ok(peer_map(fd, a.handle, 1, NULL));
	nm_assert_ret(peer_unmap(fd, imp.handle, 1), -EACCES);
	nm_assert_ok(peer_query(fd, imp.handle, 1, &p));
	nm_assert_ok(peer_unmap(fd, a.handle, 1));
	nm_free_ok(fd, imp.handle);
	close(dfd);

	/* registered host memory is the process's own */
	mem = mmap(NULL, LEN, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		   -1, 0);
	ck_assert(mem != MAP_FAILED);
	nm_assert_ok(host_register(fd, mem, LEN, &host));
	nm_assert_ret(peer_map(fd, host, 1, NULL), -EOPNOTSUPP);
	nm_assert_ret(peer_query(fd, host, 1, &p), -EOPNOTSUPP);
	nm_free_ok(fd, host);
	munmap(mem, LEN);

	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, a2.handle);
	close(fd);
}
END_TEST

/* ---- removal -------------------------------------------------------- */

static char g_removed[NM_BDF_LEN];

static void give_back(void)
{
	nm_multi_give_back(g_info, g_count);
}

struct copier {
	uint32_t dev;
	uint64_t src, dst;
	volatile int stop;
	unsigned long copies;
	int err;
};

/* An engine copying until told to stop: the load a removal must not touch. */
static int copy_loop(void *arg)
{
	struct copier *c = arg;

	while (!c->stop) {
		int ret = nm_dma_copy_on(c->dev, c->src, c->dst, NM_4K);

		if (ret) {
			c->err = ret;
			return ret;
		}
		c->copies++;
	}
	return 0;
}

static void remove_dev(uint32_t dev)
{
	nm_bdf_of(&g_info[dev], g_removed, sizeof(g_removed));
	printf("removing device %u (%s)\n", dev, g_removed);
	nm_assert_ok(nm_pci_remove(g_removed));
	ck_assert(!nm_pci_present(g_removed));
}

static void restore_dev(void)
{
	nm_assert_ok(nm_pci_restore(g_removed, 60));
}

/*
 * Buffers: x of device 0 mapped for 1 and 2; y of device 2 mapped for 3
 * (or 0 with three NPUs).  Removing 1 (the peer) takes x's mapping for 1
 * only; removing 0 (x's own) takes x's others too; y and its peer, and
 * the copies running on the other engines, stay untouched throughout.
 */
START_TEST(removal_takes_its_mappings_only)
{
	uint32_t ypeer = g_count > 3 ? 3 : 0;
	int fd = nm_open();
	struct npu_mem_alloc x, y, tgt1, tgt2, tgty;
	struct npu_mem_peer x1, x2, yp, q;
	struct copier cy = { 0 };
	struct nm_bg bg;
	uint64_t base;

	if (g_count < 3) {
		nm_skip_note("needs three NPUs, has %u", g_count);
		close(fd);
		return;
	}
	nm_assert_ok(nm_alloc_dma_on(fd, 0, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &x));
	nm_assert_ok(nm_alloc_dma_on(fd, 2, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &y));
	nm_assert_ok(nm_alloc_dma_on(fd, 1, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &tgt1));
	nm_assert_ok(nm_alloc_dma_on(fd, 2, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &tgt2));
	nm_assert_ok(nm_alloc_dma_on(fd, ypeer, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &tgty));
	nm_assert_ok(peer_map(fd, x.handle, 1, &x1));
	nm_assert_ok(peer_map(fd, x.handle, 2, &x2));
	nm_assert_ok(peer_map(fd, y.handle, ypeer, &yp));
	nm_assert_ok(nm_dma_copy_on(1, x1.dev_addr, tgt1.buf.dev_addr, LEN));

	/* ypeer's engine keeps reading y through its peer mapping */
	cy.dev = ypeer;
	cy.src = yp.dev_addr;
	cy.dst = tgty.buf.dev_addr;
	nm_bg_start(&bg, copy_loop, &cy);

	/* the peer goes */
	base = peer_maps();
	remove_dev(1);
	ck_assert_uint_eq(peer_maps(), base - 1);
	nm_assert_ret(peer_query(fd, x.handle, 1, &q), -ENXIO);
	nm_assert_ret(peer_map(fd, x.handle, 1, &q), -ENODEV);
	nm_assert_ret(peer_unmap(fd, x.handle, 1), -ENXIO);
	nm_assert_ok(peer_query(fd, x.handle, 2, &q));
	ck_assert_uint_eq(q.dev_addr, x2.dev_addr);
	nm_assert_ok(nm_dma_copy_on(2, x2.dev_addr, tgt2.buf.dev_addr, LEN));
	nm_assert_ok(nm_dma_copy_on(0, x.buf.dev_addr, x.buf.dev_addr + NM_4K,
				 NM_4K));
	restore_dev();
	/* a device bound again at the address starts with no peer mappings */
	nm_assert_ret(peer_query(fd, x.handle, 1, &q), -ENXIO);
	nm_assert_ok(peer_map(fd, x.handle, 1, &q));
	nm_assert_ok(peer_unmap(fd, x.handle, 1));

	/* the buffer's own device goes: its peers' mappings go with it */
	if (ypeer == 0) {
		nm_skip_note("four NPUs needed to remove the buffer's own");
	} else {
		remove_dev(0);
		ck_assert_uint_eq(peer_maps(), base - 2);
		nm_assert_ret(peer_query(fd, x.handle, 2, &q), -ENXIO);
		nm_assert_ret(peer_query(fd, x.handle, 0, &q), -ENXIO);
		nm_assert_ret(peer_map(fd, x.handle, 2, &q), -ENODEV);
		nm_assert_ret(nm_dma_copy_on(2, x2.dev_addr, tgt2.buf.dev_addr,
					  LEN), -EINVAL);
		restore_dev();
	}

	/* y's mapping, and its engine's copies, never noticed */
	cy.stop = 1;
	nm_bg_join(&bg);
	ck_assert_msg(!cy.err, "copies on device %u failed: %s", ypeer,
		      nm_retname(cy.err));
	printf("device %u copied %lu times during the removals\n", ypeer,
	       cy.copies);
	nm_assert_ok(peer_query(fd, y.handle, ypeer, &q));
	ck_assert_uint_eq(q.dev_addr, yp.dev_addr);
	nm_assert_ok(nm_dma_copy_on(ypeer, yp.dev_addr, tgty.buf.dev_addr, LEN));

	nm_free_ok(fd, x.handle);
	nm_free_ok(fd, y.handle);
	nm_free_ok(fd, tgt1.handle);
	nm_free_ok(fd, tgt2.handle);
	nm_free_ok(fd, tgty.handle);
	close(fd);
}
END_TEST

/* ---- races ---------------------------------------------------------- */

#define RACE_HANDLES	4
#define RACE_THREADS	4

struct race {
	int fd;
	volatile uint32_t handles[RACE_HANDLES];
	pthread_mutex_t lock;		/* replacing a freed handle */
	volatile int stop;
	unsigned long maps, unmaps, frees;
	char bad[160];
};

static bool allowed(int ret, const int *ok)
{
	for (; *ok; ok++)
		if (ret == *ok)
			return true;
	return ret == 0;
}

static void race_bad(struct race *r, const char *what, int ret)
{
	pthread_mutex_lock(&r->lock);
	if (!r->bad[0])
		snprintf(r->bad, sizeof(r->bad), "%s: %s", what,
			 nm_retname(ret));
	pthread_mutex_unlock(&r->lock);
}

static void *race_thread(void *arg)
{
	static const int map_ok[] = { -EEXIST, -ENOENT, 0 };
	static const int unmap_ok[] = { -ENXIO, -ENOENT, 0 };
	static const int query_ok[] = { -ENXIO, -ENOENT, 0 };
	struct race *r = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;

	while (!r->stop) {
		unsigned int i = rand_r(&seed) % RACE_HANDLES;
		uint32_t h = r->handles[i];
		uint32_t dev = 1 + rand_r(&seed) % (g_count - 1);
		struct npu_mem_peer p;
		int ret;

		switch (rand_r(&seed) % 8) {
		case 0: case 1: case 2:
			ret = peer_map(r->fd, h, dev, &p);
			if (!allowed(ret, map_ok))
				race_bad(r, "PEER_MAP", ret);
			if (!ret)
				__atomic_add_fetch(&r->maps, 1, __ATOMIC_RELAXED);
			break;
		case 3: case 4:
			ret = peer_unmap(r->fd, h, dev);
			if (!allowed(ret, unmap_ok))
				race_bad(r, "PEER_UNMAP", ret);
			if (!ret)
				__atomic_add_fetch(&r->unmaps, 1, __ATOMIC_RELAXED);
			break;
		case 5: case 6:
			ret = peer_query(r->fd, h, dev, &p);
			if (!allowed(ret, query_ok))
				race_bad(r, "PEER_QUERY", ret);
			break;
		default: {
			struct npu_mem_alloc a;

			pthread_mutex_lock(&r->lock);
			if (r->handles[i] == h && !nm_free(r->fd, h) &&
			    !nm_alloc_on(r->fd, 0, LEN, NPU_MEM_POLICY_NORMAL_ONLY,
				      &a)) {
				r->handles[i] = a.handle;
				r->frees++;
			}
			pthread_mutex_unlock(&r->lock);
			break;
		}
		}
	}
	return NULL;
}

START_TEST(racing_map_unmap_free)
{
	struct race r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct npu_mem_info start, end;
	pthread_t th[RACE_THREADS];
	struct nm_span span;
	uint64_t base = peer_maps();

	r.fd = nm_open();
	nm_assert_ok(nm_info_of(r.fd, 0, &start));
	for (int i = 0; i < RACE_HANDLES; i++) {
		struct npu_mem_alloc a;

		nm_assert_ok(nm_alloc_on(r.fd, 0, LEN, NPU_MEM_POLICY_NORMAL_ONLY, &a));
		r.handles[i] = a.handle;
	}
	for (int i = 0; i < RACE_THREADS; i++)
		ck_assert(!pthread_create(&th[i], NULL, race_thread, &r));
	nm_span_start(&span, 5);
	while (nm_span_more(&span, r.maps >= 200 && r.frees >= 20))
		usleep(100 * 1000);
	r.stop = 1;
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	printf("%lu maps, %lu unmaps, %lu frees\n", r.maps, r.unmaps, r.frees);
	ck_assert_msg(!r.bad[0], "%s", r.bad);
	for (int i = 0; i < RACE_HANDLES; i++)
		nm_free_ok(r.fd, r.handles[i]);
	nm_assert_ok(nm_info_of(r.fd, 0, &end));
	ck_assert_uint_eq(end.dev_buffers, start.dev_buffers);
	ck_assert_uint_eq(end.dev_bytes, start.dev_bytes);
	ck_assert_uint_eq(end.client_buffers, 0);
	ck_assert_uint_eq(peer_maps(), base);
	close(r.fd);
}
END_TEST

/* ---- per-device usage ----------------------------------------------- */

START_TEST(usage_per_device_and_node)
{
	int fd = nm_open();
	struct npu_mem_info before[MAX_NPUS], after;

	for (uint32_t d = 0; d < g_count; d++) {
		struct npu_mem_alloc a;
		struct npu_mem_peer p;
		char key[32];
		uint64_t v;

		for (uint32_t e = 0; e < g_count; e++)
			nm_assert_ok(nm_info_of(fd, e, &before[e]));
		nm_assert_ok(nm_alloc_on(fd, d, 4 * NM_2M, NPU_MEM_POLICY_HUGE_FIRST, &a));
		nm_assert_ok(peer_map(fd, a.handle, (d + 1) % g_count, &p));
		for (uint32_t e = 0; e < g_count; e++) {
			/* no node known: nothing is counted as on it */
			bool same_node = g_info[e].dev_node == g_info[d].dev_node &&
					 g_info[e].dev_node != NPU_MEM_NODE_NONE;

			nm_assert_ok(nm_info_of(fd, e, &after));
			printf("after ALLOC for %u: device %u: %llu bytes, %llu buffers, node %d: %llu bytes\n",
			       d, e, (unsigned long long)after.dev_bytes,
			       (unsigned long long)after.dev_buffers,
			       (int)after.dev_node,
			       (unsigned long long)after.dev_node_bytes);
			ck_assert_uint_eq(after.dev_bytes - before[e].dev_bytes,
					  e == d ? a.buf.size : 0);
			ck_assert_uint_eq(after.dev_buffers - before[e].dev_buffers,
					  e == d);
			ck_assert_uint_eq(after.dev_node_bytes -
					  before[e].dev_node_bytes,
					  same_node ? a.buf.size : 0);
			if (after.dev_node == NPU_MEM_NODE_NONE)
				continue;
			snprintf(key, sizeof(key), "node%d_bytes",
				 (int)after.dev_node);
			nm_assert_ok(nm_kv_file(NM_DEBUGFS "/usage", key, &v));
			ck_assert_uint_eq(v, after.dev_node_bytes);
		}
		nm_free_ok(fd, a.handle);
		for (uint32_t e = 0; e < g_count; e++) {
			nm_assert_ok(nm_info_of(fd, e, &after));
			ck_assert_uint_eq(after.dev_bytes, before[e].dev_bytes);
			ck_assert_uint_eq(after.dev_buffers, before[e].dev_buffers);
			ck_assert_uint_eq(after.dev_node_bytes,
					  before[e].dev_node_bytes);
		}
	}
	close(fd);
}
END_TEST

int main(void)
{
	static const struct nm_fixture give_back_fx = {
		.teardown = give_back, .unchecked = true,
	};
	Suite *s = nm_suite("peer_map");
	int ret;

	nm_require_device();
	ret = nm_multi_setup(g_info, &g_count);
	if (ret)
		return ret;

	nm_add(s, peer_dma_reads_and_writes, 120);
	nm_add(s, unmapped_with_the_last_reference, 60);
	nm_add(s, errors, 60);
	nm_add(s, usage_per_device_and_node, 60);
	nm_add(s, racing_map_unmap_free, 300);
	nm_add_fx(s, removal_takes_its_mappings_only, 240, &give_back_fx);
	return nm_run(s, NM_NEEDS_DEVICE);
}
