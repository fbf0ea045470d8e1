// SPDX-License-Identifier: GPL-2.0-only
/*
 * multi_npu: one module serving several NPUs.  In the x86_64-multi-edu
 * guest the module is bound to four edu devices (npu_pci=1234:11e8), two
 * behind an expander bus of NUMA node 0 and two behind one of node 1, each
 * behind its own IOMMU domain; in the x86_64-race guest to the same four
 * with no IOMMU (device addresses are physical); on arm64 to four edu
 * devices behind an SMMUv3, on one node; elsewhere (fewer than two NPUs)
 * it exits 77.
 *  - GET_INFO: device_count is the number of functions bound, indices
 *    follow PCI addresses (dev_pci_* strictly increasing), each index
 *    reports its own function's NUMA node (sysfs numa_node), PCI, and
 *    IOMMU exactly when the function has an IOMMU group, a group of its
 *    own; an index past the last is -EINVAL;
 *  - ALLOC for device N maps for device N: its own edu engine (debugfs
 *    dma_copy, dma_copyN) copies between two of its buffers, and refuses
 *    (-EINVAL) addresses of another device's buffers once it has none;
 *  - device N's buffers are on device N's node: every page of the CPU
 *    mapping (move_pages(2) with nodes NULL), HUGE_FIRST and NORMAL_ONLY,
 *    and QUERY says so (node, off_node_pages 0, device N); a device of no
 *    known node (arm64's) gets the allocator's choice, which on a guest of
 *    one node is that node for every page;
 *  - an index that names no NPU is -EINVAL with nothing allocated; a
 *    zero index (what a binary built before ABI 1.3 has in pad) is NPU 0,
 *    and a QUERY of the v1 size still works;
 *  - HOST_REGISTER for device 2: QUERY says 2, device 2's engine reads and
 *    writes the range, device 0's does not reach it at that address; a
 *    page registered writable for one device is -EEXIST writable for
 *    another, and read-only registrations share it (host_register checks
 *    bad indices and the old struct size);
 *  - PCI remove of one device revokes its buffers only (QUERY DEV_UNMAPPED,
 *    GET_INFO REMOVED, ALLOC -ENODEV for it) and its host registrations
 *    (DEV_UNMAPPED, HOST_REGISTER for it -ENODEV), while the others'
 *    buffers and registrations keep their device addresses and their
 *    engines still copy between them; the
 *    removed device's buffer stays usable memory; after a rescan the same
 *    address comes back at the same index, device_count unchanged.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"
#include "nmtest_fixture.h"
#include "nmtest_multi.h"
#include "nmtest_pci.h"

#define RW		(PROT_READ | PROT_WRITE)
#define MAX_NPUS	NM_MAX_NPUS
#define COPY_LEN	(2 * NM_4K)

static unsigned int g_count;		/* device_count */
static struct npu_mem_info g_info[MAX_NPUS];

/* PCI addresses in their order: domain, bus, devfn */
static uint64_t addr_key(const struct npu_mem_info *i)
{
	return (uint64_t)i->dev_pci_domain << 16 | i->dev_pci_bdf;
}

static int query(int fd, uint32_t handle, struct npu_mem_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = handle;
	return nm_ioctl(fd, NPU_MEM_IOCTL_QUERY, q);
}

static int sync_buf(int fd, uint32_t handle, uint64_t len, uint32_t dir)
{
	struct npu_mem_sync s = { .handle = handle, .direction = dir,
				  .length = len };

	return nm_ioctl(fd, NPU_MEM_IOCTL_SYNC, &s);
}

static long sysfs_node(const char *bdf)
{
	char path[128];
	long node;

	snprintf(path, sizeof(path), NM_PCI_DEVICES "/%s/numa_node", bdf);
	ck_assert_msg(!nm_read_long(path, &node), "read %s", path);
	return node;
}

/* The IOMMU group of bdf ("" without one) into group. */
static void iommu_group_of(const char *bdf, char *group, size_t len)
{
	char path[128], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), NM_PCI_DEVICES "/%s/iommu_group", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	snprintf(group, len, "%s", n > 0 ? strrchr(link, '/') + 1 : "");
}

