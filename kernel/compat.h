/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one place where kernel-version and architecture differences live.
 * Everything else in the module is written against the newest kernel's API
 * and reaches older kernels through the wrappers below.
 */
#ifndef _NPU_MEM_COMPAT_H
#define _NPU_MEM_COMPAT_H

#include <linux/version.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/module.h>

/* vm_flags became write-protected behind helpers in 6.3. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void npu_vm_flags_set(struct vm_area_struct *vma, vm_flags_t f)
{
	vma->vm_flags |= f;
}

static inline void npu_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t f)
{
	vma->vm_flags &= ~f;
}
#else
#define npu_vm_flags_set	vm_flags_set
#define npu_vm_flags_clear	vm_flags_clear
#endif

/*
 * Let an IOMMU merge a buffer into one device address segment (the default
 * caps segments at 64 KiB).  The setters stopped returning errors in 6.11.
 */
static inline int npu_dma_set_seg_limits(struct device *dev)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
	int ret = dma_set_max_seg_size(dev, UINT_MAX);

	return ret ? ret : dma_set_seg_boundary(dev, ULONG_MAX);
#else
	dma_set_max_seg_size(dev, UINT_MAX);
	dma_set_seg_boundary(dev, ULONG_MAX);
	return 0;
#endif
}

/* Symbol namespaces are strings from 6.13 on. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define NPU_MEM_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS(DMA_BUF)
#else
#define NPU_MEM_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS("DMA_BUF")
#endif

/* ->get_policy learnt to return an interleave index in 6.7. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
#define NPU_GET_POLICY_ARGS	struct vm_area_struct *vma, unsigned long addr
#else
#define NPU_GET_POLICY_ARGS	struct vm_area_struct *vma, unsigned long addr, \
				pgoff_t *ilx
#endif

/*
 * Static importers map without holding the reservation lock: the locking
 * variants were split out in 6.2, and before that the plain calls took it
 * themselves for static attachments.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define npu_dma_buf_map_unlocked	dma_buf_map_attachment
#define npu_dma_buf_unmap_unlocked	dma_buf_unmap_attachment
#else
#define npu_dma_buf_map_unlocked	dma_buf_map_attachment_unlocked
#define npu_dma_buf_unmap_unlocked	dma_buf_unmap_attachment_unlocked
#endif

/*
 * The "huge" chunk is the size one PMD maps with 4 KiB base pages: 2 MiB on
 * x86_64 and on arm64 with 4 KiB pages.  Other page sizes are not supported.
 */
#if PAGE_SHIFT != 12
#error "npu-mem supports 4 KiB base pages only"
#endif
#define NPU_MEM_HUGE_SHIFT	21
#define NPU_MEM_HUGE_ORDER	(NPU_MEM_HUGE_SHIFT - PAGE_SHIFT)
#define NPU_MEM_HUGE_SIZE	(1UL << NPU_MEM_HUGE_SHIFT)

#endif /* _NPU_MEM_COMPAT_H */
