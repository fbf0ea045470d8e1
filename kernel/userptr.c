// SPDX-License-Identifier: GPL-2.0-only
/*
 * Registered host memory (NPU_MEM_IOCTL_HOST_REGISTER): a range of the
 * caller's own memory, pinned for the long term and DMA-mapped for the NPU
 * the caller names, like a buffer's pages, so that SYNC, device removal
 * and the test DMA engine treat it as any other buffer (buffer.c does the
 * mapping, the accounting and, by the buffer's kind, the release).
 *
 * No memory is added: the pages are the process's, charged to its user's
 * RLIMIT_MEMLOCK count and its VmPin as a buffer's are, but not to the
 * global cap or usage.  The chunks are the pinned pages, one per
 * physically contiguous run inside one folio (a power of two of pages, so
 * a 2 MiB THP or hugetlb page registered whole is one chunk), otherwise
 * one per page.
 *
 * The VMAs under the range decide what may be pinned (a hole, an I/O or
 * PFN map, DAX, a shared file mapping that long-term pins would break, our
 * own mappings: the UAPI header's reasons).  The decision only holds while
 * the mmap lock is held: another thread's mmap(MAP_FIXED) may put a shared
 * file mapping where anonymous memory was checked a moment before.  So each
 * batch is checked and pinned under one hold of the lock, with
 * pin_user_pages(), which never drops it: what is pinned is what was
 * checked.  A first check of the whole range, before anything is charged,
 * only makes the answer the same whatever the batch it would come from.
 * A pin that races with munmap pins what was there or fails with -EFAULT.
 * A writable registration's pages are claimed before they are mapped for
 * the device (claim.c says why a page is claimed once).
 */
#include <linux/fs.h>
#include <linux/hugetlb.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include "npu_mem.h"

/* Pages pinned per call: bounds the page array and the time between checks. */
#define PIN_BATCH	512

/*
 * npu-mem's own mappings, of the device file or of a dma-buf it exported:
 * both carry this module's vm_operations.  Their pages have a device
 * address already, and a registration would hold them past FREE.
 */
static bool own_vma(struct vm_area_struct *vma)
{
	if (vma->vm_file && vma->vm_file->f_op->mmap == npu_mem_mmap)
		return true;
	return vma->vm_ops &&
	       within_module((unsigned long)vma->vm_ops, THIS_MODULE);
}

/*
 * Long-term pins of page cache pages under a shared mapping defeat the
 * filesystem's writeback (the device writes behind its back); shmem and
 * hugetlbfs have no writeback to defeat.  Private file mappings are fine:
 * written pages are anonymous copies, read-only ones are only read.
 */
static bool shared_file_unpinnable(struct vm_area_struct *vma)
{
	return vma->vm_file && (vma->vm_flags & VM_MAYSHARE) &&
	       !is_vm_hugetlb_page(vma) &&
	       !shmem_mapping(vma->vm_file->f_mapping);
}

static int check_vma(struct vm_area_struct *vma, bool write)
{
	if (own_vma(vma))
		return -EEXIST;
	if ((vma->vm_flags & (VM_IO | VM_PFNMAP)) || vma_is_dax(vma) ||
	    shared_file_unpinnable(vma))
		return -EOPNOTSUPP;
	/* What get_user_pages() itself refuses without FOLL_FORCE. */
	if (!(vma->vm_flags & VM_READ) || (write && !(vma->vm_flags & VM_WRITE)))
		return -EFAULT;
	return 0;
}

/* Every byte of [start, end) mapped, by VMAs we may pin: 0 or the reason. */
static int check_range_locked(struct mm_struct *mm, unsigned long start,
			      unsigned long end, bool write)
{
	unsigned long pos = start;

	/*
	 * Not mmap_assert_locked(): with CONFIG_DEBUG_VM its VM_BUG_ON_MM()
	 * calls dump_mm(), which 6.1 does not export, and the module would
	 * not load on such a (debug) kernel.
	 */
	lockdep_assert_held(&mm->mmap_lock);
	for (;;) {
		struct vm_area_struct *vma = find_vma(mm, pos);
		int ret;

		if (!vma || vma->vm_start > pos)
			return -EFAULT;
		ret = check_vma(vma, write);
		if (ret || vma->vm_end >= end)
			return ret;
		pos = vma->vm_end;
	}
}

static int check_range(unsigned long start, unsigned long end, bool write)
{
	struct mm_struct *mm = current->mm;
	int ret;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = check_range_locked(mm, start, end, write);
	mmap_read_unlock(mm);
	return ret;
}

/*
 * A pin of VMAs check_range_locked() accepted, under the same lock hold,
 * failed with @err (0: pinned nothing): what GUP said, in the header's terms.
 */
static int pin_error(int err)
{
	switch (err) {
	case -EOPNOTSUPP:
	case -ENOMEM:
	case -EINTR:
		return err;
	case -ENOSPC:	/* could not migrate out of ZONE_MOVABLE/CMA */
	case -EBUSY:
	case -EAGAIN:
		return -ENOMEM;
	default:	/* 0, -EFAULT, -EHWPOISON, anything unexpected */
		return -EFAULT;
	}
}

/*
 * Checks [addr, +@n pages) and pins it into @pages under one hold of the
 * mmap lock: 0 with all @n pinned, or the reason with none.
 */
