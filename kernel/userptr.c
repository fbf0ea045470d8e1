// SPDX-License-Identifier: GPL-2.0-only
/*
 * Registered host memory (NPU_MEM_IOCTL_HOST_REGISTER): a range of the
 * caller's own memory, pinned for the long term and DMA-mapped for the NPU
 * device like a buffer's pages, so that SYNC, device removal and the test
 * DMA engine treat it as any other buffer (buffer.c does the mapping, the
 * accounting and, by the buffer's kind, the release).
 *
 * No memory is added: the pages are the process's, charged to its user's
 * RLIMIT_MEMLOCK count and its VmPin as a buffer's are, but not to the
 * global cap or usage.  The chunks are the pinned pages, one per
 * physically contiguous run inside one folio (a power of two of pages, so
 * a 2 MiB THP or hugetlb page registered whole is one chunk), otherwise
 * one per page.
 *
 * Before pinning, the VMAs under the range are checked so that the caller
 * gets the UAPI header's reasons (a hole, an I/O or PFN map, DAX, a shared
 * file mapping that long-term pins would break, our own mappings).  That
 * check is advisory: the mappings can change as soon as the mmap lock
 * drops, so a failed pin is classified again the same way, and a pin that
 * races with munmap simply pins what is there or fails with -EFAULT.
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
static int check_range(unsigned long start, unsigned long end, bool write)
{
	struct mm_struct *mm = current->mm;
	unsigned long pos = start;
	int ret;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	for (;;) {
		struct vm_area_struct *vma = find_vma(mm, pos);

		if (!vma || vma->vm_start > pos) {
			ret = -EFAULT;
			break;
		}
		ret = check_vma(vma, write);
		if (ret || vma->vm_end >= end)
			break;
		pos = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/*
 * A pin of [start, end) failed with @err (0: pinned nothing): the header's
 * reason if the mappings there now give one, else what the pin said, in
 * the header's terms.
 */
static int pin_error(int err, unsigned long start, unsigned long end,
		     bool write)
{
	int ret = check_range(start, end, write);

	if (ret)
		return ret;
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
	unsigned long end = addr + buf->size;

	while (done < npages) {
		unsigned int want = min_t(unsigned long, npages - done, PIN_BATCH);
		unsigned int got = 0;
		int ret = 0;

		/* The fast path may pin fewer than asked: go on from there. */
		while (got < want) {
			unsigned long at = addr + ((done + got) << PAGE_SHIFT);

			ret = pin_user_pages_fast(at, want - got, gup, pages + got);
			if (ret <= 0) {
				ret = pin_error(ret, at, end, write);
				break;
			}
			got += ret;
			ret = 0;
		}
		if (ret) {
			unpin_user_pages(pages, got);
			return ret;
		}
		add_chunks(buf, pages, got, done);
		done += got;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/**
 * npu_mem_buf_register() - pin and DMA-map a range of the caller's memory
 * @addr: start, page-aligned
 * @size: bytes, a non-zero multiple of the page size
 * @flags: NPU_MEM_HOST_*, already validated
 * @payer: who pays (RLIMIT_MEMLOCK): the file opener's credentials
 * @unlimited: the opener had CAP_IPC_LOCK
 *
 * Return: a buffer (NPU_MEM_BUF_HOST) with one reference, or an ERR_PTR:
 * -EINVAL, -E2BIG (over max_alloc), -EFAULT, -EOPNOTSUPP, -EEXIST,
 * -ENOMEM, -ENODEV, -EINTR (see the UAPI header).
 */
struct npu_mem_buf *npu_mem_buf_register(u64 addr, u64 size, u32 flags,
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
	if (ret)
		goto err;
	ret = npu_mem_buf_map(buf);
	if (ret)
		goto err;
	return buf;

err:
	npu_mem_buf_discard(buf);
	return ERR_PTR(ret);
}
