// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU mappings of buffers.  Each VMA holds a buffer reference, so FREE or
 * close() of the file while mapped only drops the handle; the pages go when
 * the last VMA (or split piece of one) is unmapped.  Mappings are write-back
 * cached, shared, not inherited by fork() children (VM_DONTCOPY: device
 * memory belongs to the process that allocated it, as in ACL), and cannot
 * grow (VM_DONTEXPAND makes mremap() growth fail with -EFAULT).
 * madvise(MADV_DOFORK) clears VM_DONTCOPY, and refusing it would take
 * VM_IO, which get_user_pages() (O_DIRECT) refuses: a child that inherits
 * a mapping that way shares the pages, and ->open gives its copy a buffer
 * reference of its own.
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
 * Every page is inserted at mmap time; a fault only comes after the user
 * zapped PTEs (MADV_DONTNEED and friends).  Put the same page back, as a
 * normal page so get_user_pages() keeps working on it.
 */
static vm_fault_t fault_at(struct vm_fault *vmf, u64 index)
{
	struct vm_area_struct *vma = vmf->vma;
	struct npu_mem_buf *buf = vma->vm_private_data;
	int ret;

	if (index >= buf->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	ret = vm_insert_page(vma, vmf->address, npu_mem_buf_page(buf, index));
	if (ret == -ENOMEM)
		return VM_FAULT_OOM;
	if (ret && ret != -EBUSY)
		return VM_FAULT_SIGBUS;
	return VM_FAULT_NOPAGE;
}

/* Device-file mappings: page offsets are in the client's offset space. */
static vm_fault_t npu_mem_vm_fault(struct vm_fault *vmf)
{
	struct npu_mem_buf *buf = vmf->vma->vm_private_data;

	return fault_at(vmf, vmf->pgoff - buf->pgoff);
}

/* dma-buf mappings: page offsets are from the buffer's start. */
static vm_fault_t npu_mem_dmabuf_vm_fault(struct vm_fault *vmf)
{
	return fault_at(vmf, vmf->pgoff);
}

static const struct vm_operations_struct npu_mem_vm_ops = {
	.open = npu_mem_vm_open,
	.close = npu_mem_vm_close,
	.fault = npu_mem_vm_fault,
};

static const struct vm_operations_struct npu_mem_dmabuf_vm_ops = {
	.open = npu_mem_vm_open,
	.close = npu_mem_vm_close,
	.fault = npu_mem_dmabuf_vm_fault,
};

static vm_fault_t npu_mem_vm_sigbus(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct npu_mem_vm_failed_ops = {
	.fault = npu_mem_vm_sigbus,
};

/*
 * Map @buf from byte @offset into @vma.  Shared by the device file and by
 * dma-bufs (@dmabuf); takes its own buffer reference for the VMA.
 */
int npu_mem_mmap_buf(struct npu_mem_buf *buf, struct vm_area_struct *vma,
		     u64 offset, bool dmabuf)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	/* VM_MAYSHARE: read-only files' shared mappings lack VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (offset > buf->size || len > buf->size - offset)
		return -EINVAL;
	if (buf->flags & NPU_MEM_BUF_READONLY) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		npu_vm_flags_clear(vma, VM_MAYWRITE);
	}

	npu_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY |
			 VM_MIXEDMAP);
	npu_mem_buf_get(buf);
	vma->vm_private_data = buf;
	vma->vm_ops = dmabuf ? &npu_mem_dmabuf_vm_ops : &npu_mem_vm_ops;

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

int npu_mem_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct npu_mem_client *client = file->private_data;
	struct npu_mem_buf *buf;
	int ret;

	buf = npu_mem_client_lookup_pgoff(client, vma->vm_pgoff);
	if (!buf)
		return -EINVAL;
	ret = npu_mem_mmap_buf(buf, vma,
			       (u64)(vma->vm_pgoff - buf->pgoff) << PAGE_SHIFT,
			       false);
	npu_mem_buf_put(buf);
	return ret;
}