/* Two buffers on dev, A patterned; the engine copies A -> B; B checked. */
static void copy_roundtrip(int fd, uint32_t dev, struct npu_mem_alloc *a,
			   struct npu_mem_alloc *b, uint8_t seed)
{
	uint8_t *pa = nm_map_ok(fd, a, RW), *pb = nm_map_ok(fd, b, RW);

	for (size_t i = 0; i < COPY_LEN; i++)
		pa[i] = (uint8_t)(i * 7 + seed);
	memset(pb, 0, COPY_LEN);
	nm_assert_ok(sync_buf(fd, a->handle, COPY_LEN, NPU_MEM_SYNC_TO_DEVICE));
	nm_assert_ok(sync_buf(fd, b->handle, COPY_LEN, NPU_MEM_SYNC_TO_DEVICE));
	nm_assert_ok(nm_dma_copy_on(dev, a->buf.dev_addr, b->buf.dev_addr,
				 COPY_LEN));
	nm_assert_ok(sync_buf(fd, b->handle, COPY_LEN,
			      NPU_MEM_SYNC_FROM_DEVICE));
	for (size_t i = 0; i < COPY_LEN; i++)
		NM_REQUIRE(pb[i] == (uint8_t)(i * 7 + seed),
			   "device %u: byte %zu is %#x, want %#x", dev, i,
			   pb[i], (uint8_t)(i * 7 + seed));
	munmap(pa, a->buf.size);
	munmap(pb, b->buf.size);
}

START_TEST(device_info)
{
	int fd = nm_open();
	struct npu_mem_info i;
	char groups[MAX_NPUS][32];

	for (uint32_t d = 0; d < g_count; d++) {
		char bdf[NM_BDF_LEN];
		const uint32_t mask = NPU_MEM_DEV_PCI | NPU_MEM_DEV_IOMMU;
		uint32_t want = NPU_MEM_DEV_PCI;

		nm_assert_ok(nm_info_of(fd, d, &i));
		nm_bdf_of(&i, bdf, sizeof(bdf));
		iommu_group_of(bdf, groups[d], sizeof(groups[d]));
		printf("device %u: %s node %d dev_flags %#x iommu group %s\n",
		       d, bdf, (int)i.dev_node, i.dev_flags,
		       groups[d][0] ? groups[d] : "none");
		ck_assert_uint_eq(i.device, d);
		ck_assert_uint_eq(i.device_count, g_count);
		if (groups[d][0])
			want |= NPU_MEM_DEV_IOMMU;
		ck_assert_uint_eq(i.dev_flags & mask, want);
		/* a domain of its own: peers see each other only by mapping */
		for (uint32_t e = 0; groups[d][0] && e < d; e++)
			ck_assert_msg(strcmp(groups[d], groups[e]),
				      "devices %u and %u share IOMMU group %s",
				      e, d, groups[d]);
		ck_assert_int_eq((int32_t)i.dev_node, sysfs_node(bdf));
		ck_assert(nm_pci_is_bound(bdf));
		if (d)
			ck_assert_msg(addr_key(&i) > addr_key(&g_info[d - 1]),
				      "index %u is not after index %u in address order",
				      d, d - 1);
	}
	nm_assert_ret(nm_info_of(fd, g_count, &i), -EINVAL);
	nm_assert_ret(nm_info_of(fd, 0xffffffff, &i), -EINVAL);
	close(fd);
}
END_TEST

