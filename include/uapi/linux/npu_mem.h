/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note OR MIT */
/*
 * npu-mem: pinned, DMA-mapped memory for an NPU, exposed through /dev/npu-mem.
 *
 * Object model: every open file of /dev/npu-mem is a client with its own
 * table of buffers.  A CPU mapping holds the file open (as in DRM), so the
 * client's handles are released at the last close() or munmap(), whichever
 * comes later.  A buffer is a set of physically backed, zeroed, pinned
 * pages, DMA-mapped for the NPU device when it is allocated.  A handle names
 * a buffer inside one open file only.  A buffer lives while its handle, any
 * CPU mapping of it, or any dma-buf exported from it exists.
 *
 * ABI rules (Documentation/process/botching-up-ioctls.rst):
 *  - every struct is made of __u32/__u64 only and padded to 8 bytes;
 *  - "pad" and "reserved" fields must be zero on input (-EINVAL otherwise),
 *    and unknown bits in any flags word are refused with -EINVAL;
 *  - the size encoded in the ioctl number is the size userspace was built
 *    with: a struct smaller than its ABI 1.0 size is refused (-EINVAL); once
 *    a struct has grown, an older (smaller) one is zero-extended by the
 *    kernel; a larger (newer) one is accepted when the bytes the kernel does
 *    not know are zero (-EINVAL otherwise).  Output is truncated to the
 *    caller's size.  Structs therefore only ever grow at their end;
 *  - bad user pointers give -EFAULT, unknown ioctl numbers -ENOTTY.
 *
 * Errors of NPU_MEM_IOCTL_ALLOC, documented once here:
 *  -EINVAL   size 0, unknown policy, unknown flags, non-zero pad/reserved
 *  -E2BIG    size overflows when rounded up, or exceeds max_alloc (GET_INFO)
 *  -ENOMEM   no memory, the global cap (limit_bytes) would be exceeded,
 *            RLIMIT_MEMLOCK would be exceeded (without CAP_IPC_LOCK), or a
 *            HUGE_ONLY/HUGE1G_ONLY request cannot get its large pages
 *  -EOPNOTSUPP  HUGE1G_ONLY on a kernel that cannot allocate 1 GiB pages
 *  -EINTR    a fatal signal arrived during a long allocation
 * Handles: 0 is never valid; an unknown or freed handle gives -ENOENT.
 */
#ifndef _UAPI_LINUX_NPU_MEM_H
#define _UAPI_LINUX_NPU_MEM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define NPU_MEM_DEVICE_NAME	"npu-mem"

#define NPU_MEM_ABI_MAJOR	1
#define NPU_MEM_ABI_MINOR	0

/* Page sizes, as bits of npu_mem_info.page_sizes (bit n means 2^n bytes). */
#define NPU_MEM_PAGE_4K		(1ULL << 12)
#define NPU_MEM_PAGE_2M		(1ULL << 21)
#define NPU_MEM_PAGE_1G		(1ULL << 30)

/* Page policies: how a buffer is backed.  Mirror ACL's malloc policies. */
enum npu_mem_policy {
	/*
	 * 2 MiB chunks; a chunk that cannot be had, and the tail under 2 MiB,
	 * are 4 KiB pages (in physically contiguous 64 KiB blocks where free)
	 */
	NPU_MEM_POLICY_HUGE_FIRST	= 0,
	/* 2 MiB chunks only, or -ENOMEM with nothing left allocated */
	NPU_MEM_POLICY_HUGE_ONLY	= 1,
	/* 4 KiB pages only */
	NPU_MEM_POLICY_NORMAL_ONLY	= 2,
	/* one physically contiguous 1 GiB page per GiB, or -ENOMEM/-EOPNOTSUPP */
	NPU_MEM_POLICY_HUGE1G_ONLY	= 3,
	NPU_MEM_POLICY_COUNT
};

/* npu_mem_info.dev_flags: properties of the device buffers are mapped for */
#define NPU_MEM_DEV_COHERENT	(1U << 0)	/* DMA is cache-coherent */
#define NPU_MEM_DEV_IOMMU	(1U << 1)	/* an IOMMU translates its DMA */
#define NPU_MEM_DEV_PCI		(1U << 2)	/* a PCI function, not the platform device */

/**
 * struct npu_mem_info - NPU_MEM_IOCTL_GET_INFO: driver, device and usage
 * @flags: in: must be 0
 * @abi_major: out: NPU_MEM_ABI_MAJOR of the running module
 * @abi_minor: out: NPU_MEM_ABI_MINOR of the running module
 * @page_sizes: out: bitmask of NPU_MEM_PAGE_* the module can back buffers with
 * @dev_flags: out: NPU_MEM_DEV_*
 * @total_ram: out: bytes of RAM the kernel manages
 * @free_ram: out: bytes of RAM free now
 * @limit_bytes: out: global cap on bytes in npu-mem buffers (module
 *	parameter max_bytes; total_ram when unset)
 * @max_alloc: out: largest size one ALLOC accepts before rounding
 * @allocated_bytes: out: bytes in npu-mem buffers now, all clients
 * @huge_pages: out: 2 MiB chunks backing buffers now, all clients
 * @normal_pages: out: 4 KiB pages backing buffers now, all clients
 * @giant_pages: out: 1 GiB pages backing buffers now, all clients
 * @buffers: out: live buffers, all clients
 * @client_buffers: out: live handles in this open file
 * @client_bytes: out: bytes behind this open file's live handles
 * @reserved: must be 0
 */
struct npu_mem_info {
	__u32 flags;
	__u32 abi_major;
	__u32 abi_minor;
	__u32 dev_flags;
	__u64 page_sizes;
	__u64 total_ram;
	__u64 free_ram;
	__u64 limit_bytes;
	__u64 max_alloc;
	__u64 allocated_bytes;
	__u64 huge_pages;
	__u64 normal_pages;
	__u64 giant_pages;
	__u64 buffers;
	__u64 client_buffers;
	__u64 client_bytes;
	__u64 reserved[4];
};