static int pin_batch(unsigned long addr, unsigned int n, unsigned int gup,
		     struct page **pages)
{
	struct mm_struct *mm = current->mm;
	unsigned int got = 0;
	int ret;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = check_range_locked(mm, addr, addr + ((unsigned long)n << PAGE_SHIFT),
				 gup & FOLL_WRITE);
	/* A fault that fails part way pins the pages before it: go on from there. */
	while (!ret && got < n) {
		long pinned = pin_user_pages(addr + ((unsigned long)got << PAGE_SHIFT),
					     n - got, gup, pages + got);

		if (pinned <= 0)
			ret = pin_error(pinned);
		else
			got += pinned;
	}
	mmap_read_unlock(mm);
	if (ret)
		unpin_user_pages(pages, got);
	return ret;
}

/*
 * @n pinned pages, the buffer's from index @first on, as chunks: runs of
 * pages that follow each other physically inside one folio, cut to powers
 * of two (a chunk is PAGE_SIZE << order bytes).
 */
static void add_chunks(struct npu_mem_buf *buf, struct page **pages,
		       unsigned int n, u32 first)
{
	unsigned int i = 0;

	while (i < n) {
		struct folio *folio = page_folio(pages[i]);
		struct npu_mem_chunk *c = &buf->chunks[buf->nr_chunks++];
		unsigned int run = 1;

		while (i + run < n && pages[i + run] == nth_page(pages[i], run) &&
		       page_folio(pages[i + run]) == folio)
			run++;
		c->page = pages[i];
		c->order = ilog2(run);
		c->first = first + i;
		i += 1U << c->order;
	}
}

static int pin_all(struct npu_mem_buf *buf, unsigned long addr, bool write,
		   struct page **pages)
{
	unsigned int gup = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	unsigned long npages = buf->size >> PAGE_SHIFT, done = 0;

	while (done < npages) {
		unsigned int n = min_t(unsigned long, npages - done, PIN_BATCH);
		int ret = pin_batch(addr + (done << PAGE_SHIFT), n, gup, pages);

		if (ret)
			return ret;
		add_chunks(buf, pages, n, done);
		done += n;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/**
 * npu_mem_buf_register() - pin and DMA-map a range of the caller's memory
 * @npu: the NPU to map it for
 * @addr: start, page-aligned
 * @size: bytes, a non-zero multiple of the page size
 * @flags: NPU_MEM_HOST_*, already validated
 * @payer: who pays (RLIMIT_MEMLOCK): the file opener's credentials
 * @unlimited: the opener had CAP_IPC_LOCK
 *
 * Return: a buffer (NPU_MEM_BUF_HOST) with one reference, or an ERR_PTR:
 * -EINVAL, -E2BIG (over max_alloc), -EFAULT, -EOPNOTSUPP, -EEXIST (our own
 * mappings; a page another writable registration claimed), -ENOMEM,
 * -ENODEV, -EINTR (see the UAPI header).
 */
struct npu_mem_buf *npu_mem_buf_register(struct npu_mem_npu *npu, u64 addr,
					 u64 size, u32 flags,
					 const struct cred *payer,
					 bool unlimited)
{
	bool write = !(flags & NPU_MEM_HOST_READONLY);
	struct npu_mem_buf *buf;
	struct page **pages;
	u64 end;
	int ret;

	if (!size || !PAGE_ALIGNED(addr) || !PAGE_ALIGNED(size) ||
	    check_add_overflow(addr, size, &end))
		return ERR_PTR(-EINVAL);
	if (size > npu_mem_max_alloc())
		return ERR_PTR(-E2BIG);
	/* Past the user address space: nothing can be mapped there. */
	if (end > TASK_SIZE)
		return ERR_PTR(-EFAULT);
	/*
	 * As ALLOC: a removed device is the answer before anything is pinned
	 * or charged, which could fail first and hide why.  A removal after
	 * this is caught by npu_mem_buf_map().
	 */
	if (npu_mem_dev_flags(npu) & NPU_MEM_DEV_REMOVED)
		return ERR_PTR(-ENODEV);

	buf = npu_mem_buf_new(size, NPU_MEM_POLICY_NORMAL_ONLY,
			      NPU_MEM_BUF_HOST |
			      (write ? 0 : NPU_MEM_BUF_READONLY));
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->nr_normal = size >> PAGE_SHIFT;

	ret = check_range(addr, end, write);
	if (ret)
		goto err;
	ret = npu_mem_buf_charge(buf, payer, unlimited);
	if (ret)
		goto err;
	/* One chunk per page at worst; coalesced runs leave some unused. */
	buf->max_chunks = size >> PAGE_SHIFT;
	buf->chunks = kvmalloc_array(buf->max_chunks, sizeof(*buf->chunks),
				     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	pages = kmalloc_array(PIN_BATCH, sizeof(*pages), GFP_KERNEL);
	ret = buf->chunks && pages ? pin_all(buf, addr, write, pages) : -ENOMEM;
	kfree(pages);
	if (!ret && write)
		ret = npu_mem_claim_pages(buf);
	if (ret)
		goto err;
	ret = npu_mem_buf_map(buf, npu);
	if (ret)
		goto err;
	return buf;

err:
	npu_mem_buf_discard(buf);
	return ERR_PTR(ret);
}
