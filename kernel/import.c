// SPDX-License-Identifier: GPL-2.0-only
/*
 * Importing other drivers' dma-bufs for the NPU (DMABUF_IMPORT; the UAPI
 * header is the contract).
 *
 * A foreign import is an npu_mem_buf without pages of its own: the exporter
 * owns the memory, npu-mem holds a dma-buf reference and, while the device
 * is there, a static attachment mapped for it.  Static, because the NPU's
 * addresses are handed to user space and must not move: the dma-buf core
 * makes exporters pin for static importers, and an exporter that cannot
 * fails the attachment or the mapping, which the caller gets as is.
 *
 * A dma-buf file opened without O_RDWR gives no write access (its own
 * mmap refuses PROT_WRITE), and neither does its import: the buffer is
 * NPU_MEM_BUF_READONLY, so every handle on it maps read-only and cannot
 * be exported writable, and the NPU's mapping is DMA_TO_DEVICE, so the
 * device only reads it.  A dma-buf has one file, so every fd of it has the
 * same mode and its imports are all read-only or all read-write.
 *
 * Imports are kept on a list of their own, under imports_mutex, for
 * device removal and for the test DMA engine's address checks.  That lock
 * is taken inside npu_mem_bufs_lock (edu.c's range checks, with its
 * edu_lock inside both), inside an NPU's lock (removal) and the mmap lock
 * (mmap may drop an import's last reference), and around the exporter's
 * unmap and detach (release and device removal), which take the dma-buf's
 * reservation lock; attach and map run with none of the module's locks
 * held, before the import is listed.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "npu_mem.h"

struct npu_mem_import {
	struct npu_mem_buf *buf;	/* the buffer standing for it */
	struct dma_buf *dmabuf;		/* a reference */
	struct dma_buf_attachment *attach;	/* while the buffer is mapped */
	struct sg_table *sgt;		/* the exporter's mapping for the NPU */
	enum dma_data_direction dir;	/* of @sgt: TO_DEVICE when read-only */
	struct list_head node;		/* npu_mem_imports */
};

static LIST_HEAD(npu_mem_imports);
static DEFINE_MUTEX(imports_mutex);

/* Abutting DMA segments are one device range, as for buffers. */
static u32 count_ranges(struct sg_table *sgt)
{
	struct scatterlist *sg;
	u64 end = 0;
	u32 ranges = 0;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (!ranges || sg_dma_address(sg) != end)
			ranges++;
		end = sg_dma_address(sg) + sg_dma_len(sg);
	}
	return ranges;
}

/*
 * Attach and map in one device read section, and list the import there: a
 * removal either comes first (-ENODEV) or finds it listed and detaches it.
 */
static int attach_and_map(struct npu_mem_buf *buf, struct npu_mem_npu *npu)
{
	struct npu_mem_import *imp = buf->foreign;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	struct device *dev;
	int idx, ret = 0;

	buf->npu = npu;
	dev = npu_mem_dev_enter(npu, &idx);
	if (!dev) {
		ret = -ENODEV;
		goto out;
	}
	attach = dma_buf_attach(imp->dmabuf, dev);
	if (IS_ERR(attach)) {
		ret = PTR_ERR(attach);
		goto out;
	}
	sgt = npu_dma_buf_map_unlocked(attach, imp->dir);
	if (IS_ERR_OR_NULL(sgt)) {
		ret = sgt ? PTR_ERR(sgt) : -ENOMEM;
		dma_buf_detach(imp->dmabuf, attach);
		goto out;
	}
	imp->attach = attach;
	imp->sgt = sgt;
	buf->dev = dev;
	buf->dev_addr = sg_dma_address(sgt->sgl);
	buf->dev_ranges = count_ranges(sgt);
	if (buf->dev_ranges == 1)
		buf->flags |= NPU_MEM_BUF_DEV_CONTIG;

	mutex_lock(&imports_mutex);
	buf->mapped = true;
	list_add(&imp->node, &npu_mem_imports);
	mutex_unlock(&imports_mutex);
out:
	npu_mem_dev_exit(npu, idx);
	return ret;
}

static void unmap_import(struct npu_mem_buf *buf)
{
	struct npu_mem_import *imp = buf->foreign;

	lockdep_assert_held(&imports_mutex);
	if (!buf->mapped)
		return;
	npu_dma_buf_unmap_unlocked(imp->attach, imp->sgt, imp->dir);
	dma_buf_detach(imp->dmabuf, imp->attach);
	imp->attach = NULL;
	imp->sgt = NULL;
	buf->mapped = false;
	buf->flags &= ~NPU_MEM_BUF_DEV_CONTIG;
}

