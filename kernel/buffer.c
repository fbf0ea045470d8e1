// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffers: pinned, zeroed pages, DMA-mapped for the NPU device.
 *
 * Pages come straight from the buddy allocator, so they are never on an LRU
 * list: they cannot be swapped, and without __GFP_MOVABLE they cannot be
 * migrated.  __GFP_ZERO clears each page exactly once, in the allocator, and
 * __GFP_ACCOUNT charges the caller's memory cgroup.  Huge chunks are
 * compound pages, so the CPU mapping can hand out their 4 KiB subpages to
 * get_user_pages() (O_DIRECT, process_vm_readv) with the right refcounts,
 * and the final put is deferred until the last such user lets go.
 *
 * Until then such a chunk stays charged.  One reference to one 4 KiB
 * subpage (a pipe after vmsplice, a pin) keeps a whole 2 MiB chunk, which
 * the holder answers for, if at all, as one page: were the chunk uncharged
 * with its buffer, a user could hold all of RAM outside every limit.  So a
 * released buffer's chunks that someone else still references are
 * "retained": they stay in the cap's count, the payer's locked_vm and the
 * mm's VmPin, on a list that a delayed work item rescans until each chunk's
 * count is down to our own reference, or a memory error took one of its
 * pages out of use.  No kernel calls back when an ordinary page's last
 * reference goes, so the count is polled; once the buffer is released
 * nothing maps it, and only a holder of a reference can make another, so a
 * count of exactly ours is final.
 *
 * The DMA mapping can end before the buffer does: when the NPU device is
 * removed, npu_mem_bufs_revoke() unmaps every buffer and the pages stay
 * behind as plain memory.  @mapped says which, under npu_mem_bufs_lock.
 */
#include <linux/dma-mapping.h>
#include <linux/dma-map-ops.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/cred.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "npu_mem.h"

/*
 * Direct reclaim is off for the 2 MiB attempts: a huge page either is free
 * now or the chunk falls back (HUGE_FIRST) or the call fails (HUGE_ONLY),
 * and we never stall in compaction or wake the OOM killer for one.  Under
 * memory pressure, direct compaction for order 9 is what turned a test
 * guest's HUGE_ONLY loop into soft lockups.  kswapd and kcompactd are still
 * woken by a failed attempt (__GFP_KSWAPD_RECLAIM stays), so fragmentation
 * is repaired in the background for the next allocation.
 */
#define HUGE_GFP	((GFP_HIGHUSER | __GFP_ZERO | __GFP_COMP | __GFP_NOWARN | \
			  __GFP_NORETRY | __GFP_ACCOUNT) & ~__GFP_DIRECT_RECLAIM)
/*
 * HUGE_FIRST's tail under 2 MiB, and a 2 MiB piece that fell back, come in
 * 64 KiB blocks where they can (as the system dma-heap does): 16x fewer
 * pages to allocate and free and, without an IOMMU, 16x fewer DMA segments.
 * Same flags as the 2 MiB attempts: a block is free now or we go to 4 KiB.
 */
#define MID_ORDER	4
/* 4 KiB pages fail rather than invoke the OOM killer on the caller's behalf. */
#define NORMAL_GFP	(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | \
			 __GFP_RETRY_MAYFAIL | __GFP_ACCOUNT)

/*
 * Pages for a buffer of an NPU whose device is on a known node come from
 * that node first (buf->want_node): the device's DMA crosses the link
 * between sockets for every access to remote memory, a cost on all its
 * traffic, where smaller pages cost only TLB and IOTLB misses.  So each
 * policy tries what it allows locally (__GFP_THISNODE) before anything
 * remote: HUGE_FIRST local 2 MiB, local 64 KiB and 4 KiB, then remote
 * 4 KiB; HUGE_ONLY local then remote 2 MiB (the page size is its promise);
 * NORMAL_ONLY local then remote 4 KiB.  Remote memory beats failing: the
 * buffer still works, and QUERY tells how many pages are off the node.
 * No node (NUMA_NO_NODE): the allocator's choice, as for any caller.
 */
static struct page *alloc_near(const struct npu_mem_buf *buf, gfp_t gfp,
			       unsigned int order, bool local)
{
	if (buf->want_node == NUMA_NO_NODE)
		return local ? alloc_pages(gfp, order) : NULL;
	return alloc_pages_node(buf->want_node,
				local ? gfp | __GFP_THISNODE : gfp, order);
}

/*
 * Device address ranges: DMA segments that abut count as one range.  The
 * callback sees each maximal range once, in buffer order; it returns true
 * to stop the walk.
 */
static bool for_each_dma_range(const struct sg_table *sgt,
			       bool (*fn)(u64 start, u64 len, void *arg),
			       void *arg)
{
	u64 start = 0, len = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (len && sg_dma_address(sg) == start + len) {
			len += sg_dma_len(sg);
			continue;
		}
		if (len && fn(start, len, arg))
			return true;
		start = sg_dma_address(sg);
		len = sg_dma_len(sg);
	}
	return len && fn(start, len, arg);
}

static bool count_range(u64 start, u64 len, void *arg)
{
	(*(u32 *)arg)++;
	return false;
}

/*
 * Every live buffer, so a test DMA engine (edu.c) can refuse addresses that
 * are not inside one.  Only touched once per buffer life, never per page.
 */
static LIST_HEAD(npu_mem_bufs);
static DEFINE_MUTEX(npu_mem_bufs_lock);

/*
 * A buffer's pages mapped for another NPU's device (PEER_MAP): its own
 * table and device addresses, on the buffer's peers list, under
 * npu_mem_bufs_lock like the buffer's own mapping, so that removal of
 * either device, PEER_UNMAP and the buffer's release never both unmap it
 * and the test engine's range check sees it mapped or gone.
 */
struct npu_mem_peer_map {
	struct list_head node;		/* in its buffer's peers */
	struct npu_mem_npu *npu;	/* the peer */
	struct device *dev;		/* its device, as mapped */
	struct sg_table sgt;
	u64 dev_addr;
	u32 dev_ranges;
	bool bounced;
};

/*
 * Bytes of live buffers' pages by node, beside each NPU's own count
 * (device.c): GET_INFO and debugfs report both.  Not retained chunks:
 * like buffers and huge_pages, these describe live buffers.
 */
static atomic64_t node_bytes[MAX_NUMNODES];

u64 npu_mem_node_bytes(int node)
{
	if (node < 0 || node >= MAX_NUMNODES)
		return 0;
	return atomic64_read(&node_bytes[node]);
}

/* One atomic per run of chunks on one node: most buffers are one run. */
static void account_live(const struct npu_mem_buf *buf, bool add)
{
	int node = NUMA_NO_NODE;
	unsigned int i;
	s64 run = 0;

	for (i = 0; i < buf->nr_chunks; i++) {
		int nid = page_to_nid(buf->chunks[i].page);

		if (nid != node && run)
			atomic64_add(add ? run : -run, &node_bytes[node]);
		if (nid != node)
			run = 0;
		node = nid;
		run += PAGE_SIZE << buf->chunks[i].order;
		if (!(i & 1023))
			cond_resched();
	}
	if (run)
		atomic64_add(add ? run : -run, &node_bytes[node]);
	npu_mem_npu_account(buf->npu, add ? buf->size : -buf->size,
			    add ? 1 : -1);
}

