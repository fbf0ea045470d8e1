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
 *  -ENOMEM   no memory; the global cap (limit_bytes) would be exceeded; the
 *            allocation would leave less than the reserve (module parameter
 *            reserve_bytes) of memory available to the rest of the system;
 *            the user's RLIMIT_MEMLOCK would be exceeded (see Accounting);
 *            a HUGE_ONLY/HUGE1G_ONLY request cannot get its large pages; or
 *            the device's DMA address space (IOMMU or bounce buffers) is full
 *  -ENODEV   the NPU device was removed (NPU_MEM_DEV_REMOVED)
 *  -ENOSPC   this file's mmap offset space (2^32 pages) has no room left
 *  -EBUSY    this file already holds 2^32 - 1 handles
 *  -EOPNOTSUPP  HUGE1G_ONLY on a kernel that cannot allocate 1 GiB pages
 *  -EINTR    a fatal signal arrived during a long allocation
 * Handles: 0 is never valid; an unknown or freed handle gives -ENOENT.
 *
 * Accounting.  A buffer's pages are charged, for its whole life, to:
 *  - the memory cgroup of the process that allocated it (__GFP_ACCOUNT);
 *  - the locked-memory count of the user who opened the file (the uid of
 *    the opener's credentials, the same per-user count io_uring charges),
 *    checked against the allocating process's RLIMIT_MEMLOCK.  Per user,
 *    not per process: children that share the file, and processes it is
 *    passed to, draw on the same limit.  Files opened with CAP_IPC_LOCK
 *    are neither limited nor counted;
 *  - the allocating process's pinned_vm, shown as VmPin in
 *    /proc/PID/status (informational; not the enforced limit);
 *  - the global usage, capped at limit_bytes: module parameter max_bytes,
 *    by default 3/4 of RAM.  Each ALLOC also needs the memory the kernel
 *    counts as available (MemAvailable) to stay above reserve_bytes after
 *    it (default 1/16 of RAM), so the rest of the system keeps working and
 *    a caller gets -ENOMEM instead of the OOM killer.  Allocations in
 *    progress count as taken, so concurrent callers cannot all pass on
 *    the same free memory.
 * Privileges (CAP_IPC_LOCK above, CAP_SYS_ADMIN for device addresses) are
 * those of the credentials that opened the file, as for other files.
 *
 * What a caller sees.  GET_INFO's global totals (all users together, as in
 * /proc/meminfo) are visible to every caller; per-process usage is only in
 * the owner's fdinfo and in debugfs (root).  Without an IOMMU a device
 * address is a physical address: unless the opener had CAP_SYS_ADMIN,
 * dev_addr is 0, dev_segments 0 and NPU_MEM_BUF_DEV_CONTIG clear, with
 * NPU_MEM_BUF_DEV_HIDDEN set, so the physical layout stays private.
 *
 * Device removal.  When the NPU device goes away (PCI unbind, hot-unplug,
 * module unload of its driver), every buffer's DMA mapping is torn down;
 * buffers, handles, CPU mappings and dma-bufs stay valid as memory.  Until
 * a device is bound again, GET_INFO reports NPU_MEM_DEV_REMOVED (with
 * NPU_MEM_DEV_COHERENT and NPU_MEM_DEV_IOMMU clear: there is no device to
 * describe), and ALLOC, SYNC, EXPORT and importers' dma-buf mappings fail
 * with -ENODEV; QUERY reports NPU_MEM_BUF_DEV_UNMAPPED (dev_addr 0) for
 * buffers it unmapped; open, GET_INFO, FREE, mmap, munmap, close and the
 * dma-bufs' own mmap and DMA_BUF_IOCTL_SYNC work as always.  Buffers
 * allocated before the removal stay unmapped after a new device is bound:
 * SYNC and EXPORT of them, and importers' mappings of their dma-bufs, keep
 * failing with -ENODEV.
 *
 * CPU mappings (mmap of mmap_offset, MAP_SHARED only) are write-back cached
 * and cannot grow (mremap growth: -EFAULT).  fork() children do not inherit
 * them (VM_DONTCOPY), unless the process asked for it with
 * madvise(MADV_DOFORK): then the child shares the same pages, and its
 * mapping keeps the buffer alive like any other.
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
#define NPU_MEM_DEV_REMOVED	(1U << 3)	/* the device is gone: see Device removal */

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
 * @max_alloc: out: largest size one ALLOC accepts before rounding: the
 *	smaller of limit_bytes and NPU_MEM_MAX_ALLOC
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

/*
 * The largest buffer, whatever the RAM: its page counts fit the __u32
 * fields of struct npu_mem_buffer (16 TiB less one 2 MiB chunk).
 */
#define NPU_MEM_MAX_ALLOC	((1ULL << 44) - (1ULL << 21))

/* npu_mem_alloc.flags */
#define NPU_MEM_ALLOC_READONLY	(1U << 0)	/* CPU mappings may not be writable */
#define NPU_MEM_ALLOC_VALID	(NPU_MEM_ALLOC_READONLY)

/* npu_mem_buffer.flags */
#define NPU_MEM_BUF_READONLY	(1U << 0)	/* allocated with NPU_MEM_ALLOC_READONLY */
#define NPU_MEM_BUF_DEV_CONTIG	(1U << 1)	/* one contiguous device address range */
#define NPU_MEM_BUF_DEV_HIDDEN	(1U << 2)	/* dev_addr, dev_segments and DEV_CONTIG
						 * withheld: they are physical and the
						 * opener lacks CAP_SYS_ADMIN */
#define NPU_MEM_BUF_BOUNCED	(1U << 3)	/* the device sees bounce buffers (swiotlb):
						 * SYNC is needed even on a coherent device */
#define NPU_MEM_BUF_DEV_UNMAPPED	(1U << 4)	/* the device was removed: no device
						 * address; the memory stays usable */

/**
 * struct npu_mem_buffer - what a buffer is (out of ALLOC and QUERY)
 * @size: bytes reserved: the request rounded up to the pages backing it
 * @mmap_offset: offset to pass to mmap() on this open file to map the buffer
 * @dev_addr: the buffer's address as the NPU sees it (an IOVA under an
 *	IOMMU); 0 with NPU_MEM_BUF_DEV_HIDDEN or NPU_MEM_BUF_DEV_UNMAPPED
 * @huge_pages: 2 MiB chunks backing the buffer
 * @normal_pages: 4 KiB pages backing the buffer
 * @giant_pages: 1 GiB pages backing the buffer
 * @policy: the npu_mem_policy it was allocated with
 * @flags: NPU_MEM_BUF_*
 * @dev_segments: contiguous device address ranges the buffer occupies
 *	(1 with NPU_MEM_BUF_DEV_CONTIG; 0 when hidden or unmapped)
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
 * (including one whose end overflows); -ENOENT for an unknown handle;
 * -ENODEV once the device was removed.  Maintenance is done per physically
 * contiguous piece, so it is right under an IOMMU that merged the pieces
 * into one device range; with NPU_MEM_BUF_BOUNCED it also copies between
 * the buffer and its bounce buffers.
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
 *	a NPU_MEM_ALLOC_READONLY buffer gives -EACCES; -ENODEV once the device
 *	was removed; -EMFILE/-ENFILE when no file descriptor is free, -ENOMEM
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
