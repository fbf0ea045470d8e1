// SPDX-License-Identifier: GPL-2.0-only
/*
 * dma-buf export.  The dma-buf holds one buffer reference, so the buffer
 * outlives its handle for as long as any importer or fd has the dma-buf.
 * Importers get their own DMA mapping of the same pages; begin/end CPU
 * access are the cache-maintenance points for DMA_BUF_IOCTL_SYNC.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fcntl.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "npu_mem.h"

NPU_MEM_IMPORT_NS_DMA_BUF();

static struct sg_table *npu_mem_dmabuf_map(struct dma_buf_attachment *att,
					   enum dma_data_direction dir)
{
	struct npu_mem_buf *buf = att->dmabuf->priv;
	struct scatterlist *src, *dst;
	struct sg_table *sgt;
	unsigned int i;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, buf->sgt.orig_nents, GFP_KERNEL);
	if (ret)
		goto err_free;
	dst = sgt->sgl;
	for_each_sgtable_sg(&buf->sgt, src, i) {
		sg_set_page(dst, sg_page(src), src->length, src->offset);
		dst = sg_next(dst);
	}
	ret = dma_map_sgtable(att->dev, sgt, dir, 0);
	if (ret)
		goto err_table;
	return sgt;

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void npu_mem_dmabuf_unmap(struct dma_buf_attachment *att,
				 struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	dma_unmap_sgtable(att->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static void npu_mem_dmabuf_release(struct dma_buf *dmabuf)
{
	npu_mem_buf_put(dmabuf->priv);
}

static int npu_mem_dmabuf_begin_cpu(struct dma_buf *dmabuf,
				    enum dma_data_direction dir)
{
	struct npu_mem_buf *buf = dmabuf->priv;

	return npu_mem_buf_sync(buf, 0, buf->size, dir, true);
}

static int npu_mem_dmabuf_end_cpu(struct dma_buf *dmabuf,
				  enum dma_data_direction dir)
{
	struct npu_mem_buf *buf = dmabuf->priv;

	return npu_mem_buf_sync(buf, 0, buf->size, dir, false);
}

static int npu_mem_dmabuf_mmap(struct dma_buf *dmabuf,
			       struct vm_area_struct *vma)
{
	return npu_mem_mmap_buf(dmabuf->priv, vma,
				(u64)vma->vm_pgoff << PAGE_SHIFT, true);
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

static const struct dma_buf_ops npu_mem_dmabuf_ops = {
	.map_dma_buf = npu_mem_dmabuf_map,
	.unmap_dma_buf = npu_mem_dmabuf_unmap,
	.release = npu_mem_dmabuf_release,
	.begin_cpu_access = npu_mem_dmabuf_begin_cpu,
	.end_cpu_access = npu_mem_dmabuf_end_cpu,
	.mmap = npu_mem_dmabuf_mmap,
	.vmap = npu_mem_dmabuf_vmap,
	.vunmap = npu_mem_dmabuf_vunmap,
};

/* Takes over the caller's reference to @buf on success. */
struct dma_buf *npu_mem_dmabuf_export(struct npu_mem_buf *buf, u32 flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);

	exp.ops = &npu_mem_dmabuf_ops;
	exp.size = buf->size;
	exp.flags = flags & (O_CLOEXEC | O_RDWR);
	exp.priv = buf;
	return dma_buf_export(&exp);
}