struct dma_span {
	u64 addr;
	u64 len;
};

static bool range_holds(u64 start, u64 len, void *arg)
{
	const struct dma_span *want = arg;

	return want->addr >= start && want->addr - start < len &&
	       want->len <= len - (want->addr - start);
}

static bool dma_range_in(const struct sg_table *sgt, u64 addr, u64 len)
{
	struct dma_span want = { addr, len };

	return for_each_dma_range(sgt, range_holds, &want);
}

/*
 * Host memory registered read-only is pinned without write access: it may
 * be page cache or the shared zero page, so the device is only ever given
 * read access to it.  Everything else is mapped both ways.
 */
static enum dma_data_direction buf_dma_dir(const struct npu_mem_buf *buf)
{
	const u32 ro_host = NPU_MEM_BUF_HOST | NPU_MEM_BUF_READONLY;

	return (READ_ONCE(buf->flags) & ro_host) == ro_host ? DMA_TO_DEVICE :
						    DMA_BIDIRECTIONAL;
}

/*
 * The test DMA engine's check (edu.c holds the registry locked around it
 * and the copy, so nothing is unmapped under a copy in flight): is [addr,
 * addr + len) inside one device range of a buffer mapped for @npu (device
 * addresses are per device), one the device may write if @write?
 */
void npu_mem_bufs_registry_lock(void)
{
	mutex_lock(&npu_mem_bufs_lock);
}

void npu_mem_bufs_registry_unlock(void)
{
	mutex_unlock(&npu_mem_bufs_lock);
}

bool npu_mem_bufs_range_live(struct npu_mem_npu *npu, u64 addr, u64 len,
			     bool write)
{
	struct npu_mem_peer_map *peer;
	struct npu_mem_buf *buf;

	lockdep_assert_held(&npu_mem_bufs_lock);
	list_for_each_entry(buf, &npu_mem_bufs, node) {
		if (buf->mapped && buf->npu == npu &&
		    (!write || buf_dma_dir(buf) == DMA_BIDIRECTIONAL) &&
		    dma_range_in(&buf->sgt, addr, len))
			return true;
		/* Peer mappings are both ways: only our own pages have them. */
		list_for_each_entry(peer, &buf->peers, node)
			if (peer->npu == npu &&
			    dma_range_in(&peer->sgt, addr, len))
				return true;
	}
	return false;
}

/*
 * RLIMIT_MEMLOCK is enforced on the user who opened the file, in the same
 * per-user count io_uring uses: buffers belong to the file, and the file
 * can be shared by fork() or passed to other processes, each of which
 * would otherwise start from a fresh per-process count.
 */
static int charge_user(struct user_struct *user, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur = atomic_long_read(&user->locked_vm), next;

	do {
		next = cur + npages;
		if (next < cur || next > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, next));
	return 0;
}

/* What every buffer together holds: GET_INFO and debugfs report it. */
struct npu_mem_usage npu_mem_usage;

/*
 * Bytes of allocations between their reserve check and the end of their
 * page allocation.  MemAvailable does not show pages not yet taken, so
 * every check counts these as taken already: concurrent allocations
 * cannot all pass on the same free memory.  Pages taken and still in here
 * count twice for a moment, which errs on the safe side.
 */
static atomic64_t bytes_in_flight;

/*
 * The global cap, and the memory the rest of the system needs to keep
 * working: refusing here is what turns exhaustion into -ENOMEM for the
 * caller instead of an OOM kill of whoever allocates next.  On success
 * @bytes are in flight until end_in_flight().
 */
static bool short_of_memory(u64 pending, u64 *short_by)
{
	long avail = si_mem_available();
	u64 need = pending + npu_mem_reserve_bytes();

	if (avail < 0) {
		*short_by = need;
		return true;
	}
	*short_by = need - min(need, (u64)avail << PAGE_SHIFT);
	return *short_by;
}

static int charge_global(u64 bytes)
{
	u64 limit = npu_mem_limit_bytes();
	u64 pending = atomic64_add_return(bytes, &bytes_in_flight);
	u64 short_by;

	/*
	 * The zero reserve's chunks are not available memory, and never let
	 * an allocation pass: before refusing, it gives back what is short.
	 */
	if (short_of_memory(pending, &short_by) &&
	    (!npu_mem_reserve_release(short_by) ||
	     short_of_memory(pending, &short_by)))
		goto refuse;
	if (atomic64_add_return(bytes, &npu_mem_usage.bytes) > limit) {
		atomic64_sub(bytes, &npu_mem_usage.bytes);
		goto refuse;
	}
	return 0;
refuse:
	atomic64_sub(bytes, &bytes_in_flight);
	return -ENOMEM;
}

static void end_in_flight(u64 bytes)
{
	atomic64_sub(bytes, &bytes_in_flight);
}

static void free_chunks(struct npu_mem_buf *buf)
{
	bool host = buf->flags & NPU_MEM_BUF_HOST;
	bool dirty = !(buf->flags & NPU_MEM_BUF_READONLY);
	unsigned int i;

	/*
	 * put_page(), not __free_pages(): a get_user_pages() user of the
	 * mapping (an O_DIRECT read in flight) may still hold a reference.
	 * Registered host pages hold one pin per 4 KiB page, and the device
	 * may have written them (unless pinned read-only): unpin each, dirty,
	 * so the page cache or swap keeps what the device wrote.
	 */
	npu_mem_unclaim_pages(buf);
	for (i = 0; i < buf->nr_chunks; i++) {
		if (host)
			unpin_user_page_range_dirty_lock(buf->chunks[i].page,
							 1UL << buf->chunks[i].order,
							 dirty);
		else
			put_page(buf->chunks[i].page);
		if (!(i & 1023))
			cond_resched();
	}
}

/* Chunks @size bytes take when every 2 MiB piece the policy allows is huge. */
static u64 chunks_if_huge(u64 size, u32 policy)
{
	if (policy == NPU_MEM_POLICY_NORMAL_ONLY)
		return size >> PAGE_SHIFT;
	return (size >> NPU_MEM_HUGE_SHIFT) +
	       ((size & (NPU_MEM_HUGE_SIZE - 1)) >> PAGE_SHIFT);
}

/*
 * The chunk array is sized for the expected case (every 2 MiB piece huge)
 * and grows only when pieces fall back to 4 KiB pages, so a 1 GiB buffer
 * does not pay for a 4 MiB worst-case array.
 */
static int grow_chunks(struct npu_mem_buf *buf, u64 remaining)
{
	u64 want = buf->nr_chunks + (remaining >> PAGE_SHIFT);
	struct npu_mem_chunk *chunks;

	want = min(want, (u64)buf->max_chunks * 2 + 512);
	/* User-sized: a failure is an -ENOMEM for the caller, not a splat. */
	chunks = kvmalloc_array(want, sizeof(*chunks),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!chunks)
		return -ENOMEM;
	memcpy(chunks, buf->chunks, buf->nr_chunks * sizeof(*chunks));
	kvfree(buf->chunks);
	buf->chunks = chunks;
	buf->max_chunks = want;
	return 0;
}

