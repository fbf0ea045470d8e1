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
 */
#include <linux/dma-mapping.h>
#include <linux/dma-map-ops.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/capability.h>

#include "npu_mem.h"

/*
 * Reclaim is off for the 2 MiB attempts: a huge page either is free now or
 * the chunk falls back (HUGE_FIRST) or the call fails (HUGE_ONLY), and we
 * never stall in compaction or wake the OOM killer for one (as the system
 * dma-heap does).  Under memory pressure, direct compaction for order 9 is
 * what turned a test guest's HUGE_ONLY loop into soft lockups.
 */
#define HUGE_GFP	((GFP_HIGHUSER | __GFP_ZERO | __GFP_COMP | __GFP_NOWARN | \
			  __GFP_NORETRY | __GFP_ACCOUNT) & ~__GFP_RECLAIM)
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
 * Device address ranges: DMA segments that abut count as one range.  The
 * callback sees each maximal range once, in buffer order; it returns true
 * to stop the walk.
 */
static bool for_each_dma_range(const struct npu_mem_buf *buf,
			       bool (*fn)(u64 start, u64 len, void *arg),
			       void *arg)
{
	u64 start = 0, len = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(&buf->sgt, sg, i) {
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

static bool dma_range_in_buf(const struct npu_mem_buf *buf, u64 addr, u64 len)
{
	struct dma_span want = { addr, len };

	return for_each_dma_range(buf, range_holds, &want);
}

static bool dma_range_live(u64 addr, u64 len)
{
	struct npu_mem_buf *buf;

	list_for_each_entry(buf, &npu_mem_bufs, node)
		if (dma_range_in_buf(buf, addr, len))
			return true;
	return false;
}

/**
 * npu_mem_dma_range_lock() - check two device ranges are inside live buffers
 * @a: first range's device address
 * @alen: its length
 * @b: second range's device address
 * @blen: its length
 *
 * On success the buffer registry stays locked, so no buffer can be unmapped
 * until npu_mem_dma_range_unlock(); on failure (-EINVAL) it is unlocked.
 */
int npu_mem_dma_range_lock(u64 a, u64 alen, u64 b, u64 blen)
{
	mutex_lock(&npu_mem_bufs_lock);
	if (dma_range_live(a, alen) && dma_range_live(b, blen))
		return 0;
	mutex_unlock(&npu_mem_bufs_lock);
	return -EINVAL;
}

void npu_mem_dma_range_unlock(void)
{
	mutex_unlock(&npu_mem_bufs_lock);
}

static int charge_pinned(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	/* Always counted (VmPin in /proc/pid/status), enforced as for mlock. */
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

static int charge_global(u64 bytes)
{
	u64 limit = npu_mem_limit_bytes();

	if (atomic64_add_return(bytes, &npu_mem_usage.bytes) > limit) {
		atomic64_sub(bytes, &npu_mem_usage.bytes);
		return -ENOMEM;
	}
	return 0;
}

static void free_chunks(struct npu_mem_buf *buf)
{
	unsigned int i;

	/*
	 * put_page(), not __free_pages(): a get_user_pages() user of the
	 * mapping (an O_DIRECT read in flight) may still hold a reference.
	 */
	for (i = 0; i < buf->nr_chunks; i++) {
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
			page = alloc_pages(HUGE_GFP, order);
			if (!page && buf->policy == NPU_MEM_POLICY_HUGE_ONLY)
				return -ENOMEM;
			if (!page)
				small = NPU_MEM_HUGE_SIZE;
		}
		/* Once a block cannot be had, the rest would fail as well. */
		if (!page && try_mid && remaining >= (PAGE_SIZE << MID_ORDER)) {
			order = MID_ORDER;
			page = alloc_pages(HUGE_GFP, order);
			try_mid = !!page;
		}
		if (!page) {
			order = 0;
			page = alloc_page(NORMAL_GFP);
			if (!page)
				return -ENOMEM;
		}

		buf->chunks[buf->nr_chunks].page = page;
		buf->chunks[buf->nr_chunks].order = order;
		buf->chunks[buf->nr_chunks].first =
			(buf->size - remaining) >> PAGE_SHIFT;
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

static int map_for_device(struct npu_mem_buf *buf)
{
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	ret = sg_alloc_table(&buf->sgt, buf->nr_chunks, GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(&buf->sgt, sg, i)
		sg_set_page(sg, buf->chunks[i].page,
			    PAGE_SIZE << buf->chunks[i].order, 0);

	/*
	 * Not DMA_ATTR_SKIP_CPU_SYNC: on a non-coherent device the zeroes
	 * written through the CPU cache must reach memory before the device
	 * reads it.  Under an IOMMU, dma-iommu gives the list one IOVA range.
	 */
	ret = dma_map_sgtable(npu_mem_dma_dev(), &buf->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret) {
		sg_free_table(&buf->sgt);
		return ret;
	}
	for_each_dma_range(buf, count_range, &buf->dev_ranges);
	if (buf->dev_ranges == 1)
		buf->flags |= NPU_MEM_BUF_DEV_CONTIG;
	return 0;
}

/**
 * npu_mem_buf_alloc() - allocate, zero, pin and DMA-map a buffer
 * @size: bytes wanted, non-zero
 * @policy: enum npu_mem_policy, already validated
 * @flags: NPU_MEM_ALLOC_*, already validated
 *
 * Return: the buffer with one reference, or an ERR_PTR (see the UAPI header).
 */
struct npu_mem_buf *npu_mem_buf_alloc(u64 size, u32 policy, u32 flags)
{
	u64 align = policy == NPU_MEM_POLICY_HUGE_ONLY ? NPU_MEM_HUGE_SIZE : PAGE_SIZE;
	struct npu_mem_buf *buf;
	int ret;

	if (size > U64_MAX - (align - 1))
		return ERR_PTR(-E2BIG);
	size = round_up(size, align);
	if (size > npu_mem_limit_bytes())
		return ERR_PTR(-E2BIG);
	if (policy == NPU_MEM_POLICY_HUGE1G_ONLY)
		return ERR_PTR(-EOPNOTSUPP);	/* alloc_contig_pages() is not exported */

	buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	kref_init(&buf->ref);
	mutex_init(&buf->imports_lock);
	INIT_LIST_HEAD(&buf->imports);
	buf->size = size;
	buf->policy = policy;
	if (flags & NPU_MEM_ALLOC_READONLY)
		buf->flags |= NPU_MEM_BUF_READONLY;

	ret = charge_global(size);
	if (ret)
		goto err_free_buf;

	buf->mm = current->mm;
	mmgrab(buf->mm);
	ret = charge_pinned(buf->mm, size >> PAGE_SHIFT);
	if (ret)
		goto err_uncharge_global;

	buf->max_chunks = chunks_if_huge(size, policy);
	buf->chunks = kvmalloc_array(buf->max_chunks, sizeof(*buf->chunks),
				     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!buf->chunks) {
		ret = -ENOMEM;
		goto err_uncharge_pinned;
	}

	ret = alloc_chunks(buf);
	if (ret)
		goto err_free_chunks;

	ret = map_for_device(buf);
	if (ret)
		goto err_free_chunks;

	atomic64_add(buf->nr_huge, &npu_mem_usage.huge_pages);
	atomic64_add(buf->nr_normal, &npu_mem_usage.normal_pages);
	atomic64_inc(&npu_mem_usage.buffers);
	mutex_lock(&npu_mem_bufs_lock);
	list_add(&buf->node, &npu_mem_bufs);
	mutex_unlock(&npu_mem_bufs_lock);
	return buf;

err_free_chunks:
	free_chunks(buf);
	kvfree(buf->chunks);
err_uncharge_pinned:
	atomic64_sub(size >> PAGE_SHIFT, &buf->mm->pinned_vm);
err_uncharge_global:
	mmdrop(buf->mm);
	atomic64_sub(size, &npu_mem_usage.bytes);
err_free_buf:
	mutex_destroy(&buf->imports_lock);
	kfree(buf);
	return ERR_PTR(ret);
}

static void npu_mem_buf_release(struct kref *ref)
{
	struct npu_mem_buf *buf = container_of(ref, struct npu_mem_buf, ref);

	mutex_lock(&npu_mem_bufs_lock);
	list_del(&buf->node);
	mutex_unlock(&npu_mem_bufs_lock);
	dma_unmap_sgtable(npu_mem_dma_dev(), &buf->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&buf->sgt);
	free_chunks(buf);
	kvfree(buf->chunks);

	atomic64_sub(buf->size >> PAGE_SHIFT, &buf->mm->pinned_vm);
	mmdrop(buf->mm);
	atomic64_sub(buf->nr_huge, &npu_mem_usage.huge_pages);
	atomic64_sub(buf->nr_normal, &npu_mem_usage.normal_pages);
	atomic64_dec(&npu_mem_usage.buffers);
	atomic64_sub(buf->size, &npu_mem_usage.bytes);
	mutex_destroy(&buf->imports_lock);
	kfree(buf);
}

void npu_mem_buf_put(struct npu_mem_buf *buf)
{
	kref_put(&buf->ref, npu_mem_buf_release);
}

void npu_mem_buf_describe(const struct npu_mem_buf *buf,
			  struct npu_mem_buffer *out)
{
	bool hide = !(npu_mem_dev_flags() & NPU_MEM_DEV_IOMMU) &&
		    !capable(CAP_SYS_ADMIN);

	memset(out, 0, sizeof(*out));
	out->size = buf->size;
	out->mmap_offset = (u64)buf->pgoff << PAGE_SHIFT;
	/* Without an IOMMU the DMA address is the physical one: root only. */
	out->dev_addr = hide ? 0 : sg_dma_address(buf->sgt.sgl);
	out->huge_pages = buf->nr_huge;
	out->normal_pages = buf->nr_normal;
	out->policy = buf->policy;
	out->flags = buf->flags | (hide ? NPU_MEM_BUF_DEV_HIDDEN : 0);
	out->dev_segments = buf->dev_ranges;
}

/*
 * Cache maintenance on exactly [offset, offset + len): walk the DMA
 * segments, which cover the buffer in order, and sync the overlap of each.
 */
int npu_mem_buf_sync(struct npu_mem_buf *buf, u64 offset, u64 len,
		     enum dma_data_direction dir, bool for_cpu)
{
	struct device *dev = npu_mem_dma_dev();
	struct scatterlist *sg;
	u64 seg_start = 0, end;
	unsigned int i;

	if (!len || check_add_overflow(offset, len, &end) || end > buf->size)
		return -EINVAL;

	for_each_sgtable_dma_sg(&buf->sgt, sg, i) {
		u64 seg_end = seg_start + sg_dma_len(sg);
		u64 from = max(offset, seg_start), to = min(end, seg_end);

		if (from < to) {
			if (for_cpu)
				dma_sync_single_range_for_cpu(dev, sg_dma_address(sg),
							      from - seg_start,
							      to - from, dir);
			else
				dma_sync_single_range_for_device(dev, sg_dma_address(sg),
								 from - seg_start,
								 to - from, dir);
		}
		if (seg_end >= end)
			break;
		seg_start = seg_end;
	}
	return 0;
}

/* The 4 KiB page at @index of the buffer: binary search over the chunks. */
struct page *npu_mem_buf_page(const struct npu_mem_buf *buf, u64 index)
{
	unsigned int lo = 0, hi = buf->nr_chunks;

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (buf->chunks[mid].first <= index)
			lo = mid;
		else
			hi = mid;
	}
	return nth_page(buf->chunks[lo].page, index - buf->chunks[lo].first);
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
