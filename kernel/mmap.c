// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU mappings of buffers.  Each VMA holds a buffer reference, so FREE or
 * close() of the file while mapped only drops the handle; the pages go when
 * the last VMA (or split piece of one) is unmapped.  Mappings are write-back
 * cached, shared, not inherited by fork() children (VM_DONTCOPY: device
 * memory belongs to the process that allocated it, as in ACL), and cannot
 * grow (VM_DONTEXPAND makes mremap() growth fail with -EFAULT; it also keeps
 * mlock() away, which would mark pages that are on no LRU list).
 * madvise(MADV_DOFORK) clears VM_DONTCOPY, and refusing it would take
 * VM_IO, which get_user_pages() (O_DIRECT) refuses: a child that inherits
 * a mapping that way shares the pages, and ->open gives its copy a buffer
 * reference of its own.  (Linux 7.x refuses MADV_DOFORK on VM_DONTEXPAND
 * mappings, so there they are never inherited.)
 *
 * Two ways to map, chosen per buffer:
 *  - a buffer with 2 MiB chunks is mapped on demand by the core fault path
 *    (mapping.c says why that gives one PMD per chunk): ->fault returns the
 *    page, the core maps it, and the chunk's first touch maps all 2 MiB.
 *    Such a VMA must not be VM_MIXEDMAP, which would make its PMDs
 *    "special" (never refcounted, split or zapped like pages);
 *  - a buffer of small pages only is inserted whole at mmap time
 *    (vm_insert_pages(), which makes the VMA VM_MIXEDMAP): one batched
 *    call costs less than a fault per 4 KiB page.
 */
#include <linux/fs.h>
#include <linux/mm.h>

#include "npu_mem.h"

static void npu_mem_vm_open(struct vm_area_struct *vma)
{
	/* A split or a moved copy of one of our VMAs: one more reference. */
	npu_mem_buf_get(vma->vm_private_data);
}

static void npu_mem_vm_close(struct vm_area_struct *vma)
{
	npu_mem_buf_put(vma->vm_private_data);
}

/*
 * Inserted mappings: a fault only comes after the user zapped PTEs
 * (MADV_DONTNEED and friends).  Put the same page back, as a normal page
 * so get_user_pages() keeps working on it.  Page offsets are from the
 * buffer's start: mmap made them so for the device file too.
 */
static vm_fault_t npu_mem_vm_insert_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct npu_mem_buf *buf = vma->vm_private_data;
	int ret;

	if (vmf->pgoff >= buf->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	ret = vm_insert_page(vma, vmf->address,
			     npu_mem_buf_page(buf, vmf->pgoff));
	if (ret == -ENOMEM)
		return VM_FAULT_OOM;
	if (ret && ret != -EBUSY)
		return VM_FAULT_SIGBUS;
	return VM_FAULT_NOPAGE;
}

/*
 * Mappings of 2 MiB chunks: hand the page to the core with a reference,
 * which the page-table entry keeps.  For a page of a 2 MiB chunk whose
 * whole span fits the VMA at a 2 MiB-aligned address, the core maps the
 * chunk with one PMD; anything else gets a PTE.
 */
static vm_fault_t npu_mem_vm_page_fault(struct vm_fault *vmf)
{
	struct npu_mem_buf *buf = vmf->vma->vm_private_data;
	struct page *page;

	if (vmf->pgoff >= buf->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	page = npu_mem_buf_page(buf, vmf->pgoff);
	get_page(page);
	vmf->page = page;
	return 0;
}

/*
 * NUMA balancing scans a VMA whose policy may move pages, and would keep
 * making hinting faults on pages that can never move (they are on no LRU
 * list): no policy, no scan.
 */
#ifdef CONFIG_NUMA
static struct mempolicy *npu_mem_vm_get_policy(NPU_GET_POLICY_ARGS)
{
	return NULL;
}
#endif

static const struct vm_operations_struct npu_mem_vm_insert_ops = {
	.open = npu_mem_vm_open,
	.close = npu_mem_vm_close,
	.fault = npu_mem_vm_insert_fault,
};

static const struct vm_operations_struct npu_mem_vm_page_ops = {
	.open = npu_mem_vm_open,
	.close = npu_mem_vm_close,
	.fault = npu_mem_vm_page_fault,
#ifdef CONFIG_NUMA
	.get_policy = npu_mem_vm_get_policy,
#endif
};

static vm_fault_t npu_mem_vm_sigbus(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct npu_mem_vm_failed_ops = {
	.fault = npu_mem_vm_sigbus,
};

/*
 * Map @buf from page vma->vm_pgoff on into @vma.  Shared by the device
 * file and by dma-bufs; takes its own buffer reference for the VMA.
 */
int npu_mem_mmap_buf(struct npu_mem_buf *buf, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 offset = (u64)vma->vm_pgoff << PAGE_SHIFT;
	int ret;

	/* VM_MAYSHARE: read-only files' shared mappings lack VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* Registered host memory is the process's own: nothing to map. */
	if (buf->flags & NPU_MEM_BUF_HOST)
		return -EINVAL;
	if (offset > buf->size || len > buf->size - offset)
		return -EINVAL;
	if (buf->flags & NPU_MEM_BUF_READONLY) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		npu_vm_flags_clear(vma, VM_MAYWRITE);
	}

	npu_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	npu_mem_buf_get(buf);
	vma->vm_private_data = buf;
	if (buf->nr_huge) {
		vma->vm_ops = &npu_mem_vm_page_ops;
		return 0;
	}

	npu_vm_flags_set(vma, VM_MIXEDMAP);
	vma->vm_ops = &npu_mem_vm_insert_ops;
	ret = npu_mem_buf_insert_pages(buf, vma, offset);
	if (ret) {
		/*
		 * The caller unmaps what was inserted, but kernels differ on
		 * whether it calls ->close on this path: detach and drop the
		 * reference here instead.
		 */
		vma->vm_ops = &npu_mem_vm_failed_ops;
		vma->vm_private_data = NULL;
		npu_mem_buf_put(buf);
	}
	return ret;
}

/*
 * The device file's offsets name handles; from here on the VMA's page
 * offsets are the buffer's own, as for a dma-buf, so one buffer mapped
 * through several handles (IPC imports) faults the same way everywhere.
 */
int npu_mem_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct npu_mem_client *client = file->private_data;
	struct npu_mem_buf *buf;
	u32 hflags;
	u64 first;
	int ret;

	buf = npu_mem_client_lookup_pgoff(client, vma->vm_pgoff, &first,
					  &hflags);
	if (!buf)
		return -EINVAL;
	vma->vm_pgoff -= first;
	/*
	 * A handle without write access maps read-only for good, whoever
	 * maps the pages (us or a foreign exporter's dma_buf_mmap(), which
	 * checks no file mode): no mprotect() can add PROT_WRITE later.
	 */
	if (npu_mem_handle_readonly(buf, hflags)) {
		if (vma->vm_flags & VM_WRITE) {
			npu_mem_buf_put(buf);
			return -EACCES;
		}
		npu_vm_flags_clear(vma, VM_MAYWRITE);
	}
	if (!(vma->vm_flags & VM_MAYSHARE))
		ret = -EINVAL;		/* the rule for every mapping of ours */
	else if (buf->flags & NPU_MEM_BUF_FOREIGN)
		ret = buf->foreign_ops->mmap(buf, vma);
	else
		ret = npu_mem_mmap_buf(buf, vma);
	npu_mem_buf_put(buf);
	return ret;
}
