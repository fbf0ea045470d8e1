// SPDX-License-Identifier: GPL-2.0-only
/*
 * dma-buf export.  The dma-buf holds one buffer reference, so the buffer
 * outlives its handle for as long as any importer or fd has the dma-buf.
 * Importers get their own DMA mapping of the same pages; begin/end CPU
 * access (DMA_BUF_IOCTL_SYNC) sync the NPU device's mapping and theirs.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fcntl.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "npu_mem.h"

NPU_MEM_IMPORT_NS_DMA_BUF();

/*
 * One importer's DMA mapping of the buffer, on the buffer's imports list.
 * @shadow is a copy of the mapped table for syncing: while the importer
 * holds @sgt, CONFIG_DMABUF_DEBUG scrambles its page links.  Syncing goes
 * through the sg calls, not per segment, because DMA-API debugging cannot
 * tell a segment apart when a device maps the same pages twice (two
 * dma-bufs of one buffer imported by one device) unless the sync matches
 * the mapping call exactly.
 */
struct npu_mem_import {
	struct sg_table sgt;
	struct sg_table shadow;
	struct device *dev;
	enum dma_data_direction dir;
	struct list_head node;
};

/* Same size, so both tables chain at the same entries. */
static int npu_mem_import_shadow(struct npu_mem_import *imp)
{
	struct scatterlist *src, *dst;
	unsigned int i;
	int ret;

	ret = sg_alloc_table(&imp->shadow, imp->sgt.orig_nents,
			     GFP_KERNEL | __GFP_NOWARN);
	if (ret)
		return ret;
	dst = imp->shadow.sgl;
	for_each_sgtable_sg(&imp->sgt, src, i) {
		*dst = *src;
		dst = sg_next(dst);
	}
	imp->shadow.nents = imp->sgt.nents;
	return 0;
}

/*
 * The importer's table, its entries cut to what its device takes in one
 * segment: the buffer's 2 MiB chunks are longer than many devices' default
 * 64 KiB (vgem's among them).
 */
static int npu_mem_import_table(struct npu_mem_buf *buf, struct device *dev,
				struct sg_table *sgt)
{
	unsigned int max_seg = max_t(unsigned int, PAGE_SIZE,
				     round_down(dma_get_max_seg_size(dev), PAGE_SIZE));
	struct scatterlist *src, *dst;
	unsigned int i, nents = 0;
	int ret;

	for_each_sgtable_sg(&buf->sgt, src, i)
		nents += DIV_ROUND_UP(src->length, max_seg);
	ret = sg_alloc_table(sgt, nents, GFP_KERNEL | __GFP_NOWARN);
	if (ret)
		return ret;
	dst = sgt->sgl;
	for_each_sgtable_sg(&buf->sgt, src, i) {
		unsigned int off;

		for (off = 0; off < src->length; off += max_seg) {
			sg_set_page(dst, nth_page(sg_page(src), off >> PAGE_SHIFT),
				    min(src->length - off, max_seg), 0);
			dst = sg_next(dst);
		}
	}
	return 0;
}

/*
 * Mapped with DMA_ATTR_SKIP_CPU_SYNC, then synced: the pages are already
 * mapped for the NPU device, and DMA-API debugging takes a second cacheable
 * mapping of the same cache lines for a bug unless the mapping skips its own
 * CPU sync (as DRM PRIME's exporters do).  The explicit sync is the cache
 * maintenance the mapping skipped.
 */
static struct sg_table *npu_mem_dmabuf_map(struct dma_buf_attachment *att,
					   enum dma_data_direction dir)
{
	struct npu_mem_buf *buf = att->dmabuf->priv;
	struct npu_mem_import *imp;
	int ret;