/*
 * A dma-buf imported already stands for itself: one attachment per dma-buf,
 * as DRM's PRIME import keeps one object per dma-buf, so the device never
 * has the same pages mapped twice (which the DMA API does not support: two
 * mappings of a cache line the device may write).  Only an import of the
 * same access: a read-only import must not lend write access, nor a
 * read-write importer get a mapping the device may not write.  Only an
 * import for the same NPU: another NPU's mapping holds addresses of
 * another device.  A buffer on its way out (no references left) is not
 * taken: the caller attaches anew.
 */
static struct npu_mem_buf *find_import(struct npu_mem_npu *npu,
				       struct dma_buf *dmabuf,
				       enum dma_data_direction dir)
{
	struct npu_mem_import *imp;
	struct npu_mem_buf *buf = NULL;

	mutex_lock(&imports_mutex);
	list_for_each_entry(imp, &npu_mem_imports, node) {
		if (imp->dmabuf == dmabuf && imp->dir == dir &&
		    imp->buf->npu == npu && imp->buf->mapped &&
		    kref_get_unless_zero(&imp->buf->ref)) {
			buf = imp->buf;
			break;
		}
	}
	mutex_unlock(&imports_mutex);
	return buf;
}

/* The last reference to a foreign import went (from buffer.c's release). */
static void import_release(struct npu_mem_buf *buf)
{
	struct npu_mem_import *imp = buf->foreign;

	mutex_lock(&imports_mutex);
	list_del(&imp->node);
	unmap_import(buf);
	mutex_unlock(&imports_mutex);
	dma_buf_put(imp->dmabuf);
	kfree(imp);
}

/* Through the exporter's own mmap: only it knows how to map its pages. */
static int import_mmap(struct npu_mem_buf *buf, struct vm_area_struct *vma)
{
	return dma_buf_mmap(buf->foreign->dmabuf, vma, vma->vm_pgoff);
}

static const struct npu_mem_foreign_ops import_ops = {
	.release = import_release,
	.mmap = import_mmap,
};

/**
 * npu_mem_import_dmabuf() - a buffer for the dma-buf behind @fd
 * @npu: the NPU to map it for
 * @fd: the caller's file descriptor
 * @hflags: out: the flags the new handle gets
 *
 * Return: a buffer reference (npu-mem's own buffer when the dma-buf is
 * one of ours, the earlier import's when it was imported already), or an
 * ERR_PTR.
 */
struct npu_mem_buf *npu_mem_import_dmabuf(struct npu_mem_npu *npu, int fd,
					  u32 *hflags)
{
	enum dma_data_direction dir;
	struct npu_mem_import *imp;
	struct npu_mem_buf *buf;
	struct dma_buf *dmabuf;
	bool writable;
	int ret;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);

	/* The fd names the dma-buf's one file: its mode is the caller's access. */
	writable = dmabuf->file->f_mode & FMODE_WRITE;
	dir = writable ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	*hflags = NPU_MEM_BUF_IMPORTED | (writable ? 0 : NPU_MEM_BUF_READONLY);
	buf = npu_mem_dmabuf_buf(dmabuf);
	if (buf) {
		/* Ours: the same buffer, as IPC_IMPORT gives it. */
		npu_mem_buf_get(buf);
		dma_buf_put(dmabuf);
		if (!npu_mem_buf_mapped(buf)) {
			npu_mem_buf_put(buf);
			return ERR_PTR(-ENODEV);
		}
		return buf;
	}

	buf = find_import(npu, dmabuf, dir);
	if (buf) {
		dma_buf_put(dmabuf);
		return buf;
	}

	/* mmap offsets and the page-granular checks need whole pages. */
	ret = -EINVAL;
	if (!dmabuf->size || !PAGE_ALIGNED(dmabuf->size))
		goto err_put;
	ret = -ENOMEM;
	imp = kzalloc(sizeof(*imp), GFP_KERNEL_ACCOUNT);
	if (!imp)
		goto err_put;
	buf = npu_mem_buf_new(dmabuf->size, NPU_MEM_POLICY_NORMAL_ONLY,
			      NPU_MEM_BUF_FOREIGN |
			      (writable ? 0 : NPU_MEM_BUF_READONLY));
	if (!buf)
		goto err_free_imp;
	INIT_LIST_HEAD(&imp->node);
	buf->foreign = imp;
	buf->foreign_ops = &import_ops;
	imp->buf = buf;
	imp->dmabuf = dmabuf;
	imp->dir = dir;

	ret = attach_and_map(buf, npu);
	if (ret)
		goto err_free_buf;
	return buf;