/* npu_mem_alloc.flags */
#define NPU_MEM_ALLOC_READONLY	(1U << 0)	/* CPU mappings may not be writable */
#define NPU_MEM_ALLOC_VALID	(NPU_MEM_ALLOC_READONLY)

/* npu_mem_buffer.flags */
#define NPU_MEM_BUF_READONLY	(1U << 0)	/* allocated with NPU_MEM_ALLOC_READONLY */
#define NPU_MEM_BUF_DEV_CONTIG	(1U << 1)	/* one contiguous device address range */
#define NPU_MEM_BUF_DEV_HIDDEN	(1U << 2)	/* dev_addr withheld: it is physical and
						 * the caller lacks CAP_SYS_ADMIN */

/**
 * struct npu_mem_buffer - what a buffer is (out of ALLOC and QUERY)
 * @size: bytes reserved: the request rounded up to the pages backing it
 * @mmap_offset: offset to pass to mmap() on this open file to map the buffer
 * @dev_addr: the buffer's address as the NPU sees it (an IOVA under an
 *	IOMMU); 0 with NPU_MEM_BUF_DEV_HIDDEN
 * @huge_pages: 2 MiB chunks backing the buffer
 * @normal_pages: 4 KiB pages backing the buffer
 * @giant_pages: 1 GiB pages backing the buffer
 * @policy: the npu_mem_policy it was allocated with
 * @flags: NPU_MEM_BUF_*
 * @dev_segments: contiguous device address ranges the buffer occupies
 *	(1 with NPU_MEM_BUF_DEV_CONTIG)
 */
struct npu_mem_buffer {
	__u64 size;
	__u64 mmap_offset;
	__u64 dev_addr;
	__u32 huge_pages;
	__u32 normal_pages;
	__u32 giant_pages;
	__u32 policy;
	__u32 flags;
	__u32 dev_segments;
};

/**
 * struct npu_mem_alloc - NPU_MEM_IOCTL_ALLOC
 * @size: in: bytes wanted (rounded up to the backing page size)
 * @policy: in: enum npu_mem_policy
 * @flags: in: NPU_MEM_ALLOC_*
 * @handle: out: the new buffer's handle in this open file (never 0)
 * @pad: must be 0
 * @buf: out: the buffer's description
 */
struct npu_mem_alloc {
	__u64 size;
	__u32 policy;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	struct npu_mem_buffer buf;
};

/**
 * struct npu_mem_free - NPU_MEM_IOCTL_FREE
 * @handle: in: the buffer to release.  Memory still mapped or exported is
 *	freed when the last mapping or dma-buf goes away.
 * @flags: in: must be 0
 */
struct npu_mem_free {
	__u32 handle;
	__u32 flags;
};

/**
 * struct npu_mem_query - NPU_MEM_IOCTL_QUERY
 * @handle: in: the buffer to describe
 * @flags: in: must be 0
 * @buf: out: as ALLOC returned it
 */
struct npu_mem_query {
	__u32 handle;
	__u32 flags;
	struct npu_mem_buffer buf;
};

/* npu_mem_sync.direction: the DMA API's, seen from the device */
enum npu_mem_sync_dir {
	NPU_MEM_SYNC_TO_DEVICE		= 1,	/* CPU wrote: clean (write back) */
	NPU_MEM_SYNC_FROM_DEVICE	= 2,	/* device wrote: invalidate */
	NPU_MEM_SYNC_BIDIRECTIONAL	= 3,	/* both */
};

/**
 * struct npu_mem_sync - NPU_MEM_IOCTL_SYNC: CPU cache maintenance on a range
 * @handle: in: the buffer
 * @direction: in: enum npu_mem_sync_dir
 * @offset: in: first byte, from the buffer's start
 * @length: in: bytes, > 0; offset + length must not pass the buffer's end
 * @reserved: must be 0
 *
 * -EINVAL for length 0, an unknown direction, or a range outside the buffer
 * (including one whose end overflows); -ENOENT for an unknown handle.
 */
struct npu_mem_sync {
	__u32 handle;
	__u32 direction;
	__u64 offset;
	__u64 length;
	__u64 reserved;
};

/**
 * struct npu_mem_export - NPU_MEM_IOCTL_EXPORT: a dma-buf for a buffer
 * @handle: in: the buffer
 * @flags: in: O_CLOEXEC and/or O_RDWR, nothing else (-EINVAL); O_RDWR on
 *	a NPU_MEM_ALLOC_READONLY buffer gives -EACCES
 * @fd: out: the dma-buf file descriptor
 * @pad: must be 0
 */
struct npu_mem_export {
	__u32 handle;
	__u32 flags;
	__u32 fd;
	__u32 pad;
};

#define NPU_MEM_IOCTL_MAGIC	0xB9

#define NPU_MEM_IOCTL_GET_INFO	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x00, struct npu_mem_info)
#define NPU_MEM_IOCTL_ALLOC	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x01, struct npu_mem_alloc)
#define NPU_MEM_IOCTL_FREE	_IOW(NPU_MEM_IOCTL_MAGIC, 0x02, struct npu_mem_free)
#define NPU_MEM_IOCTL_QUERY	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x03, struct npu_mem_query)
#define NPU_MEM_IOCTL_SYNC	_IOW(NPU_MEM_IOCTL_MAGIC, 0x04, struct npu_mem_sync)
#define NPU_MEM_IOCTL_EXPORT	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x05, struct npu_mem_export)

#endif /* _UAPI_LINUX_NPU_MEM_H */
