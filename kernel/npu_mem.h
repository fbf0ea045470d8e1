/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * npu-mem internals.
 *
 * Objects:
 *  - npu_mem_client: one per open file of /dev/npu-mem.  Owns a handle table
 *    (xarray, handle number -> npu_mem_handle) and an mmap offset space
 *    (rbtree of its handles by page offset).  Each handle holds one buffer
 *    reference; several handles, in one file or in several (IPC import),
 *    may name the same buffer.
 *  - npu_mem_ipc_key: a buffer exported by key (ipc.c), owned by the file
 *    that exported it; holds a buffer reference until revoked.
 *  - npu_mem_buf: pinned pages, their sg_table DMA-mapped for the NPU device.
 *    Reference counted: the handle, every VMA that maps it and every dma-buf
 *    exported from it hold a reference; the last put frees the pages.
 *
 * Lock order: client->lock (handle table + offset space), then the mm's
 * mmap lock is never taken under it (mmap runs with the mmap lock held and
 * takes client->lock inside it; nothing takes them the other way round).
 * npu_mem_clients_lock (the global client list) is taken before a client's
 * lock (debugfs), never after it.  npu_mem_ipc_lock (ipc.c: the key
 * registry) is taken inside a client's lock, never around it.  import.c's
 * imports_mutex is taken inside npu_mem_bufs_lock (the test engine's range
 * checks), inside an NPU's lock (device.c: removal) and inside the mm's mmap lock
 * (mmap dropping a foreign import's last reference), and around a foreign
 * dma-buf's unmap and detach, which take its reservation lock; attach and
 * map run with none of the module's locks held.
 * npu_mem_bufs_lock (the live-buffer registry, and every buffer's DMA
 * mapping state, its peer mappings included) nests inside the device's
 * removal (device.c: the NPU's lock, then the revoke callback takes it) and
 * inside the mm's mmap lock, where a VMA's ->close (munmap, exit) or a
 * failed mmap drops a buffer's last reference; of the module's locks only
 * imports_mutex and, inside both, an edu engine's lock (edu.c) are taken
 * under it.  An NPU's SRCU read section (npu_mem_dev_enter) may be held
 * around any of them; removal waits for it with no lock held but that
 * NPU's lock, which no section ever takes.  device.c's npus_lock (the NPU
 * slots) is a leaf: probe takes it, and lets go, before the NPU's lock.  A
 * buffer's imports_lock is taken inside the dma-buf's reservation lock
 * (importers map with it held), never around it.  buffer.c's
 * npu_mem_retained_lock (chunks kept after their buffer went) is taken
 * last, also inside the mmap lock on a buffer's last put, with no other
 * lock of the module under it but reserve.c's per-node spinlocks, which
 * are leaves (a chunk recycled on a last put).  claim.c's claims_lock (pages registered
 * writable) is a leaf the same way: no lock is taken under it.  Page
 * allocation never runs under a lock.
 */
#ifndef _NPU_MEM_H
#define _NPU_MEM_H

#include <linux/dma-direction.h>
#include <linux/kref.h>
#include <linux/rbtree.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/xarray.h>
#include <linux/npu_mem.h>

#include "compat.h"

struct cred;
struct dentry;
struct device;
struct npu_mem_npu;
struct seq_file;
struct cred;

/* One physically contiguous run of pages backing part of a buffer. */
struct npu_mem_chunk {
	struct page *page;
	u16 order;
	u32 first;			/* index of its first 4 KiB page in the buffer */
};

struct npu_mem_buf {
	struct kref ref;
	u64 size;
	u32 policy;
	u32 flags;			/* NPU_MEM_BUF_READONLY, _DEV_CONTIG, _BOUNCED, _HOST */
	unsigned int nr_chunks;
	unsigned int max_chunks;	/* room in @chunks */
	u32 nr_huge;
	u32 nr_normal;
	u32 dev_ranges;			/* contiguous device address ranges */
	struct npu_mem_chunk *chunks;
	struct sg_table sgt;		/* DMA-mapped for @dev while @mapped */
	struct npu_mem_npu *npu;	/* the NPU it is (or was) mapped for */
	int want_node;			/* where its pages should come from */
	int first_node;			/* where its first chunk came from */
	u32 off_node_pages;		/* 4 KiB pages not on @first_node */
	struct device *dev;		/* @npu's device it was mapped with */
	bool mapped;			/* under npu_mem_bufs_lock; cleared on removal */
	u64 dev_addr;			/* first device address, as mapped */
	struct mm_struct *mm;		/* charged in pinned_vm (VmPin) */
	const struct cred *payer;	/* its user charged in locked_vm (RLIMIT_MEMLOCK) */
	struct list_head node;		/* all live buffers, for DMA range checks;
					 * once released, the retained list */
	struct mutex imports_lock;	/* @imports */
	struct list_head imports;	/* importers' mappings (dmabuf.c) */
	struct npu_mem_import *foreign;	/* another driver's dma-buf (import.c) */
	const struct npu_mem_foreign_ops *foreign_ops;	/* with @foreign */
	struct npu_mem_claim *claim;	/* pages a writable registration has for
					 * the device to write (claim.c) */
	struct list_head peers;		/* its mappings for other NPUs
					 * (PEER_MAP), under npu_mem_bufs_lock */
};

struct npu_mem_import;

/*
 * What a foreign import (import.c) does in place of a buffer's own code:
 * import.c sets them with @foreign, so that buffer.c and mmap.c, below it,
 * never call up into it.
 */
struct npu_mem_foreign_ops {
	void (*release)(struct npu_mem_buf *buf);	/* its last reference went */
	int (*mmap)(struct npu_mem_buf *buf, struct vm_area_struct *vma);
};

/* A buffer as one open file names it. */
struct npu_mem_handle {
	struct npu_mem_buf *buf;	/* a reference */
	u64 pgoff;			/* mmap offset (pages); 0: not mappable */
	struct rb_node offset_node;	/* in the client's offsets, if pgoff */
	u32 flags;			/* NPU_MEM_BUF_IMPORTED, _READONLY */
};

/*
 * A handle gives no write access when its buffer is READONLY, or when it
 * came from something that gave none: a dma-buf file opened without
 * O_RDWR, or an IPC key made from such a handle.  The buffer may still be
 * writable through its owner's handles, so this is the handle's, not the
 * buffer's, property.
 */
static inline bool npu_mem_handle_readonly(const struct npu_mem_buf *buf,
					   u32 hflags)
{
	return (READ_ONCE(buf->flags) | hflags) & NPU_MEM_BUF_READONLY;
}

/* A range of bytes not inside the buffer (empty, or its end overflowing) */
static inline bool npu_mem_buf_range_outside(const struct npu_mem_buf *buf,
					     u64 offset, u64 len)
{
	u64 end;

	return !len || check_add_overflow(offset, len, &end) || end > buf->size;
}

/*
 * A reader: the handle may not write, and others may (the owner of a buffer
 * it imported read-only; a foreign exporter's other users).  Its syncs must
 * not discard their writes (npu_mem_buf_sync_request()).  A READONLY buffer
 * of ours has no CPU writer to lose anything.
 */
static inline bool npu_mem_handle_reader(const struct npu_mem_buf *buf,
					 u32 hflags)
{
	u32 flags = READ_ONCE(buf->flags);

	if (flags & NPU_MEM_BUF_FOREIGN)
		return (flags | hflags) & NPU_MEM_BUF_READONLY;
	return (hflags & NPU_MEM_BUF_READONLY) && !(flags & NPU_MEM_BUF_READONLY);
}

struct npu_mem_client {
	struct mutex lock;		/* handles, offsets, usage below */
	struct xarray handles;
	struct rb_root offsets;		/* buffers with a handle, by pgoff */
	u32 next_handle;		/* xa_alloc_cyclic() cursor */
	u64 next_pgoff;			/* above every live handle's mmap offsets */
	u64 pgoff_limit;		/* end of the mmap offset space (pages) */
	u64 id;
	const struct cred *cred;	/* the opener's: its user pays for the buffers */
	bool unlimited;			/* the opener had CAP_IPC_LOCK */
	bool sees_phys;			/* the opener had CAP_SYS_ADMIN */
	pid_t pid;
	char comm[TASK_COMM_LEN];
	u64 nr_buffers;
	u64 bytes;
	u64 huge_pages;
	u64 normal_pages;
	struct list_head node;		/* npu_mem_clients */
	struct list_head ipc_keys;	/* keys it exported, under npu_mem_ipc_lock */
	unsigned int nr_ipc_keys;	/* under npu_mem_ipc_lock */
};

/*
 * Global usage, all clients, in atomics so page loops stay lock-free.
 * @bytes is what the cap (limit_bytes) counts: live buffers and the
 * chunks retained after their buffer went (buffer.c); @retained_bytes is
 * that second part alone.
 */
struct npu_mem_usage {
	atomic64_t bytes;
	atomic64_t retained_bytes;
	atomic64_t huge_pages;
	atomic64_t normal_pages;
	atomic64_t buffers;
	atomic64_t peer_maps;		/* peer mappings (PEER_MAP) live */
};

extern struct npu_mem_usage npu_mem_usage;
extern struct mutex npu_mem_clients_lock;
extern struct list_head npu_mem_clients;

/* limits.c: the module parameters that bound allocations */
u64 npu_mem_limit_bytes(void);
u64 npu_mem_reserve_bytes(void);
u64 npu_mem_max_alloc(void);

/* reserve.c: zeroed 2 MiB chunks made ahead of ALLOC, per node */
int npu_mem_reserve_init(void);
void npu_mem_reserve_exit(void);
bool npu_mem_reserve_usable(void);
struct page *npu_mem_reserve_take(int nid);
bool npu_mem_reserve_recycle(struct page *page);
u64 npu_mem_reserve_release(u64 bytes);
void npu_mem_reserve_info(u64 *held, u64 *low, u64 *high);
void npu_mem_reserve_show(struct seq_file *m);
bool npu_mem_pages_poisoned(struct page *page, unsigned int order);

/*
 * device.c: an NPU (struct npu_mem_npu, opaque), the device that stands for
 * it in the DMA API.  It calls the layers above it only through these,
 * which main.c passes in.
 */
/* Most NPUs the module serves at once (npu_pci= functions, and later ones). */
#define NPU_MEM_MAX_NPUS	64
struct pci_dev;
struct npu_mem_device_ops {
	/*
	 * An NPU's device goes away, after no user can reach it any more:
	 * tear down every DMA mapping made for that NPU.
	 */
	void (*revoke)(struct npu_mem_npu *npu);
	/* A PCI function became an NPU's device (the test DMA engine's cue). */
	void (*pci_bound)(struct npu_mem_npu *npu, struct pci_dev *pdev);
	/* It stops being that NPU's device; called before the revoke. */
	void (*pci_unbinding)(struct npu_mem_npu *npu, struct pci_dev *pdev);
};
void npu_mem_npu_exit(void);
int npu_mem_device_init(const struct npu_mem_device_ops *ops);
void npu_mem_device_exit(void);
struct npu_mem_npu *npu_mem_npu_get(u32 index);
unsigned int npu_mem_npu_count(void);
unsigned int npu_mem_npu_index(const struct npu_mem_npu *npu);
int npu_mem_npu_node(const struct npu_mem_npu *npu);
bool npu_mem_npu_pci_addr(const struct npu_mem_npu *npu, u32 *domain,
			  u32 *bdf);
struct device *npu_mem_dev_enter(struct npu_mem_npu *npu, int *idx)
	__acquires(&npu->srcu);
void npu_mem_dev_exit(struct npu_mem_npu *npu, int idx)
	__releases(&npu->srcu);
u32 npu_mem_dev_flags(struct npu_mem_npu *npu);
void npu_mem_npu_account(struct npu_mem_npu *npu, s64 bytes, int buffers);
void npu_mem_npu_usage(const struct npu_mem_npu *npu, u64 *bytes,
		       u64 *buffers);
bool npu_mem_dev_translated(struct device *dev);
void npu_mem_device_show(struct seq_file *m);

/* buffer.c */
struct npu_mem_buf *npu_mem_buf_alloc(struct npu_mem_npu *npu, u64 size,
				      u32 policy, u32 flags,
				      const struct cred *payer, bool unlimited);
void npu_mem_bufs_revoke(struct npu_mem_npu *npu);
void npu_mem_buf_put(struct npu_mem_buf *buf);
static inline void npu_mem_buf_get(struct npu_mem_buf *buf)
{
	kref_get(&buf->ref);
}
void npu_mem_buf_describe(const struct npu_mem_buf *buf, bool sees_phys,
			  struct npu_mem_buffer *out);
bool npu_mem_buf_mapped(const struct npu_mem_buf *buf);
int npu_mem_buf_peer_map(struct npu_mem_buf *buf, struct npu_mem_npu *npu,
			 bool sees_phys, struct npu_mem_peer *out);
int npu_mem_buf_peer_unmap(struct npu_mem_buf *buf, struct npu_mem_npu *npu);
int npu_mem_buf_peer_describe(struct npu_mem_buf *buf, struct npu_mem_npu *npu,
			      bool sees_phys, struct npu_mem_peer *out);
u64 npu_mem_node_bytes(int node);
int npu_mem_buf_sync(struct npu_mem_buf *buf, u64 offset, u64 len,
		     enum dma_data_direction dir, bool for_cpu);
int npu_mem_buf_sync_request(struct npu_mem_buf *buf, u64 offset, u64 len,
			     u32 direction, bool reader);
void npu_mem_sync_piece(struct device *dev, dma_addr_t addr, size_t len,
			enum dma_data_direction dir, bool for_cpu);
struct page *npu_mem_buf_page(const struct npu_mem_buf *buf, u64 index);
int npu_mem_buf_insert_pages(struct npu_mem_buf *buf,
			     struct vm_area_struct *vma, u64 offset);
void npu_mem_retained_exit(void);

void npu_mem_bufs_registry_lock(void);
void npu_mem_bufs_registry_unlock(void);
bool npu_mem_bufs_range_live(struct npu_mem_npu *npu, u64 addr, u64 len,
			     bool write);

/* claim.c: one writable registration per page */
int npu_mem_claim_pages(struct npu_mem_buf *buf);
void npu_mem_unclaim_pages(struct npu_mem_buf *buf);

/* userptr.c: registered host memory */
struct npu_mem_buf *npu_mem_buf_register(struct npu_mem_npu *npu, u64 addr,
					 u64 size, u32 flags,
					 const struct cred *payer,
					 bool unlimited);
/* buffer.c, for userptr.c and import.c: the pieces of a buffer's life */
struct npu_mem_buf *npu_mem_buf_new(u64 size, u32 policy, u32 flags);
int npu_mem_buf_charge(struct npu_mem_buf *buf, const struct cred *payer,
		       bool unlimited);
int npu_mem_buf_map(struct npu_mem_buf *buf, struct npu_mem_npu *npu);
void npu_mem_buf_discard(struct npu_mem_buf *buf);

/* client.c */
struct npu_mem_client *npu_mem_client_create(const struct cred *cred);
void npu_mem_client_destroy(struct npu_mem_client *client);
int npu_mem_client_add(struct npu_mem_client *client, struct npu_mem_buf *buf,
		       u32 hflags, u32 *handle, struct npu_mem_buffer *desc);
int npu_mem_client_remove(struct npu_mem_client *client, u32 handle,
			  const struct npu_mem_buf *only);
int npu_mem_client_describe(struct npu_mem_client *client, u32 handle,
			    struct npu_mem_buffer *desc);
struct npu_mem_buf *npu_mem_client_lookup(struct npu_mem_client *client,
					  u32 handle, u32 *hflags);
struct npu_mem_buf *npu_mem_client_lookup_pgoff(struct npu_mem_client *client,
						unsigned long pgoff,
						u64 *first, u32 *hflags);
void npu_mem_client_show_fdinfo(struct seq_file *m,
				struct npu_mem_client *client);

/* mapping.c: the address space of CPU mappings */
int npu_mem_mapping_init(void);
void npu_mem_mapping_exit(void);
void npu_mem_mapping_attach(struct file *file);

/* mmap.c */
int npu_mem_mmap(struct file *file, struct vm_area_struct *vma);
int npu_mem_mmap_buf(struct npu_mem_buf *buf, struct vm_area_struct *vma);

/* ioctl.c */
long npu_mem_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* ipc.c: the key registry */
int npu_mem_ipc_init(void);
void npu_mem_ipc_exit(void);
int npu_mem_ipc_export(struct npu_mem_client *client, u32 handle, u32 flags,
		       u64 key[2]);
int npu_mem_ipc_set_pids(struct npu_mem_client *client, const u64 key[2],
			 const s32 __user *pids, u32 count);
struct npu_mem_buf *npu_mem_ipc_lookup(const u64 key[2], u32 *hflags);
int npu_mem_ipc_revoke(struct npu_mem_client *client, const u64 key[2]);
void npu_mem_ipc_revoke_handle(struct npu_mem_client *client, u32 handle);
void npu_mem_ipc_revoke_client(struct npu_mem_client *client);

/* dmabuf.c */
struct dma_buf *npu_mem_dmabuf_export(struct npu_mem_buf *buf, u32 flags);
struct npu_mem_buf *npu_mem_dmabuf_buf(struct dma_buf *dmabuf);

/* import.c: other drivers' dma-bufs */
struct npu_mem_buf *npu_mem_import_dmabuf(struct npu_mem_npu *npu, int fd,
					  u32 *hflags);
void npu_mem_imports_revoke(struct npu_mem_npu *npu);
void npu_mem_imports_lock(void);
void npu_mem_imports_unlock(void);
bool npu_mem_imports_range_live(struct npu_mem_npu *npu, u64 addr, u64 len,
				bool write);
int npu_mem_import_sync(struct npu_mem_buf *buf, u64 offset, u64 len, u32 dir,
			bool reader);

/* edu.c: QEMU's edu device as a test DMA engine, in test builds only */
#ifdef NPU_MEM_TEST_ENGINE
extern u64 npu_mem_test_pgoff_limit;	/* client.c, debugfs pgoff_limit */
void npu_mem_edu_probe(struct npu_mem_npu *npu, struct pci_dev *pdev);
void npu_mem_edu_remove(struct npu_mem_npu *npu, struct pci_dev *pdev);
#else
static inline void npu_mem_edu_probe(struct npu_mem_npu *npu,
				     struct pci_dev *pdev) {}
static inline void npu_mem_edu_remove(struct npu_mem_npu *npu,
				      struct pci_dev *pdev) {}
#endif

/* debugfs.c */
struct dentry *npu_mem_debugfs_dir(void);
void npu_mem_debugfs_init(void);
void npu_mem_debugfs_exit(void);

#endif /* _NPU_MEM_H */