err_free_buf:
	npu_mem_buf_discard(buf);
err_free_imp:
	kfree(imp);
err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/* Device removal: every import lets go of @npu's device; the dma-bufs stay. */
void npu_mem_imports_revoke(struct npu_mem_npu *npu)
{
	struct npu_mem_import *imp;

	mutex_lock(&imports_mutex);
	list_for_each_entry(imp, &npu_mem_imports, node) {
		if (imp->buf->mapped && imp->buf->npu == npu)
			unmap_import(imp->buf);
		cond_resched();
	}
	mutex_unlock(&imports_mutex);
}

/*
 * The test DMA engine's check (edu.c holds us locked around it and the
 * copy, inside npu_mem_bufs_lock, so nothing is unmapped under a copy in
 * flight): is [addr, addr + len) inside one device range of a mapped
 * import, one the device may write if @write?
 */
void npu_mem_imports_lock(void)
{
	mutex_lock(&imports_mutex);
}

void npu_mem_imports_unlock(void)
{
	mutex_unlock(&imports_mutex);
}

static bool sgt_holds(struct sg_table *sgt, u64 addr, u64 len)
{
	struct scatterlist *sg;
	u64 start = 0, end = 0;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (sg_dma_address(sg) != end)
			start = sg_dma_address(sg);
		end = sg_dma_address(sg) + sg_dma_len(sg);
		if (addr >= start && addr - start < end - start &&
		    len <= end - addr)
			return true;
	}
	return false;
}

bool npu_mem_imports_range_live(struct npu_mem_npu *npu, u64 addr, u64 len,
				bool write)
{
	struct npu_mem_import *imp;

	lockdep_assert_held(&imports_mutex);
	list_for_each_entry(imp, &npu_mem_imports, node)
		if (imp->buf->mapped && imp->buf->npu == npu &&
		    (!write || imp->dir != DMA_TO_DEVICE) &&
		    sgt_holds(imp->sgt, addr, len))
			return true;
	return false;
}

/**
 * npu_mem_import_sync() - SYNC of a foreign import
 * @buf: the import
 * @offset: first byte, checked against the size
 * @len: bytes
 * @dir: NPU_MEM_SYNC_*
 * @reader: the handle may not write (npu_mem_handle_reader())
 *
 * The exporter knows how its memory is cached and who else maps it, so the
 * whole dma-buf is handed over through its CPU-access hooks, as a
 * DMA_BUF_IOCTL_SYNC START then END pair would: beginning CPU access makes
 * the devices' writes visible to the CPU, ending it makes the CPU's visible
 * to the devices.  Always both, in that order: some exporters (udmabuf)
 * refuse an end without a begin.  A reader's FROM_DEVICE gets a TO_DEVICE
 * pair first, so that the exporter writes back what others wrote before it
 * invalidates (npu_mem_buf_sync_request() says why).
 */
int npu_mem_import_sync(struct npu_mem_buf *buf, u64 offset, u64 len, u32 dir,
			bool reader)
{
	static const enum dma_data_direction dma_dir[] = {
		[NPU_MEM_SYNC_TO_DEVICE] = DMA_TO_DEVICE,
		[NPU_MEM_SYNC_FROM_DEVICE] = DMA_FROM_DEVICE,
		[NPU_MEM_SYNC_BIDIRECTIONAL] = DMA_BIDIRECTIONAL,
	};
	struct dma_buf *dmabuf = buf->foreign->dmabuf;
	int ret;

	if (npu_mem_buf_range_outside(buf, offset, len))
		return -EINVAL;
	if (!npu_mem_buf_mapped(buf))
		return -ENODEV;
	if (reader && (dir & NPU_MEM_SYNC_FROM_DEVICE)) {
		ret = dma_buf_begin_cpu_access(dmabuf, DMA_TO_DEVICE);
		if (!ret)
			ret = dma_buf_end_cpu_access(dmabuf, DMA_TO_DEVICE);
		if (ret)
			return ret;
	}
	ret = dma_buf_begin_cpu_access(dmabuf, dma_dir[dir]);
	if (!ret)
		ret = dma_buf_end_cpu_access(dmabuf, dma_dir[dir]);
	return ret;
}