/*
 * Fill buf->chunks for buf->size bytes under the buffer's policy.  A 2 MiB
 * piece that cannot be had huge is filled with smaller pages before the
 * next 2 MiB attempt, so a fragmented zone costs one failed attempt per
 * 2 MiB, not one per page.
 */
static int alloc_chunks(struct npu_mem_buf *buf)
{
	bool try_mid = buf->policy == NPU_MEM_POLICY_HUGE_FIRST;
	bool reserve = npu_mem_reserve_usable();
	u64 remaining = buf->size, small = 0;
	struct page *page;

	while (remaining) {
		unsigned int order = 0;

		if (fatal_signal_pending(current))
			return -EINTR;
		if (buf->nr_chunks == buf->max_chunks && grow_chunks(buf, remaining))
			return -ENOMEM;

		page = NULL;
		if (buf->policy != NPU_MEM_POLICY_NORMAL_ONLY && !small &&
		    remaining >= NPU_MEM_HUGE_SIZE) {
			order = NPU_MEM_HUGE_ORDER;
			/* Zeroed ahead of time, or cleared now by the allocator. */
			page = reserve ? npu_mem_reserve_take(buf->want_node) : NULL;
			if (!page)
				page = alloc_near(buf, HUGE_GFP, order, true);
			if (!page && buf->policy == NPU_MEM_POLICY_HUGE_ONLY)
				page = alloc_near(buf, HUGE_GFP, order, false);
			if (!page && buf->policy == NPU_MEM_POLICY_HUGE_ONLY)
				return -ENOMEM;
			if (!page)
				small = NPU_MEM_HUGE_SIZE;
		}
		/* Once a block cannot be had, the rest would fail as well. */
		if (!page && try_mid && remaining >= (PAGE_SIZE << MID_ORDER)) {
			order = MID_ORDER;
			page = alloc_near(buf, HUGE_GFP, order, true);
			try_mid = !!page;
		}
		if (!page) {
			order = 0;
			page = alloc_near(buf, NORMAL_GFP, 0, true);
			if (!page)
				page = alloc_near(buf, NORMAL_GFP, 0, false);
			if (!page)
				return -ENOMEM;
		}

		buf->chunks[buf->nr_chunks].page = page;
		buf->chunks[buf->nr_chunks].order = order;
		buf->chunks[buf->nr_chunks].first =
			(buf->size - remaining) >> PAGE_SHIFT;
		/*
		 * Its place in the buffer, as a page-cache folio would have it:
		 * the fault path compares it with i_size (mapping.c) before it
		 * maps a chunk with a PMD.  The allocator leaves whatever the
		 * page's last user stored there (a slab freelist pointer, say),
		 * which would pass i_size and send the chunk to PTEs.
		 */
		npu_folio_set_index(page, buf->chunks[buf->nr_chunks].first);
		buf->nr_chunks++;
		/* Counted as the UAPI counts them: 2 MiB chunks, 4 KiB pages. */
		if (order == NPU_MEM_HUGE_ORDER)
			buf->nr_huge++;
		else
			buf->nr_normal += 1U << order;
		remaining -= PAGE_SIZE << order;
		small -= min_t(u64, small, PAGE_SIZE << order);
		cond_resched();
	}
	return 0;
}

/*
 * The sg entries: each chunk, cut to what one mapping may be on this
 * device.  That is the whole chunk unless the device bounces (swiotlb can
 * bounce at most 256 KiB at once); bounced pieces are synced per piece.
 */
static int build_table(const struct npu_mem_buf *buf, struct sg_table *sgt,
		       struct device *dev)
{
	size_t max = max_t(size_t, PAGE_SIZE,
			   round_down(min_t(size_t, dma_max_mapping_size(dev),
					    UINT_MAX), PAGE_SIZE));
	struct scatterlist *sg;
	unsigned int i, nents = 0;
	int ret;

	for (i = 0; i < buf->nr_chunks; i++)
		nents += DIV_ROUND_UP(PAGE_SIZE << buf->chunks[i].order, max);
	ret = sg_alloc_table(sgt, nents, GFP_KERNEL | __GFP_NOWARN);
	if (ret)
		return ret;
	sg = sgt->sgl;
	for (i = 0; i < buf->nr_chunks; i++) {
		size_t len = PAGE_SIZE << buf->chunks[i].order, off;

		for (off = 0; off < len; off += max) {
			sg_set_page(sg, nth_page(buf->chunks[i].page, off >> PAGE_SHIFT),
				    min(len - off, max), 0);
			sg = sg_next(sg);
		}
	}
	return 0;
}

/*
 * Under dma-direct a coherent device needs syncs only where its mapping
 * bounces, which dma_need_sync() tells.  Behind an IOMMU it cannot say
 * (before 6.12 it answers for the ops, not the address), but dma-iommu
 * bounces only pieces that are not page-aligned, and ours all are.
 */
static bool mapping_bounces(const struct sg_table *sgt, struct device *dev)
{
	struct scatterlist *sg;
	unsigned int i;

	if (!dev_is_dma_coherent(dev) || npu_mem_dev_translated(dev))
		return false;
	for_each_sgtable_dma_sg(sgt, sg, i)
		if (dma_need_sync(dev, sg_dma_address(sg)))
			return true;
	return false;
}

/*
 * Map the buffer's pages in a new @sgt for @dev, both ways unless the
 * buffer is host memory registered read-only.
 */
static int map_table(struct npu_mem_buf *buf, struct sg_table *sgt,
		     struct device *dev)
{
	int ret;

	ret = build_table(buf, sgt, dev);
	if (ret)
		return ret;
	/*
	 * Not DMA_ATTR_SKIP_CPU_SYNC: on a non-coherent device the zeroes
	 * written through the CPU cache must reach memory before the device
	 * reads it.  Under an IOMMU, dma-iommu gives the list one IOVA range.
	 * DMA_ATTR_NO_WARN: a full IOMMU or bounce pool is the caller's
	 * -ENOMEM, not a kernel log line; dma-direct says -EIO for it.
	 */
	ret = dma_map_sgtable(dev, sgt, buf_dma_dir(buf), DMA_ATTR_NO_WARN);
	if (!ret && !sgt->nents) {
		dma_unmap_sgtable(dev, sgt, buf_dma_dir(buf), 0);
		ret = -ENOMEM;
	}
	if (ret) {
		sg_free_table(sgt);
		return ret == -EIO ? -ENOMEM : ret;
	}
	return 0;
}

static int map_for_device(struct npu_mem_buf *buf, struct device *dev)
{
	int ret;

	ret = map_table(buf, &buf->sgt, dev);
	if (ret)
		return ret;
	buf->dev = dev;
	buf->dev_addr = sg_dma_address(buf->sgt.sgl);
	for_each_dma_range(&buf->sgt, count_range, &buf->dev_ranges);
	if (buf->dev_ranges == 1)
		buf->flags |= NPU_MEM_BUF_DEV_CONTIG;
	if (mapping_bounces(&buf->sgt, dev))
		buf->flags |= NPU_MEM_BUF_BOUNCED;
	return 0;
}