START_TEST(alloc_maps_for_its_device)
{
	int fd = nm_open();
	struct npu_mem_alloc a[MAX_NPUS], b[MAX_NPUS];
	struct npu_mem_query q;

	for (uint32_t d = 0; d < g_count; d++) {
		nm_assert_ok(nm_alloc_dma_on(fd, d, COPY_LEN, NPU_MEM_POLICY_NORMAL_ONLY,
					     &a[d]));
		nm_assert_ok(nm_alloc_dma_on(fd, d, NM_2M, NPU_MEM_POLICY_HUGE_FIRST,
					     &b[d]));
		nm_assert_ok(query(fd, a[d].handle, &q));
		ck_assert_uint_eq(q.device, d);
	}
	for (uint32_t d = 0; d < g_count; d++)
		copy_roundtrip(fd, d, &a[d], &b[d], (uint8_t)d);
	/*
	 * Device 0's engine knows only device 0's buffers: with them gone,
	 * the others' addresses (IOVAs in other domains, or physical
	 * addresses without an IOMMU) are refused.
	 */
	nm_free_ok(fd, a[0].handle);
	nm_free_ok(fd, b[0].handle);
	for (uint32_t d = 1; d < g_count; d++)
		nm_assert_ret(nm_dma_copy_on(0, a[d].buf.dev_addr,
					  b[d].buf.dev_addr, COPY_LEN),
			      -EINVAL);
	close(fd);
}
END_TEST

/* Every page of a mapping on node want, by move_pages(2) without moving. */
static void assert_pages_on(void *p, size_t len, int want, const char *what)
{
	size_t n = len / NM_4K;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));

	ck_assert(pages && status);
	for (size_t i = 0; i < n; i++) {
		pages[i] = (char *)p + i * NM_4K;
		*(volatile char *)pages[i] = 1;	/* mapped, not just reserved */
	}
	ck_assert_msg(syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) == 0,
		      "move_pages: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		NM_REQUIRE(status[i] == want, "%s: page %zu on node %d, want %d",
			   what, i, status[i], want);
	free(pages);
	free(status);
}

/*
 * The node device d's buffers must be on: its own, or for a device of no
 * known node node 0 when that is the only one; -1 when any node may do.
 */
static int want_node(uint32_t d)
{
	char *online;
	bool one;

	if (g_info[d].dev_node != NPU_MEM_NODE_NONE)
		return (int32_t)g_info[d].dev_node;
	online = nm_read_file("/sys/devices/system/node/online");
	one = !online || !strcmp(online, "0") || !strcmp(online, "0\n");
	free(online);
	return one ? 0 : -1;
}

START_TEST(pages_on_device_node)
{
	static const uint32_t policies[] = { NPU_MEM_POLICY_NORMAL_ONLY,
					     NPU_MEM_POLICY_HUGE_FIRST,
					     NPU_MEM_POLICY_HUGE_ONLY };
	int fd = nm_open();

	for (uint32_t d = 0; d < g_count; d++) {
		int node = want_node(d);

		if (node < 0) {
			nm_skip_note("device %u has no node, and the guest has several: the allocator's choice is any of them",
				     d);
			continue;
		}
		for (size_t p = 0; p < NM_ARRAY_SIZE(policies); p++) {
			struct npu_mem_alloc a;
			struct npu_mem_query q;
			char what[64];
			void *m;

			nm_assert_ok(nm_alloc_on(fd, d, 4 * NM_2M, policies[p], &a));
			nm_assert_ok(query(fd, a.handle, &q));
			snprintf(what, sizeof(what), "device %u %s", d,
				 nm_policy_name(policies[p]));
			printf("%s: node %u, %u pages off it, %u huge\n", what,
			       q.node, q.off_node_pages, q.buf.huge_pages);
			ck_assert_uint_eq(q.device, d);
			ck_assert_int_eq((int32_t)q.node, node);
			ck_assert_uint_eq(q.off_node_pages, 0);
			m = nm_map_ok(fd, &a, RW);
			assert_pages_on(m, a.buf.size, node, what);
			munmap(m, a.buf.size);
			nm_free_ok(fd, a.handle);
		}
	}
	close(fd);
}
END_TEST

