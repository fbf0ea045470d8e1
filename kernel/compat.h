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
#include <linux/rbtree.h>
#include <linux/shmem_fs.h>
#include <uapi/linux/magic.h>

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
 * rb_add() came in 5.11: the same insertion by a "less" callback, as the
 * kernel's own.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
static inline void rb_add(struct rb_node *node, struct rb_root *tree,
			  bool (*less)(struct rb_node *, const struct rb_node *))
{
	struct rb_node **link = &tree->rb_node;
	struct rb_node *parent = NULL;

	while (*link) {
		parent = *link;
		if (less(node, parent))
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(node, parent, link);
	rb_insert_color(node, tree);
}
#endif

/*
 * unpin_user_page_range_dirty_lock() (5.12) unpins a physically contiguous
 * run at once; before it, each page of the run on its own does the same.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 12, 0)
static inline void unpin_user_page_range_dirty_lock(struct page *page,
						    unsigned long npages,
						    bool make_dirty)
{
	unsigned long i;

	for (i = 0; i < npages; i++) {
		struct page *p = page + i;

		unpin_user_pages_dirty_lock(&p, 1, make_dirty);
	}
}
#endif

/*
 * pin_user_pages() lost its vmas argument in 6.5; the module never wants
 * the VMAs back (it checks them itself, under the same mmap lock hold).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#define pin_user_pages(start, nr_pages, gup_flags, pages) \
	pin_user_pages(start, nr_pages, gup_flags, pages, NULL)
#endif

/*
 * Folios came in 5.16.  The module only compares them (is this page in the
 * same folio as that one?) and sets their index, so before 5.16 a folio is
 * its compound page's head, never dereferenced.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 16, 0)
struct folio;
#define page_folio(p)	((struct folio *)compound_head(p))

static inline void npu_folio_set_index(struct page *page, pgoff_t index)
{
	compound_head(page)->index = index;
}
#else
/* struct page lost its ->index (7.x): the folio has it on every kernel. */
static inline void npu_folio_set_index(struct page *page, pgoff_t index)
{
	page_folio(page)->index = index;
}
#endif

/*
 * nth_page() went away in 6.18, once the pages of a folio were guaranteed
 * to be contiguous in the memory map: page + n is what it meant.
 */
#ifndef nth_page
#define nth_page(page, n)	((page) + (n))
#endif

/*
 * dma-buf vmap: struct iosys_map since 5.18, struct dma_buf_map (the same
 * thing) from 5.11, and before that ->vmap returned the address itself.
 * dmabuf.c writes the newest form and lists its ops as
 * NPU_DMA_BUF_VMAP_OPS(vmap, vunmap) after NPU_DMA_BUF_VMAP_SHIMS(vmap,
 * vunmap), which makes the 5.10 callbacks out of the newer ones there.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
struct iosys_map {
	void *vaddr;
	bool is_iomem;
};

static inline void iosys_map_set_vaddr(struct iosys_map *map, void *vaddr)
{
	map->vaddr = vaddr;
	map->is_iomem = false;
}

#define NPU_DMA_BUF_VMAP_SHIMS(vmap_fn, vunmap_fn)				\
static void *vmap_fn##_addr(struct dma_buf *dmabuf)				\
{										\
	struct iosys_map map = { };						\
										\
	return vmap_fn(dmabuf, &map) ? NULL : map.vaddr;			\
}										\
static void vunmap_fn##_addr(struct dma_buf *dmabuf, void *vaddr)		\
{										\
	struct iosys_map map = { .vaddr = vaddr };				\
										\
	vunmap_fn(dmabuf, &map);						\
}
#define NPU_DMA_BUF_VMAP_OPS(vmap_fn, vunmap_fn)				\
	.vmap = vmap_fn##_addr, .vunmap = vunmap_fn##_addr
#else
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 18, 0)
#include <linux/dma-buf-map.h>
#define iosys_map		dma_buf_map
#define iosys_map_set_vaddr	dma_buf_map_set_vaddr
#endif
#define NPU_DMA_BUF_VMAP_SHIMS(vmap_fn, vunmap_fn)
#define NPU_DMA_BUF_VMAP_OPS(vmap_fn, vunmap_fn)				\
	.vmap = vmap_fn, .vunmap = vunmap_fn
#endif

/*
 * shmem_mapping() is neither inline nor exported before 6.1 (nor is
 * shmem_aops).  Every shmem file (tmpfs, memfd, SysV shm) lives on a
 * superblock with tmpfs's magic.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
static inline bool npu_shmem_mapping(struct address_space *mapping)
{
	return mapping->host && mapping->host->i_sb->s_magic == TMPFS_MAGIC;
}
#define shmem_mapping(mapping)	npu_shmem_mapping(mapping)
#endif

/*
 * thp_get_unmapped_area() aligns an address for PMD mappings of any file
 * from 5.18 ("Align file mappings for non-DAX"); before, only for DAX
 * files.  The same padding and rounding, by hand, there.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 18, 0)
#include <linux/mman.h>
#include <linux/sched.h>

static inline unsigned long
npu_thp_get_unmapped_area(struct file *filp, unsigned long addr,
			  unsigned long len, unsigned long pgoff,
			  unsigned long flags)
{
	unsigned long off = pgoff << PAGE_SHIFT, len_pad = len + PMD_SIZE, ret;

	if (addr || (flags & MAP_FIXED) || len_pad < len)
		return current->mm->get_unmapped_area(filp, addr, len, pgoff, flags);
	ret = current->mm->get_unmapped_area(filp, 0, len_pad, pgoff, flags);
	if (IS_ERR_VALUE(ret))
		return current->mm->get_unmapped_area(filp, addr, len, pgoff, flags);
	return ret + ((off - ret) & (PMD_SIZE - 1));
}
#define thp_get_unmapped_area	npu_thp_get_unmapped_area
#endif

/*
 * Shrinkers are allocated by the kernel from 6.7 (shrinker_alloc()); before,
 * they are the caller's, registered with a name from 6.0.  Their flags are
 * given at allocation: from 6.7 it sizes the per-node state by them.
 */
#include <linux/shrinker.h>
#include <linux/slab.h>
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
static inline struct shrinker *npu_shrinker_alloc(unsigned int flags,
						  const char *name)
{
	struct shrinker *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (s)
		s->flags = flags;
	return s;
}

static inline int npu_shrinker_register(struct shrinker *s, const char *name)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 0, 0)
	return register_shrinker(s);
#else
	return register_shrinker(s, "%s", name);
#endif
}

static inline void npu_shrinker_free(struct shrinker *s)
{
	unregister_shrinker(s);
	kfree(s);
}
#else
static inline struct shrinker *npu_shrinker_alloc(unsigned int flags,
						  const char *name)
{
	return shrinker_alloc(flags, "%s", name);
}

static inline int npu_shrinker_register(struct shrinker *s, const char *name)
{
	shrinker_register(s);
	return 0;
}

#define npu_shrinker_free	shrinker_free
#endif

/* A page's memory cgroup word: a pointer before 5.11, the folio's from 5.16. */
#ifdef CONFIG_MEMCG
static inline unsigned long npu_page_memcg_data(struct page *page)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
	return (unsigned long)READ_ONCE(page->mem_cgroup);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(5, 16, 0)
	return READ_ONCE(page->memcg_data);
#else
	return READ_ONCE(page_folio(page)->memcg_data);
#endif
}
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