	/* Once the NPU device is gone, so is what an importer would share. */
	if (!npu_mem_buf_mapped(buf))
		return ERR_PTR(-ENODEV);
	imp = kzalloc(sizeof(*imp), GFP_KERNEL);
	if (!imp)
		return ERR_PTR(-ENOMEM);
	ret = npu_mem_import_table(buf, att->dev, &imp->sgt);
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(att->dev, &imp->sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto err_table;
	ret = npu_mem_import_shadow(imp);
	if (ret)
		goto err_unmap;
	dma_sync_sgtable_for_device(att->dev, &imp->sgt, dir);
	imp->dev = att->dev;
	imp->dir = dir;
	mutex_lock(&buf->imports_lock);
	list_add(&imp->node, &buf->imports);
	mutex_unlock(&buf->imports_lock);
	return &imp->sgt;

err_unmap:
	dma_unmap_sgtable(att->dev, &imp->sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
err_table:
	sg_free_table(&imp->sgt);
err_free:
	kfree(imp);
	return ERR_PTR(ret);
}

static void npu_mem_dmabuf_unmap(struct dma_buf_attachment *att,
				 struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	struct npu_mem_import *imp = container_of(sgt, struct npu_mem_import, sgt);
	struct npu_mem_buf *buf = att->dmabuf->priv;

	mutex_lock(&buf->imports_lock);
	list_del(&imp->node);
	mutex_unlock(&buf->imports_lock);
	dma_unmap_sgtable(att->dev, sgt, dir, 0);
	sg_free_table(sgt);
	sg_free_table(&imp->shadow);
	kfree(imp);
}

static void npu_mem_dmabuf_release(struct dma_buf *dmabuf)
{
	npu_mem_buf_put(dmabuf->priv);
}

/*
 * DMA_BUF_IOCTL_SYNC and in-kernel CPU access: the NPU device's mapping and
 * every importer's.  An importer's mapping is synced in its own direction
 * (DMA-API rules), and only where data can flow: to the CPU from a mapping
 * the device may write, to the device into one it may read.
 */
static void npu_mem_sync_imports(struct npu_mem_buf *buf, bool for_cpu)
{
	struct npu_mem_import *imp;

	mutex_lock(&buf->imports_lock);
	list_for_each_entry(imp, &buf->imports, node) {
		if (for_cpu && imp->dir != DMA_TO_DEVICE)
			dma_sync_sgtable_for_cpu(imp->dev, &imp->shadow, imp->dir);
		else if (!for_cpu && imp->dir != DMA_FROM_DEVICE)
			dma_sync_sgtable_for_device(imp->dev, &imp->shadow, imp->dir);
		cond_resched();
	}
	mutex_unlock(&buf->imports_lock);
}

/* Without the NPU device there is nothing of its to sync: CPU access goes on. */
static int sync_own(struct npu_mem_buf *buf, enum dma_data_direction dir,
		    bool for_cpu)
{
	int ret = npu_mem_buf_sync(buf, 0, buf->size, dir, for_cpu);

	return ret == -ENODEV ? 0 : ret;
}

/*
 * The holder of a dma-buf opened without O_RDWR is a reader of a buffer
 * that others may write: as for the SYNC ioctl (npu_mem_buf_sync_request()),
 * it may not make a sync that copies over a bounced buffer's pages or its
 * bounce buffers, and its invalidation comes after a write-back.
 */
static bool dmabuf_reader(const struct dma_buf *dmabuf)
{
	const struct npu_mem_buf *buf = dmabuf->priv;

	return !(dmabuf->file->f_mode & FMODE_WRITE) &&
	       !(READ_ONCE(buf->flags) & NPU_MEM_BUF_READONLY);
}

static bool reader_copies(const struct dma_buf *dmabuf,
			  enum dma_data_direction dir, bool for_cpu)
{
	const struct npu_mem_buf *buf = dmabuf->priv;

	return dmabuf_reader(dmabuf) &&
	       (READ_ONCE(buf->flags) & NPU_MEM_BUF_BOUNCED) &&
	       dir != (for_cpu ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
}

static int npu_mem_dmabuf_begin_cpu(struct dma_buf *dmabuf,
				    enum dma_data_direction dir)
{
	struct npu_mem_buf *buf = dmabuf->priv;
	int ret;

	if (reader_copies(dmabuf, dir, true))
		return -EACCES;
	if (dmabuf_reader(dmabuf) && dir != DMA_TO_DEVICE) {
		npu_mem_sync_imports(buf, false);
		ret = sync_own(buf, DMA_BIDIRECTIONAL, false);
		if (ret)
			return ret;
	}
	npu_mem_sync_imports(buf, true);
	return sync_own(buf, dir, true);
}

static int npu_mem_dmabuf_end_cpu(struct dma_buf *dmabuf,
				  enum dma_data_direction dir)
{
	struct npu_mem_buf *buf = dmabuf->priv;

	if (reader_copies(dmabuf, dir, false))
		return -EACCES;
	npu_mem_sync_imports(buf, false);
	return sync_own(buf, dir, false);
}

static int npu_mem_dmabuf_mmap(struct dma_buf *dmabuf,
			       struct vm_area_struct *vma)
{
	return npu_mem_mmap_buf(dmabuf->priv, vma);
}

static int npu_mem_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct npu_mem_buf *buf = dmabuf->priv;
	unsigned long npages = buf->size >> PAGE_SHIFT, n = 0;
	struct page **pages;
	unsigned int i, j;
	void *vaddr;

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL | __GFP_NOWARN);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < buf->nr_chunks; i++)
		for (j = 0; j < (1U << buf->chunks[i].order); j++)
			pages[n++] = nth_page(buf->chunks[i].page, j);
	vaddr = vmap(pages, npages, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	if (!vaddr)
		return -ENOMEM;
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

static void npu_mem_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	vunmap(map->vaddr);
}

NPU_DMA_BUF_VMAP_SHIMS(npu_mem_dmabuf_vmap, npu_mem_dmabuf_vunmap)

static const struct dma_buf_ops npu_mem_dmabuf_ops = {
	.map_dma_buf = npu_mem_dmabuf_map,
	.unmap_dma_buf = npu_mem_dmabuf_unmap,
	.release = npu_mem_dmabuf_release,
	.begin_cpu_access = npu_mem_dmabuf_begin_cpu,
	.end_cpu_access = npu_mem_dmabuf_end_cpu,
	.mmap = npu_mem_dmabuf_mmap,
	NPU_DMA_BUF_VMAP_OPS(npu_mem_dmabuf_vmap, npu_mem_dmabuf_vunmap),
};

/* Takes over the caller's reference to @buf on success. */
/* The buffer behind one of our own dma-bufs, or NULL for another driver's. */
struct npu_mem_buf *npu_mem_dmabuf_buf(struct dma_buf *dmabuf)
{
	return dmabuf->ops == &npu_mem_dmabuf_ops ? dmabuf->priv : NULL;
}

struct dma_buf *npu_mem_dmabuf_export(struct npu_mem_buf *buf, u32 flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);

	exp.ops = &npu_mem_dmabuf_ops;
	exp.size = buf->size;
	exp.flags = flags & (O_CLOEXEC | O_RDWR);
	exp.priv = buf;
	return dma_buf_export(&exp);
}