START_TEST(bad_index_and_old_callers)
{
	const uint32_t bad[] = { g_count, g_count + 1, 64, 0x80000000u,
				 0xffffffffu };
	int fd = nm_open();
	struct npu_mem_alloc a;
	struct npu_mem_info before, after;
	uint8_t q1[56];
	struct npu_mem_query q;

	nm_get_info_ok(fd, &before);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++)
		nm_assert_ret(nm_alloc_on(fd, bad[i], NM_4K,
				       NPU_MEM_POLICY_NORMAL_ONLY, &a), -EINVAL);
	nm_get_info_ok(fd, &after);
	ck_assert_uint_eq(after.buffers, before.buffers);
	ck_assert_uint_eq(after.client_buffers, 0);

	/* What an old binary sends: its pad, zero, is device 0. */
	nm_alloc_ok(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_assert_ok(query(fd, a.handle, &q));
	ck_assert_uint_eq(q.device, 0);
	if (want_node(0) >= 0)
		ck_assert_int_eq((int32_t)q.node, want_node(0));
	/* and its QUERY, of the v1 size, gets what it knew */
	memset(q1, 0, sizeof(q1));
	memcpy(q1, &a.handle, sizeof(a.handle));
	nm_assert_ok(nm_ioctl(fd, NM_IOC(NM_IOC_RW, 0x03, sizeof(q1)), q1));
	nm_assert_buf_eq(&a.buf, (struct npu_mem_buffer *)(q1 + 8));
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

static int host_reg_on(int fd, uint32_t dev, void *p, uint64_t size,
		       uint32_t flags, struct npu_mem_host_register *r)
{
	memset(r, 0, sizeof(*r));
	r->addr = (uint64_t)(uintptr_t)p;
	r->size = size;
	r->flags = flags;
	r->device = dev;
	return nm_ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, r);
}

static void *anon(size_t len)
{
	void *p = mmap(NULL, len, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert(p != MAP_FAILED);
	return p;
}

/* dev's engine copies len bytes between two handles, synced. */
static void engine_copy(int fd, uint32_t dev, uint32_t src, uint64_t src_addr,
			uint32_t dst, uint64_t dst_addr, uint64_t len)
{
	nm_assert_ok(sync_buf(fd, src, len, NPU_MEM_SYNC_TO_DEVICE));
	nm_assert_ok(sync_buf(fd, dst, len, NPU_MEM_SYNC_TO_DEVICE));
	nm_assert_ok(nm_dma_copy_on(dev, src_addr, dst_addr, len));
	nm_assert_ok(sync_buf(fd, dst, len, NPU_MEM_SYNC_FROM_DEVICE));
}

/*
 * What the engine may copy from a registration's dev_addr: all of it when
 * the device sees it in one range (an IOMMU), else the first page only,
 * the one range whose address user space learns (no IOMMU: physical pages
 * of a private mapping are rarely adjacent).
 */
static uint64_t reg_dma_len(const struct npu_mem_host_register *r)
{
	return r->buf.flags & NPU_MEM_BUF_DEV_CONTIG ? r->buf.size : NM_4K;
}

/* The device index HOST_REGISTER tests use: 2, as on an 8-NPU server. */
static uint32_t reg_dev(void)
{
	return g_count > 2 ? 2 : g_count - 1;
}

START_TEST(host_register_for_its_device)
{
	uint32_t dev = reg_dev();
	int fd = nm_open();
	struct npu_mem_host_register h, o;
	struct npu_mem_alloc b;
	struct npu_mem_query q;
	uint8_t *p = anon(COPY_LEN), *pb;
	uint64_t len;

	for (size_t i = 0; i < COPY_LEN; i++)
		p[i] = (uint8_t)(i * 3 + 1);
	nm_assert_ok(host_reg_on(fd, dev, p, COPY_LEN, 0, &h));
	len = reg_dma_len(&h);
	nm_assert_ok(query(fd, h.handle, &q));
	ck_assert_uint_eq(q.device, dev);
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_HOST, 0);
	ck_assert_uint_eq(q.buf.dev_addr, h.buf.dev_addr);

	/* device dev's engine: registered range -> its buffer, and back */
	nm_assert_ok(nm_alloc_on(fd, dev, COPY_LEN, NPU_MEM_POLICY_NORMAL_ONLY,
			      &b));
	pb = nm_map_ok(fd, &b, RW);
	memset(pb, 0, COPY_LEN);
	engine_copy(fd, dev, h.handle, h.buf.dev_addr, b.handle,
		    b.buf.dev_addr, len);
	for (size_t i = 0; i < len; i++)
		NM_REQUIRE(pb[i] == (uint8_t)(i * 3 + 1),
			   "device %u read byte %zu as %#x", dev, i, pb[i]);
	memset(pb, 0xc3, COPY_LEN);
	engine_copy(fd, dev, b.handle, b.buf.dev_addr, h.handle,
		    h.buf.dev_addr, len);
	for (size_t i = 0; i < len; i++)
		NM_REQUIRE(p[i] == 0xc3, "device %u wrote byte %zu as %#x",
			   dev, i, p[i]);

	/*
	 * Device 0 has nothing mapped in this process: the range's address
	 * is another domain's IOVA, which its engine refuses.
	 */
	nm_assert_ret(nm_dma_copy_on(0, h.buf.dev_addr, h.buf.dev_addr + NM_4K,
				  NM_4K), -EINVAL);

	/* A page mapped for one device to write is claimed for all of them. */
	nm_assert_ret(host_reg_on(fd, 0, p, NM_4K, 0, &o), -EEXIST);
	nm_assert_ok(host_reg_on(fd, 0, p, NM_4K, NPU_MEM_HOST_READONLY, &o));
	nm_assert_ok(query(fd, o.handle, &q));
	ck_assert_uint_eq(q.device, 0);
	nm_free_ok(fd, o.handle);

	munmap(pb, COPY_LEN);
	nm_free_ok(fd, b.handle);
	nm_free_ok(fd, h.handle);
	/* gone with FREE: the engine refuses its address */
	nm_assert_ret(nm_dma_copy_on(dev, h.buf.dev_addr, h.buf.dev_addr + NM_4K,
				  NM_4K), -EINVAL);
	munmap(p, COPY_LEN);
	close(fd);
}
END_TEST