/*
 * Under npu_mem_bufs_lock, so removal and release never both unmap.
 * DMA_ATTR_SKIP_CPU_SYNC: at release the contents no longer matter, and at
 * removal the pages are what stays, so bounce buffers must not be copied
 * back over what the CPU wrote since its last SYNC.  Device writes the
 * caller never synced for the CPU are lost with the device.
 */
static void peer_unmap(struct npu_mem_buf *buf, struct npu_mem_peer_map *peer)
{
	lockdep_assert_held(&npu_mem_bufs_lock);
	list_del(&peer->node);
	dma_unmap_sgtable(peer->dev, &peer->sgt, buf_dma_dir(buf),
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(&peer->sgt);
	kfree(peer);
	atomic64_dec(&npu_mem_usage.peer_maps);
}

/* @buf's peer mappings for @npu, or all of them (@npu NULL). */
static void unmap_peers(struct npu_mem_buf *buf, struct npu_mem_npu *npu)
{
	struct npu_mem_peer_map *peer, *next;

	list_for_each_entry_safe(peer, next, &buf->peers, node)
		if (!npu || peer->npu == npu)
			peer_unmap(buf, peer);
}

/*
 * A buffer's peer mappings go with its own: what the peers reach is the
 * buffer of a device, and a buffer of a removed device has none.
 */
static void unmap_for_device(struct npu_mem_buf *buf)
{
	lockdep_assert_held(&npu_mem_bufs_lock);
	unmap_peers(buf, NULL);
	if (!buf->mapped)
		return;
	dma_unmap_sgtable(buf->dev, &buf->sgt, buf_dma_dir(buf),
			  DMA_ATTR_SKIP_CPU_SYNC);
	buf->mapped = false;
	buf->flags &= ~(NPU_MEM_BUF_DEV_CONTIG | NPU_MEM_BUF_BOUNCED);
}

/*
 * Map for @npu's device and register the buffer, in one device read
 * section: a removal either comes before (-ENODEV) or finds the buffer
 * registered and unmaps it.
 */
int npu_mem_buf_map(struct npu_mem_buf *buf, struct npu_mem_npu *npu)
{
	struct device *dev;
	int idx, ret = -ENODEV;
	unsigned int i;

	buf->npu = npu;
	buf->first_node = buf->nr_chunks ? page_to_nid(buf->chunks[0].page) :
				     NUMA_NO_NODE;
	buf->off_node_pages = 0;
	for (i = 1; i < buf->nr_chunks; i++)
		if (page_to_nid(buf->chunks[i].page) != buf->first_node)
			buf->off_node_pages += 1U << buf->chunks[i].order;
	dev = npu_mem_dev_enter(npu, &idx);
	if (dev)
		ret = map_for_device(buf, dev);
	if (!ret) {
		mutex_lock(&npu_mem_bufs_lock);
		buf->mapped = true;
		list_add(&buf->node, &npu_mem_bufs);
		mutex_unlock(&npu_mem_bufs_lock);
	}
	npu_mem_dev_exit(npu, idx);
	return ret;
}

/**
 * npu_mem_bufs_revoke() - tear down every DMA mapping made for @npu
 * @npu: the NPU whose device is being removed; no one can reach it any more
 *
 * The buffers stay, with their pages, handles and CPU mappings.
 */
void npu_mem_bufs_revoke(struct npu_mem_npu *npu)
{
	struct npu_mem_buf *buf;

	mutex_lock(&npu_mem_bufs_lock);
	list_for_each_entry(buf, &npu_mem_bufs, node) {
		if (buf->mapped && buf->npu == npu)
			unmap_for_device(buf);
		unmap_peers(buf, npu);
		cond_resched();
	}
	mutex_unlock(&npu_mem_bufs_lock);
}

static struct npu_mem_peer_map *find_peer(struct npu_mem_buf *buf,
					  struct npu_mem_npu *npu)
{
	struct npu_mem_peer_map *peer;

	lockdep_assert_held(&npu_mem_bufs_lock);
	list_for_each_entry(peer, &buf->peers, node)
		if (peer->npu == npu)
			return peer;
	return NULL;
}

/* Can @buf get a mapping for @npu now?  0, -ENODEV or -EEXIST. */
static int peer_check(struct npu_mem_buf *buf, struct npu_mem_npu *npu)
{
	lockdep_assert_held(&npu_mem_bufs_lock);
	if (!buf->mapped)
		return -ENODEV;
	return find_peer(buf, npu) ? -EEXIST : 0;
}

/* Physical addresses stay private as for the buffer's own mapping. */
static void peer_fill(const struct npu_mem_peer_map *peer, bool sees_phys,
		      struct npu_mem_peer *out)
{
	out->buf_flags = peer->bounced ? NPU_MEM_BUF_BOUNCED : 0;
	if (!sees_phys && !npu_mem_dev_translated(peer->dev)) {
		out->buf_flags |= NPU_MEM_BUF_DEV_HIDDEN;
		out->dev_addr = 0;
		out->dev_segments = 0;
		return;
	}
	if (peer->dev_ranges == 1)
		out->buf_flags |= NPU_MEM_BUF_DEV_CONTIG;
	out->dev_addr = peer->dev_addr;
	out->dev_segments = peer->dev_ranges;
}

/**
 * npu_mem_buf_peer_map() - DMA-map a buffer for another NPU
 * @buf: a buffer of our own pages (not host memory, not foreign)
 * @npu: the peer, not the buffer's own NPU
 * @sees_phys: the caller may learn physical addresses (CAP_SYS_ADMIN)
 * @out: the mapping's description, on success
 *
 * Mapped in the peer's device read section, and put on the list under
 * npu_mem_bufs_lock inside it: a removal of the peer either comes before
 * (-ENODEV) or finds the mapping listed and unmaps it; a removal of the
 * buffer's own device before the listing is seen there (-ENODEV), one
 * after it unmaps it with the buffer's own.  Two racing calls for the same
 * peer both map; the second to list undoes its mapping (-EEXIST).
 *
 * Return: 0 or an errno of the UAPI header's Peer mappings.
 */
int npu_mem_buf_peer_map(struct npu_mem_buf *buf, struct npu_mem_npu *npu,
			 bool sees_phys, struct npu_mem_peer *out)
{
	struct npu_mem_peer_map *peer;
	struct device *dev;
	int idx, ret;

	peer = kzalloc(sizeof(*peer), GFP_KERNEL_ACCOUNT);
	if (!peer)
		return -ENOMEM;
	peer->npu = npu;
	dev = npu_mem_dev_enter(npu, &idx);
	ret = -ENODEV;
	if (dev) {
		mutex_lock(&npu_mem_bufs_lock);
		ret = peer_check(buf, npu);
		mutex_unlock(&npu_mem_bufs_lock);
	}
	if (!ret)
		ret = map_table(buf, &peer->sgt, dev);
	if (ret)
		goto out;
	peer->dev = dev;
	peer->dev_addr = sg_dma_address(peer->sgt.sgl);
	for_each_dma_range(&peer->sgt, count_range, &peer->dev_ranges);
	peer->bounced = mapping_bounces(&peer->sgt, dev);

	mutex_lock(&npu_mem_bufs_lock);
	ret = peer_check(buf, npu);
	if (!ret) {
		list_add_tail(&peer->node, &buf->peers);
		atomic64_inc(&npu_mem_usage.peer_maps);
		peer_fill(peer, sees_phys, out);
		peer = NULL;
	}
	mutex_unlock(&npu_mem_bufs_lock);
	if (peer) {
		dma_unmap_sgtable(dev, &peer->sgt, buf_dma_dir(buf),
				  DMA_ATTR_SKIP_CPU_SYNC);
		sg_free_table(&peer->sgt);
	}
out:
	npu_mem_dev_exit(npu, idx);
	kfree(peer);
	return ret;
}

/* PEER_UNMAP: 0, or -ENXIO when @buf has no mapping for @npu. */
int npu_mem_buf_peer_unmap(struct npu_mem_buf *buf, struct npu_mem_npu *npu)
{
	struct npu_mem_peer_map *peer;

	mutex_lock(&npu_mem_bufs_lock);
	peer = find_peer(buf, npu);
	if (peer)
		peer_unmap(buf, peer);
	mutex_unlock(&npu_mem_bufs_lock);
	return peer ? 0 : -ENXIO;
}

/*
 * PEER_QUERY: where @npu sees @buf.  For the buffer's own NPU that is its
 * own mapping, as QUERY describes it.  Return: 0, or -ENXIO when @buf is
 * not mapped for @npu.
 */
int npu_mem_buf_peer_describe(struct npu_mem_buf *buf, struct npu_mem_npu *npu,
			      bool sees_phys, struct npu_mem_peer *out)
{
	const u32 kept = NPU_MEM_BUF_DEV_CONTIG | NPU_MEM_BUF_DEV_HIDDEN |
			 NPU_MEM_BUF_BOUNCED;
	struct npu_mem_peer_map *peer;
	struct npu_mem_buffer own;

	if (npu == buf->npu) {
		npu_mem_buf_describe(buf, sees_phys, &own);
		if (own.flags & NPU_MEM_BUF_DEV_UNMAPPED)
			return -ENXIO;
		out->buf_flags = own.flags & kept;
		out->dev_addr = own.dev_addr;
		out->dev_segments = own.dev_segments;
		return 0;
	}
	mutex_lock(&npu_mem_bufs_lock);
	peer = find_peer(buf, npu);
	if (peer)
		peer_fill(peer, sees_phys, out);
	mutex_unlock(&npu_mem_bufs_lock);
	return peer ? 0 : -ENXIO;
}

bool npu_mem_buf_mapped(const struct npu_mem_buf *buf)
{
	return READ_ONCE(buf->mapped);
}

/**
 * npu_mem_buf_charge() - charge a new buffer's pages as pinned memory
 * @buf: the buffer, with its size set and nothing charged yet
 * @payer: who pays: the file opener's credentials, whose user is charged
 * @unlimited: the opener had CAP_IPC_LOCK
 *
 * What a buffer's pages are charged to apart from the global count: the
 * opener's user (unless it may lock without limit) and the calling
 * process's VmPin.  The same for allocated buffers and registered host
 * memory; undone when the buffer goes (unfill()) or by
 * npu_mem_buf_discard().  Return: 0 or -ENOMEM (RLIMIT_MEMLOCK).
 */
int npu_mem_buf_charge(struct npu_mem_buf *buf, const struct cred *payer,
		       bool unlimited)
{
	unsigned long npages = buf->size >> PAGE_SHIFT;
	int ret;

	/* An opener with CAP_IPC_LOCK is not limited: it draws on no count. */
	if (!unlimited) {
		ret = charge_user(payer->user, npages);
		if (ret)
			return ret;
		/*
		 * The user is held through the credentials that name it:
		 * free_uid() is not exported on every kernel, put_cred() is.
		 */
		buf->payer = get_cred(payer);
	}
	/* Always shown as VmPin of the allocating process; not the limit. */
	buf->mm = current->mm;
	mmgrab(buf->mm);
	atomic64_add(npages, &buf->mm->pinned_vm);
	return 0;
}

/* Give back @npages of the buffer's charge to its user and its mm. */
static void uncharge_pages(struct npu_mem_buf *buf, unsigned long npages)
{
	atomic64_sub(npages, &buf->mm->pinned_vm);
	if (buf->payer)
		atomic_long_sub(npages, &buf->payer->user->locked_vm);
}

/* Drop what holds the charged user and mm: nothing is charged any more. */
static void drop_payers(struct npu_mem_buf *buf)
{
	mmdrop(buf->mm);
	if (buf->payer)
		put_cred(buf->payer);
}

static void uncharge(struct npu_mem_buf *buf)
{
	uncharge_pages(buf, buf->size >> PAGE_SHIFT);
	drop_payers(buf);
}

/* The chunks (kind-aware: freed or unpinned) and the charges. */
static void unfill(struct npu_mem_buf *buf)
{
	if (buf->chunks) {
		free_chunks(buf);
		kvfree(buf->chunks);
	}
	uncharge(buf);
}

/*
 * Released buffers with chunks still referenced elsewhere (the top of the
 * file says why).  Each keeps only those chunks in @chunks, and its @mm
 * and @payer for their charges.  The rescan runs a second after something
 * is retained and backs off to RETAIN_MAX_DELAY while nothing is let go:
 * a pin can last for hours, and every rescan reads every retained chunk.
 * Nothing runs while the list is empty.
 */
#define RETAIN_MAX_DELAY	(16 * HZ)
static LIST_HEAD(npu_mem_retained);
static DEFINE_MUTEX(npu_mem_retained_lock);
static unsigned long retain_delay = HZ;	/* under npu_mem_retained_lock */
static void retained_scan(struct work_struct *work);
static DECLARE_DELAYED_WORK(retained_work, retained_scan);

/*
 * A memory error, real or injected (MADV_HWPOISON, as root), takes a page
 * out of use for good: memory_failure() may keep a reference to it that is
 * never put (5.10 does for pages it cannot handle).  Such a chunk is no
 * user's any more, and its charges must not outlive the buffer forever.
 */
static bool chunk_poisoned(const struct npu_mem_chunk *c)
{
	return npu_mem_pages_poisoned(c->page, c->order);
}

/*
 * Our reference is the allocator's one on the head page; any other user's
 * reference to any subpage is counted there too (and so is a FOLL_PIN).
 */
static bool chunk_held_elsewhere(const struct npu_mem_chunk *c)
{
	return page_ref_count(c->page) > 1 && !chunk_poisoned(c);
}

/*
 * Put our reference to every chunk no one else holds and keep the others
 * at the front of @chunks.  A 2 MiB chunk no one else holds goes to the
 * zero reserve if it has room: nothing outside can reach it any more, and
 * the reserve zeroes it before anyone gets it.  Return: the 4 KiB pages
 * let go.
 */
static unsigned long put_unheld_chunks(struct npu_mem_buf *buf)
{
	unsigned long freed = 0;
	unsigned int i, kept = 0;

	for (i = 0; i < buf->nr_chunks; i++) {
		const struct npu_mem_chunk *c = &buf->chunks[i];

		if (chunk_held_elsewhere(c)) {
			buf->chunks[kept++] = *c;
			continue;
		}
		if (c->order != NPU_MEM_HUGE_ORDER || chunk_poisoned(c) ||
		    !npu_mem_reserve_recycle(c->page))
			put_page(c->page);
		freed += 1UL << c->order;
		if (!(i & 1023))
			cond_resched();
	}
	buf->nr_chunks = kept;
	return freed;
}

/* The last of a retained (or released) buffer: its charges end. */
static void retained_done(struct npu_mem_buf *buf)
{
	kvfree(buf->chunks);
	drop_payers(buf);
	kfree(buf);
}

/*
 * Let go of what no one else holds and uncharge it; what is left in
 * @chunks stays charged.  Return: the 4 KiB pages let go.
 */
static unsigned long let_go(struct npu_mem_buf *buf, bool was_retained)
{
	unsigned long freed = put_unheld_chunks(buf);
	u64 bytes = (u64)freed << PAGE_SHIFT;

	uncharge_pages(buf, freed);
	atomic64_sub(bytes, &npu_mem_usage.bytes);
	if (was_retained)
		atomic64_sub(bytes, &npu_mem_usage.retained_bytes);
	return freed;
}

static void retained_scan(struct work_struct *work)
{
	struct npu_mem_buf *buf, *next;
	unsigned long freed = 0;

	mutex_lock(&npu_mem_retained_lock);
	list_for_each_entry_safe(buf, next, &npu_mem_retained, node) {
		freed += let_go(buf, true);
		if (!buf->nr_chunks) {
			list_del(&buf->node);
			retained_done(buf);
		}
		cond_resched();
	}
	if (!list_empty(&npu_mem_retained)) {
		if (freed)
			retain_delay = HZ;
		else
			retain_delay = min_t(unsigned long, retain_delay * 2,
					     RETAIN_MAX_DELAY);
		schedule_delayed_work(&retained_work, retain_delay);
	}
	mutex_unlock(&npu_mem_retained_lock);
}

/*
 * A released buffer of our own pages: free what only we hold, keep the
 * rest charged on the retained list.  The list's lock is taken last, and
 * the work is queued under it, so a rescan that finds the list empty and
 * stops cannot miss this entry.
 */
static void release_or_retain(struct npu_mem_buf *buf)
{
	unsigned int i;
	u64 kept = 0;

	let_go(buf, false);
	if (!buf->nr_chunks) {
		retained_done(buf);
		return;
	}
	for (i = 0; i < buf->nr_chunks; i++)
		kept += PAGE_SIZE << buf->chunks[i].order;
	atomic64_add(kept, &npu_mem_usage.retained_bytes);
	mutex_lock(&npu_mem_retained_lock);
	list_add_tail(&buf->node, &npu_mem_retained);
	retain_delay = HZ;
	schedule_delayed_work(&retained_work, retain_delay);
	mutex_unlock(&npu_mem_retained_lock);
}

/**
 * npu_mem_retained_exit() - module unload: let go of every retained chunk
 *
 * No file, mapping or dma-buf is left, so nothing is released any more.
 * The rest of the charges go with the module (the user's locked_vm must
 * not stay raised for good), and our reference to each chunk is put: a
 * holder that still has one frees the pages when it lets go, with no
 * module code involved.
 */
void npu_mem_retained_exit(void)
{
	struct npu_mem_buf *buf, *next;

	cancel_delayed_work_sync(&retained_work);
	list_for_each_entry_safe(buf, next, &npu_mem_retained, node) {
		u64 bytes = 0;
		unsigned int i;

		for (i = 0; i < buf->nr_chunks; i++) {
			bytes += PAGE_SIZE << buf->chunks[i].order;
			put_page(buf->chunks[i].page);
		}
		uncharge_pages(buf, bytes >> PAGE_SHIFT);
		atomic64_sub(bytes, &npu_mem_usage.bytes);
		atomic64_sub(bytes, &npu_mem_usage.retained_bytes);
		list_del(&buf->node);
		retained_done(buf);
	}
}

/* The charges, then the pages.  Undone by unfill(). */
static int fill(struct npu_mem_buf *buf, const struct cred *payer,
		bool unlimited)
{
	int ret;

	ret = npu_mem_buf_charge(buf, payer, unlimited);
	if (ret)
		return ret;

	buf->max_chunks = chunks_if_huge(buf->size, buf->policy);
	buf->chunks = kvmalloc_array(buf->max_chunks, sizeof(*buf->chunks),
				     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	ret = buf->chunks ? alloc_chunks(buf) : -ENOMEM;
	if (ret)
		unfill(buf);
	return ret;
}

/**
 * npu_mem_buf_new() - an empty buffer object, one reference, nothing charged
 * @size: bytes, page-aligned
 * @policy: enum npu_mem_policy
 * @flags: NPU_MEM_BUF_READONLY and/or NPU_MEM_BUF_HOST
 *
 * Return: the buffer, or NULL without memory.
 */
struct npu_mem_buf *npu_mem_buf_new(u64 size, u32 policy, u32 flags)
{
	struct npu_mem_buf *buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);

	if (!buf)
		return NULL;
	kref_init(&buf->ref);
	mutex_init(&buf->imports_lock);
	INIT_LIST_HEAD(&buf->imports);
	INIT_LIST_HEAD(&buf->node);
	INIT_LIST_HEAD(&buf->peers);
	buf->want_node = NUMA_NO_NODE;
	buf->first_node = NUMA_NO_NODE;
	buf->size = size;
	buf->policy = policy;
	buf->flags = flags;
	return buf;
}

/**
 * npu_mem_buf_discard() - undo a buffer that npu_mem_buf_map() never mapped
 * @buf: from npu_mem_buf_new(), perhaps charged (npu_mem_buf_charge()),
 *	with the chunks it holds so far (freed or unpinned, by its kind)
 */
void npu_mem_buf_discard(struct npu_mem_buf *buf)
{
	if (buf->mm)
		unfill(buf);
	else
		kvfree(buf->chunks);
	mutex_destroy(&buf->imports_lock);
	kfree(buf);
}

/**
 * npu_mem_buf_alloc() - allocate, zero, pin and DMA-map a buffer
 * @npu: the NPU to map it for
 * @size: bytes wanted, non-zero
 * @policy: enum npu_mem_policy, already validated
 * @flags: NPU_MEM_ALLOC_*, already validated
 * @payer: who pays (RLIMIT_MEMLOCK): the file opener's credentials
 * @unlimited: the opener had CAP_IPC_LOCK
 *
 * Return: the buffer with one reference, or an ERR_PTR (see the UAPI header).
 */
struct npu_mem_buf *npu_mem_buf_alloc(struct npu_mem_npu *npu, u64 size,
				      u32 policy, u32 flags,
				      const struct cred *payer, bool unlimited)
{
	u64 align = policy == NPU_MEM_POLICY_HUGE_ONLY ? NPU_MEM_HUGE_SIZE : PAGE_SIZE;
	struct npu_mem_buf *buf;
	int ret;

	if (size > U64_MAX - (align - 1))
		return ERR_PTR(-E2BIG);
	size = round_up(size, align);
	if (size > npu_mem_max_alloc())
		return ERR_PTR(-E2BIG);
	if (policy == NPU_MEM_POLICY_HUGE1G_ONLY)
		return ERR_PTR(-EOPNOTSUPP);	/* alloc_contig_pages() is not exported */
	/*
	 * With no device there is nothing to map for: say so before taking
	 * (and clearing) the pages, which could also fail first, on a limit
	 * or for want of 2 MiB blocks, and hide why.  A removal after this
	 * check is caught by npu_mem_buf_map().
	 */
	if (npu_mem_dev_flags(npu) & NPU_MEM_DEV_REMOVED)
		return ERR_PTR(-ENODEV);

	buf = npu_mem_buf_new(size, policy,
			      flags & NPU_MEM_ALLOC_READONLY ? NPU_MEM_BUF_READONLY : 0);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->want_node = npu_mem_npu_node(npu);

	ret = charge_global(size);
	if (ret)
		goto err_free_buf;
	ret = fill(buf, payer, unlimited);
	end_in_flight(size);
	if (ret)
		goto err_uncharge_global;
	ret = npu_mem_buf_map(buf, npu);
	if (ret)
		goto err_unfill;

	atomic64_add(buf->nr_huge, &npu_mem_usage.huge_pages);
	atomic64_add(buf->nr_normal, &npu_mem_usage.normal_pages);
	atomic64_inc(&npu_mem_usage.buffers);
	account_live(buf, true);
	return buf;

err_unfill:
	unfill(buf);
err_uncharge_global:
	atomic64_sub(size, &npu_mem_usage.bytes);
err_free_buf:
	mutex_destroy(&buf->imports_lock);
	kfree(buf);
	return ERR_PTR(ret);
}

static void npu_mem_buf_release(struct kref *ref)
{
	struct npu_mem_buf *buf = container_of(ref, struct npu_mem_buf, ref);

	/* Another driver's pages: only the attachment and reference are ours. */
	if (buf->foreign) {
		buf->foreign_ops->release(buf);
		mutex_destroy(&buf->imports_lock);
		kfree(buf);
		return;
	}
	mutex_lock(&npu_mem_bufs_lock);
	list_del(&buf->node);
	unmap_for_device(buf);
	mutex_unlock(&npu_mem_bufs_lock);
	sg_free_table(&buf->sgt);
	mutex_destroy(&buf->imports_lock);

	/*
	 * Registered host memory is the process's own (unpinned, whoever
	 * else holds it) and the global usage never had it.
	 */
	if (buf->flags & NPU_MEM_BUF_HOST) {
		unfill(buf);
		kfree(buf);
		return;
	}
	atomic64_sub(buf->nr_huge, &npu_mem_usage.huge_pages);
	atomic64_sub(buf->nr_normal, &npu_mem_usage.normal_pages);
	atomic64_dec(&npu_mem_usage.buffers);
	account_live(buf, false);
	release_or_retain(buf);
}

void npu_mem_buf_put(struct npu_mem_buf *buf)
{
	kref_put(&buf->ref, npu_mem_buf_release);
}

/**
 * npu_mem_buf_describe() - what ALLOC and QUERY report of a buffer
 * @buf: the buffer
 * @sees_phys: the caller may learn physical addresses (CAP_SYS_ADMIN)
 * @out: filled in full
 *
 * Without an IOMMU a device address is physical, and so is the layout that
 * dev_segments and DEV_CONTIG reveal: withheld unless @sees_phys.
 */
void npu_mem_buf_describe(const struct npu_mem_buf *buf, bool sees_phys,
			  struct npu_mem_buffer *out)
{
	bool mapped = npu_mem_buf_mapped(buf);
	bool hide = mapped && !sees_phys &&
		    !(npu_mem_dev_flags(buf->npu) & NPU_MEM_DEV_IOMMU);
	u32 flags = READ_ONCE(buf->flags);

	memset(out, 0, sizeof(*out));
	out->size = buf->size;
	out->huge_pages = buf->nr_huge;
	out->normal_pages = buf->nr_normal;
	out->policy = buf->policy;
	if (!mapped) {
		out->flags = (flags & (NPU_MEM_BUF_READONLY | NPU_MEM_BUF_HOST |
				NPU_MEM_BUF_FOREIGN)) | NPU_MEM_BUF_DEV_UNMAPPED;
	} else if (hide) {
		out->flags = (flags & ~NPU_MEM_BUF_DEV_CONTIG) | NPU_MEM_BUF_DEV_HIDDEN;
	} else {
		out->flags = flags;
		out->dev_addr = buf->dev_addr;
		out->dev_segments = buf->dev_ranges;
	}
}

/*
 * Every cache-maintenance call the module makes for its own device goes
 * through here, one physically contiguous piece at a time: noinline so
 * that a kprobe can check the pieces (tests/kernel/sync_trace.c).
 */
noinline void npu_mem_sync_piece(struct device *dev, dma_addr_t addr,
				 size_t len, enum dma_data_direction dir,
				 bool for_cpu)
{
	if (for_cpu)
		dma_sync_single_for_cpu(dev, addr, len, dir);
	else
		dma_sync_single_for_device(dev, addr, len, dir);
}

/* Index of the chunk holding the 4 KiB page @index: binary search. */
static unsigned int chunk_of(const struct npu_mem_buf *buf, u64 index)
{
	unsigned int lo = 0, hi = buf->nr_chunks;

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (buf->chunks[mid].first <= index)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static u64 chunk_end(const struct npu_mem_buf *buf, unsigned int c)
{
	return ((u64)buf->chunks[c].first << PAGE_SHIFT) +
	       (PAGE_SIZE << buf->chunks[c].order);
}

/*
 * Cache maintenance on exactly [offset, end), in pieces that are both
 * physically contiguous (inside one CPU chunk) and contiguous in device
 * address space (inside one DMA segment).  A DMA segment alone is not
 * enough: an IOMMU merges chunks from anywhere in RAM into one segment,
 * and the DMA API translates only a sync's first address, then maintains
 * that many physically contiguous bytes from there.
 */
static int sync_pieces(struct npu_mem_buf *buf, const struct sg_table *sgt,
		       struct device *dev, u64 offset, u64 end,
		       enum dma_data_direction dir, bool for_cpu)
{
	unsigned int c = chunk_of(buf, offset >> PAGE_SHIFT), n = 0;
	struct scatterlist *sg = sgt->sgl;
	u64 seg_start = 0, pos = offset;
	unsigned int i = 0;

	/* The DMA segment holding @offset: segments cover the buffer in order. */
	while (seg_start + sg_dma_len(sg) <= offset) {
		seg_start += sg_dma_len(sg);
		sg = sg_next(sg);
		i++;
	}
	while (pos < end) {
		u64 seg_end = seg_start + sg_dma_len(sg);
		u64 to = min3(end, seg_end, chunk_end(buf, c));

		/* The segments and chunks cover the buffer: cannot happen. */
		if (WARN_ON_ONCE(to <= pos))
			return -EIO;
		npu_mem_sync_piece(dev, sg_dma_address(sg) + (pos - seg_start),
				   to - pos, dir, for_cpu);
		pos = to;
		if (pos == chunk_end(buf, c) && c + 1 < buf->nr_chunks)
			c++;
		if (pos == seg_end && ++i < sgt->nents) {
			seg_start = seg_end;
			sg = sg_next(sg);
		}
		if (!(++n & 255)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	return 0;
}

/*
 * The same range for every peer's view: each mapping may have its own
 * bounce buffers, and a non-coherent peer its own maintenance.  Under the
 * registry's lock, so that no peer is unmapped under a sync.
 */
static int sync_peers(struct npu_mem_buf *buf, u64 offset, u64 end,
		      enum dma_data_direction dir, bool for_cpu)
{
	struct npu_mem_peer_map *peer;
	int ret = 0;

	mutex_lock(&npu_mem_bufs_lock);
	list_for_each_entry(peer, &buf->peers, node) {
		ret = sync_pieces(buf, &peer->sgt, peer->dev, offset, end, dir,
				  for_cpu);
		if (ret)
			break;
	}
	mutex_unlock(&npu_mem_bufs_lock);
	return ret;
}

/**
 * npu_mem_buf_sync() - CPU cache maintenance for the NPU device's view
 * @buf: the buffer
 * @offset: first byte
 * @len: bytes, > 0, inside the buffer
 * @dir: the DMA API's direction
 * @for_cpu: true: the device wrote, the CPU will read; false: the reverse
 *
 * Return: 0, -EINVAL for a range outside the buffer, -ENODEV when the
 * device was removed, -EINTR on a fatal signal.
 */
int npu_mem_buf_sync(struct npu_mem_buf *buf, u64 offset, u64 len,
		     enum dma_data_direction dir, bool for_cpu)
{
	struct device *dev;
	int idx, ret = -ENODEV;

	if (npu_mem_buf_range_outside(buf, offset, len))
		return -EINVAL;
	/*
	 * A mapping the device only reads is synced in that direction only
	 * (the DMA API wants the mapping's own): for the CPU there is nothing
	 * to take back.
	 */
	if (buf_dma_dir(buf) == DMA_TO_DEVICE)
		dir = DMA_TO_DEVICE;

	/* Mapped for this device: a buffer of an older one was unmapped. */
	dev = npu_mem_dev_enter(buf->npu, &idx);
	if (dev && npu_mem_buf_mapped(buf))
		ret = sync_pieces(buf, &buf->sgt, dev, offset, offset + len, dir,
				  for_cpu);
	if (!ret && !list_empty(&buf->peers))
		ret = sync_peers(buf, offset, offset + len, dir, for_cpu);
	npu_mem_dev_exit(buf->npu, idx);
	return ret;
}

/**
 * npu_mem_buf_sync_request() - the SYNC ioctl's maintenance of one range
 * @buf: the buffer (not a foreign import)
 * @offset: first byte
 * @len: bytes
 * @direction: enum npu_mem_sync_dir
 * @reader: the caller's handle may not write, others may
 *	(npu_mem_handle_reader())
 *
 * Write back what the CPU wrote, then drop lines the device may change.
 * A reader's FROM_DEVICE is done as BIDIRECTIONAL: an invalidation alone
 * drops dirty lines on a non-coherent device, which would discard writes
 * the reader could not have made; written back first, nothing is lost.
 * A bounced buffer has no such order, as each direction copies one of its
 * two copies over the other (the pages over what the device wrote, or the
 * device's copy over what the CPU wrote): a reader may not sync it at all.
 *
 * Return: as npu_mem_buf_sync(), and -EACCES for a reader of a bounced
 * buffer.
 */
int npu_mem_buf_sync_request(struct npu_mem_buf *buf, u64 offset, u64 len,
			     u32 direction, bool reader)
{
	int ret = 0;

	if (npu_mem_buf_range_outside(buf, offset, len))
		return -EINVAL;
	if (reader) {
		if (READ_ONCE(buf->flags) & NPU_MEM_BUF_BOUNCED)
			return -EACCES;
		direction |= NPU_MEM_SYNC_TO_DEVICE;
	}
	if (direction & NPU_MEM_SYNC_TO_DEVICE)
		ret = npu_mem_buf_sync(buf, offset, len,
				       direction == NPU_MEM_SYNC_TO_DEVICE ?
				       DMA_TO_DEVICE : DMA_BIDIRECTIONAL, false);
	if (!ret && (direction & NPU_MEM_SYNC_FROM_DEVICE))
		ret = npu_mem_buf_sync(buf, offset, len,
				       direction == NPU_MEM_SYNC_FROM_DEVICE ?
				       DMA_FROM_DEVICE : DMA_BIDIRECTIONAL, true);
	return ret;
}

/* The 4 KiB page at @index of the buffer. */
struct page *npu_mem_buf_page(const struct npu_mem_buf *buf, u64 index)
{
	unsigned int c = chunk_of(buf, index);

	return nth_page(buf->chunks[c].page, index - buf->chunks[c].first);
}

/*
 * Map the buffer from byte @offset into @vma with ordinary PTEs.  Kept as
 * 4 KiB entries on purpose: PMD entries for device memory are PFN maps,
 * which get_user_pages() refuses, and O_DIRECT into the buffer matters more
 * than TLB reach (the CPU still enjoys the physically contiguous chunk).
 */
int npu_mem_buf_insert_pages(struct npu_mem_buf *buf,
			     struct vm_area_struct *vma, u64 offset)
{
	unsigned long addr = vma->vm_start;
	struct page *batch[64];
	u64 chunk_start = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < buf->nr_chunks && addr < vma->vm_end; i++) {
		const struct npu_mem_chunk *c = &buf->chunks[i];
		u64 chunk_size = PAGE_SIZE << c->order;
		unsigned long first, nr, j;

		if (offset >= chunk_start + chunk_size) {
			chunk_start += chunk_size;
			continue;
		}
		first = (max(offset, chunk_start) - chunk_start) >> PAGE_SHIFT;
		nr = min_t(unsigned long, (chunk_size >> PAGE_SHIFT) - first,
			   (vma->vm_end - addr) >> PAGE_SHIFT);
		for (j = 0; j < nr; ) {
			unsigned long n = min_t(unsigned long, nr - j,
						ARRAY_SIZE(batch));
			unsigned long k, left = n;

			for (k = 0; k < n; k++)
				batch[k] = nth_page(c->page, first + j + k);
			ret = vm_insert_pages(vma, addr, batch, &left);
			if (ret)
				return ret;
			addr += n << PAGE_SHIFT;
			j += n;
		}
		chunk_start += chunk_size;
		cond_resched();
	}
	return 0;
}