static void give_back(void)
{
	nm_multi_give_back(g_info, g_count);
}

START_TEST(remove_revokes_that_device_only)
{
	uint32_t gone = g_count - 1;
	int fd = nm_open();
	struct npu_mem_alloc a[MAX_NPUS], b[MAX_NPUS];
	struct npu_mem_host_register hg, h0, hx;
	char removed[NM_BDF_LEN];
	struct npu_mem_info i;
	struct npu_mem_query q;
	uint8_t *p, *rg = anon(COPY_LEN), *r0 = anon(COPY_LEN);
	uint64_t plen;

	memset(rg, 0x11, COPY_LEN);
	memset(r0, 0x22, COPY_LEN);
	nm_assert_ok(host_reg_on(fd, gone, rg, COPY_LEN, 0, &hg));
	nm_assert_ok(host_reg_on(fd, 0, r0, COPY_LEN, 0, &h0));
	for (uint32_t d = 0; d < g_count; d++) {
		nm_assert_ok(nm_alloc_dma_on(fd, d, COPY_LEN, NPU_MEM_POLICY_NORMAL_ONLY,
					     &a[d]));
		nm_assert_ok(nm_alloc_dma_on(fd, d, COPY_LEN, NPU_MEM_POLICY_HUGE_FIRST,
					     &b[d]));
	}
	p = nm_map_ok(fd, &a[gone], RW);
	plen = a[gone].buf.size;
	nm_bdf_of(&g_info[gone], removed, sizeof(removed));
	printf("removing device %u (%s)\n", gone, removed);
	nm_assert_ok(nm_pci_remove(removed));
	ck_assert(!nm_pci_present(removed));

	nm_assert_ok(nm_info_of(fd, gone, &i));
	ck_assert_uint_ne(i.dev_flags & NPU_MEM_DEV_REMOVED, 0);
	ck_assert_uint_eq(i.device_count, g_count);
	nm_assert_ok(query(fd, a[gone].handle, &q));
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
	nm_assert_ret(nm_alloc_on(fd, gone, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
			       &a[MAX_NPUS - 1]), -ENODEV);
	/* its memory is still memory */
	memset(p, 0x5a, COPY_LEN);
	ck_assert_uint_eq(p[COPY_LEN - 1], 0x5a);
	/* and so are its registrations, unmapped; no new ones for it */
	nm_assert_ok(query(fd, hg.handle, &q));
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
	ck_assert_uint_eq(q.buf.dev_addr, 0);
	ck_assert_uint_eq(q.device, gone);
	nm_assert_ret(host_reg_on(fd, gone, rg, NM_4K, NPU_MEM_HOST_READONLY,
				  &hx), -ENODEV);
	/* device 0's registration keeps its mapping, and its engine reaches it */
	nm_assert_ok(query(fd, h0.handle, &q));
	ck_assert_uint_eq(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
	ck_assert_uint_eq(q.buf.dev_addr, h0.buf.dev_addr);
	engine_copy(fd, 0, h0.handle, h0.buf.dev_addr, a[0].handle,
		    a[0].buf.dev_addr, reg_dma_len(&h0));
	{
		uint8_t *pa = nm_map_ok(fd, &a[0], RW);

		for (size_t k = 0; k < reg_dma_len(&h0); k++)
			NM_REQUIRE(pa[k] == 0x22, "device 0 read its "
				   "registration's byte %zu as %#x", k, pa[k]);
		munmap(pa, COPY_LEN);
	}
	nm_free_ok(fd, hg.handle);
	nm_free_ok(fd, h0.handle);

	for (uint32_t d = 0; d < gone; d++) {
		nm_assert_ok(nm_info_of(fd, d, &i));
		ck_assert_uint_eq(i.dev_flags & NPU_MEM_DEV_REMOVED, 0);
		nm_assert_ok(query(fd, a[d].handle, &q));
		ck_assert_uint_eq(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
		ck_assert_uint_eq(q.buf.dev_addr, a[d].buf.dev_addr);
		copy_roundtrip(fd, d, &a[d], &b[d], (uint8_t)(0x40 + d));
	}

	/* The address comes back at its index. */
	nm_assert_ok(nm_pci_restore(removed, 60));
	nm_assert_ok(nm_info_of(fd, gone, &i));
	ck_assert_uint_eq(i.dev_flags & NPU_MEM_DEV_REMOVED, 0);
	ck_assert_uint_eq(i.device_count, g_count);
	ck_assert_uint_eq(i.dev_pci_bdf, g_info[gone].dev_pci_bdf);
	nm_assert_ok(query(fd, a[gone].handle, &q));
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
	nm_free_ok(fd, a[gone].handle);
	nm_free_ok(fd, b[gone].handle);
	nm_assert_ok(nm_alloc_dma_on(fd, gone, COPY_LEN, NPU_MEM_POLICY_NORMAL_ONLY,
				     &a[gone]));
	nm_assert_ok(nm_alloc_dma_on(fd, gone, COPY_LEN, NPU_MEM_POLICY_NORMAL_ONLY,
				     &b[gone]));
	copy_roundtrip(fd, gone, &a[gone], &b[gone], 0x77);
	munmap(p, plen);
	munmap(rg, COPY_LEN);
	munmap(r0, COPY_LEN);
	close(fd);
}
END_TEST

int main(void)
{
	static const struct nm_fixture give_back_fx = {
		.teardown = give_back, .unchecked = true,
	};
	Suite *s = nm_suite("multi_npu");
	int ret;

	nm_require_device();
	ret = nm_multi_setup(g_info, &g_count);
	if (ret)
		return ret;

	nm_add(s, device_info, 30);
	nm_add(s, alloc_maps_for_its_device, 120);
	nm_add(s, pages_on_device_node, 120);
	nm_add(s, bad_index_and_old_callers, 30);
	nm_add(s, host_register_for_its_device, 60);
	nm_add_fx(s, remove_revokes_that_device_only, 240, &give_back_fx);
	return nm_run(s, NM_NEEDS_DEVICE);
}
