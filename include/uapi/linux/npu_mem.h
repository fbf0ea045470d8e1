/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note OR MIT */
/*
 * npu-mem: pinned, DMA-mapped memory for an NPU, exposed through /dev/npu-mem.
 *
 * Object model: every open file of /dev/npu-mem is a client with its own
 * table of buffers.  A CPU mapping holds the file open (as in DRM), so the
 * client's handles are released at the last close() or munmap(), whichever
 * comes later.  A buffer is a set of physically backed, zeroed, pinned
 * pages, DMA-mapped for the NPU device when it is allocated.  A handle names
 * a buffer inside one open file only; one buffer may have handles in
 * several files (IPC_IMPORT, DMABUF_IMPORT of npu-mem's own dma-bufs).  A
 * buffer lives while any handle, CPU mapping, IPC key or dma-buf of it
 * exists.  Handles can also name registered host memory (HOST_REGISTER)
 * and other drivers' dma-bufs (DMABUF_IMPORT).
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
 * Several NPUs.  The module serves every NPU it is bound to (module
 * parameter npu_pci=, a list), each by an index, 0 .. device_count - 1 of
 * GET_INFO.  Indices follow PCI addresses: the functions there when the
 * module loads are 0, 1, ... in domain, bus, device, function order; a
 * function bound later (hotplug, new_id, driver_override) gets the next
 * index.  An index keeps its address for the module's life: a removed
 * device's index stays (NPU_MEM_DEV_REMOVED) and is its again if the same
 * address comes back.  Without a PCI NPU there is one, the module's own
 * device, index 0.  ALLOC and GET_INFO take an index in what was zero
 * space before ABI 1.3, HOST_REGISTER and DMABUF_IMPORT since ABI 1.5 (in
 * a tail an older caller does not pass, and in what was pad): a caller
 * built before then means NPU 0.  Every other call works on the NPU its
 * buffer was allocated, registered or imported for.  An index that names
 * no NPU is -EINVAL, as a non-zero pad was before (so old and new modules
 * refuse it alike); -ENODEV keeps meaning that the NPU was there and its
 * device went away.  Removing one NPU's device revokes the
 * mappings made for it only (Device removal): the others' stay.
 * Buffers of an NPU whose device is on a known NUMA node (dev_node) take
 * their pages from that node first: each policy tries every page size it
 * allows there before it takes remote memory (HUGE_FIRST: 2 MiB, then
 * 64 KiB blocks and 4 KiB pages on the node, then 4 KiB pages anywhere;
 * HUGE_ONLY: 2 MiB on the node, then anywhere; NORMAL_ONLY: 4 KiB on the
 * node, then anywhere), since remote memory slows every DMA of the device
 * while smaller pages cost only TLB misses.  QUERY tells where they went.
 *
 * Errors of NPU_MEM_IOCTL_ALLOC, documented once here:
 *  -EINVAL   size 0, unknown policy, unknown flags, non-zero pad/reserved,
 *            a device index that names no NPU
 *  -E2BIG    size overflows when rounded up, or exceeds max_alloc (GET_INFO)
 *  -ENOMEM   no memory; the global cap (limit_bytes) would be exceeded; the
 *            allocation would leave less than the reserve (module parameter
 *            reserve_bytes) of memory available to the rest of the system;
 *            the user's RLIMIT_MEMLOCK would be exceeded (see Accounting);
 *            a HUGE_ONLY/HUGE1G_ONLY request cannot get its large pages; or
 *            the device's DMA address space (IOMMU or bounce buffers) is full
 *  -ENODEV   the NPU device was removed (NPU_MEM_DEV_REMOVED): checked
 *            before any memory is taken, so it comes before -ENOMEM
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
 * These charges end when the buffer goes, except for pages that another
 * subsystem still holds then (an RDMA memory region, an io_uring fixed
 * buffer, a pipe after vmsplice, O_DIRECT in flight, process_vm_readv).
 * A reference to one 4 KiB page keeps the whole chunk it belongs to (up to
 * 2 MiB), while its holder answers for at most that one page: so such a
 * chunk is "retained" and stays charged, to the same user's locked_vm,
 * the same VmPin and the global cap, until the last reference goes.  It is
 * counted in GET_INFO's allocated_bytes and retained_bytes (not in
 * buffers, huge_pages or normal_pages, which describe live buffers) and
 * refuses ALLOCs (-ENOMEM) like a live buffer.  No kernel reports when an
 * ordinary page's last reference goes, so the module checks the retained
 * chunks' counts about every second, backing off to every 16 seconds
 * while none is let go: the charge can outlast the reference by that
 * much.  A module unload lets go of the charges of what is still retained;
 * the holder frees those pages when it is done with them.
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
 * Device removal.  When an NPU's device goes away (PCI unbind, hot-unplug,
 * module unload of its driver), every DMA mapping made for that NPU is
 * torn down, peer mappings for it included, and so are the peer mappings
 * of its own buffers (other NPUs' stay); buffers, handles, CPU mappings and
 * dma-bufs stay valid as memory.  Until a device is bound again at its
 * address, GET_INFO of its index reports NPU_MEM_DEV_REMOVED (with
 * NPU_MEM_DEV_COHERENT and NPU_MEM_DEV_IOMMU clear: there is no device to
 * describe), and ALLOC for it, SYNC and EXPORT of its buffers and
 * importers' dma-buf mappings of them fail with -ENODEV; QUERY reports
 * NPU_MEM_BUF_DEV_UNMAPPED (dev_addr 0) for buffers it unmapped; open,
 * GET_INFO, FREE, mmap, munmap, close and the dma-bufs' own mmap and
 * DMA_BUF_IOCTL_SYNC work as always.  Buffers
 * allocated before the removal stay unmapped after a new device is bound:
 * SYNC and EXPORT of them, and importers' mappings of their dma-bufs, keep
 * failing with -ENODEV.
 *
 * CPU mappings (mmap of mmap_offset, MAP_SHARED only) are write-back cached
 * and cannot grow (mremap growth: -EFAULT).  fork() children do not inherit
 * them (VM_DONTCOPY), unless the process asked for it with
 * madvise(MADV_DOFORK): then the child shares the same pages, and its
 * mapping keeps the buffer alive like any other (Linux 7.x refuses
 * MADV_DOFORK, -EINVAL, on such mappings: they cannot grow).  A buffer with 2 MiB
 * chunks gets a 2 MiB-aligned mmap_offset, mmap(NULL) gives it a 2 MiB-
 * aligned address, and it is mapped on first touch, one page-table entry
 * (PMD) for each whole 2 MiB chunk of the mapping that is so aligned, 4 KiB
 * entries for the rest (MAP_POPULATE maps it all at mmap).  A buffer of
 * 4 KiB pages only is mapped whole at mmap.  Either way the entries are
 * normal, refcounted ones: O_DIRECT, process_vm_readv, io_uring fixed
 * buffers and RDMA registration work on them.
 */
#ifndef _UAPI_LINUX_NPU_MEM_H
#define _UAPI_LINUX_NPU_MEM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define NPU_MEM_DEVICE_NAME	"npu-mem"

#define NPU_MEM_ABI_MAJOR	1
#define NPU_MEM_ABI_MINOR	5

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

/* npu_mem_info.dev_node, npu_mem_query.node: no node known */
#define NPU_MEM_NODE_NONE	0xffffffffU

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
 * @allocated_bytes: out: bytes counted against limit_bytes now, all
 *	clients: live buffers, and retained_bytes
 * @huge_pages: out: 2 MiB chunks backing buffers now, all clients
 * @normal_pages: out: 4 KiB pages backing buffers now, all clients
 * @giant_pages: out: 1 GiB pages backing buffers now, all clients
 * @buffers: out: live buffers, all clients
 * @client_buffers: out: live handles in this open file
 * @client_bytes: out: bytes behind this open file's live handles
 * @retained_bytes: out: bytes of released buffers that another subsystem
 *	still references, all users: still charged (see Accounting) until it
 *	lets go.  Since ABI 1.2 (was reserved[0]; an older module leaves it 0)
 * @device: in: the NPU that @dev_flags, @dev_node, @dev_pci_* and @dev_bytes
 *	to @dev_node_bytes describe,
 *	< @device_count (-EINVAL otherwise); 0 for a caller built before
 *	ABI 1.3, which had zero here.  Since ABI 1.3, as are the next four
 *	(they were reserved[0..2]; an older module refuses a non-zero
 *	@device with -EINVAL and leaves the rest 0)
 * @device_count: out: NPUs the module has indices for (see Several NPUs),
 *	at least 1; removed ones included.  0 from a module before ABI 1.3,
 *	which has exactly one
 * @dev_node: out: the NUMA node of @device's device, NPU_MEM_NODE_NONE
 *	when unknown
 * @dev_pci_domain: out: @device's PCI domain, with NPU_MEM_DEV_PCI
 * @dev_pci_bdf: out: @device's PCI bus << 8 | device << 3 | function,
 *	with NPU_MEM_DEV_PCI (both 0 otherwise); kept after a removal
 * @reserved: must be 0
 * @dev_bytes: out: bytes of the live buffers allocated for @device, all
 *	clients (retained chunks not included; nor registered host memory or
 *	other drivers' dma-bufs, which are not npu-mem's memory and are not
 *	in @allocated_bytes or @buffers either)
 * @dev_buffers: out: live buffers allocated for @device, all clients
 * @dev_node_bytes: out: bytes of live buffers, of any device, whose pages
 *	are on @dev_node (0 when it is NPU_MEM_NODE_NONE)
 * @zero_reserve_bytes: out: bytes of 2 MiB chunks the module holds zeroed
 *	(or being zeroed) ahead of ALLOC, all nodes: the module's memory,
 *	charged to no one and not in @allocated_bytes until ALLOC hands a
 *	chunk out
 * @zero_reserve_low: out: a node's reserve is refilled when under this
 *	(module parameter zero_reserve_low_mb; 0: never refilled)
 * @zero_reserve_high: out: and kept at most this, bytes per node
 *	(zero_reserve_high_mb, at least @zero_reserve_low; 0: off)
 *
 * @dev_bytes to @zero_reserve_high since ABI 1.4: the struct grew by them,
 * so a caller built before gets what it knew (and the command number
 * changed with the size; the module takes both).  Peer mappings
 * (PEER_MAP) add nothing to any count: they map the same pages.
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
	__u64 retained_bytes;
	__u32 device;
	__u32 device_count;
	__u32 dev_node;
	__u32 dev_pci_domain;
	__u32 dev_pci_bdf;
	__u32 reserved;
	__u64 dev_bytes;
	__u64 dev_buffers;
	__u64 dev_node_bytes;
	__u64 zero_reserve_bytes;
	__u64 zero_reserve_low;
	__u64 zero_reserve_high;
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
#define NPU_MEM_BUF_READONLY	(1U << 0)	/* allocated with NPU_MEM_ALLOC_READONLY,
						 * or a handle without write access
						 * (DMABUF_IMPORT of a read-only
						 * dma-buf, IPC_IMPORT of a key made
						 * from such a handle): CPU mappings
						 * may not be writable (mmap with
						 * PROT_WRITE: -EACCES) */
#define NPU_MEM_BUF_DEV_CONTIG	(1U << 1)	/* one contiguous device address range */
#define NPU_MEM_BUF_DEV_HIDDEN	(1U << 2)	/* dev_addr, dev_segments and DEV_CONTIG
						 * withheld: they are physical and the
						 * opener lacks CAP_SYS_ADMIN */
#define NPU_MEM_BUF_BOUNCED	(1U << 3)	/* the device sees bounce buffers (swiotlb):
						 * SYNC is needed even on a coherent device */
#define NPU_MEM_BUF_DEV_UNMAPPED	(1U << 4)	/* the device was removed: no device
						 * address; the memory stays usable */
#define NPU_MEM_BUF_HOST	(1U << 5)	/* registered host memory (HOST_REGISTER):
						 * the process's own pages, not mappable
						 * through this file; mmap_offset is 0 */
#define NPU_MEM_BUF_IMPORTED	(1U << 6)	/* this handle came from IPC_IMPORT or
						 * DMABUF_IMPORT: the memory is another
						 * file's, or another driver's */
#define NPU_MEM_BUF_FOREIGN	(1U << 7)	/* another driver's dma-buf
						 * (DMABUF_IMPORT): its exporter owns
						 * the pages; huge/normal_pages are 0 */

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
 * @device: in: the NPU to allocate for and map for (see Several NPUs);
 *	its pages come from its device's NUMA node first.  Was pad before
 *	ABI 1.3: 0, NPU 0, for older callers; older modules refuse others
 *	(-EINVAL)
 * @buf: out: the buffer's description
 */
struct npu_mem_alloc {
	__u64 size;
	__u32 policy;
	__u32 flags;
	__u32 handle;
	__u32 device;
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
 * @device: out: the index of the NPU the buffer is (or was) mapped for
 * @node: out: the NUMA node its first page is on; NPU_MEM_NODE_NONE for
 *	another driver's dma-buf (NPU_MEM_BUF_FOREIGN), whose pages are not
 *	ours
 * @off_node_pages: out: 4 KiB pages of the buffer on other nodes than
 *	@node (0: all on @node)
 * @pad: out: 0
 *
 * @device to @pad since ABI 1.3: the struct grew by them, so a caller
 * built before gets what it knew (and the command number changed with the
 * size; the module takes both).
 */
struct npu_mem_query {
	__u32 handle;
	__u32 flags;
	struct npu_mem_buffer buf;
	__u32 device;
	__u32 node;
	__u32 off_node_pages;
	__u32 pad;
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
 *
 * A read-only handle (NPU_MEM_BUF_READONLY) of a buffer that others may
 * write (one imported from a read-only dma-buf or IPC key; not a buffer
 * allocated READONLY, which no CPU writes) may not discard their writes:
 * its FROM_DEVICE is done as BIDIRECTIONAL, writing the CPU caches back
 * before invalidating them, since an invalidation alone drops dirty lines
 * on a non-coherent device.  On a NPU_MEM_BUF_BOUNCED buffer every
 * direction copies one copy over the other (the pages over what the device
 * wrote, or the device's over what the CPU wrote), so such a handle gets
 * -EACCES there: the writers sync, and their sync serves every mapping of
 * the pages.  The same holds for DMA_BUF_IOCTL_SYNC on a dma-buf opened
 * without O_RDWR (START with READ or RW, END with WRITE or RW refused on a
 * bounced buffer), and for a foreign read-only import, whose FROM_DEVICE
 * is preceded by a TO_DEVICE begin/end pair through its exporter.
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
 *	a NPU_MEM_BUF_READONLY handle gives -EACCES; -ENODEV once the device
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

/*
 * Sharing a buffer between processes by key (IPC_EXPORT, IPC_SET_PIDS,
 * IPC_IMPORT, IPC_REVOKE).
 *
 * IPC_EXPORT names a buffer of this file with a key of 128 random bits.
 * Another process that learns the key (by any channel) and is allowed to
 * may IPC_IMPORT it: it gets a handle in its own open file naming the same
 * pages and the same device mapping, which it maps, queries, syncs and
 * frees like its own, with no more access than the exporting handle had:
 * a key made from a NPU_MEM_BUF_READONLY handle gives READONLY handles.
 * Who may import:
 *  - with an allow-list (IPC_SET_PIDS), exactly the listed processes.
 *    Pids are resolved in the caller's pid namespace when they are set and
 *    kept as references to those processes, so a pid reused by another
 *    process later grants nothing;
 *  - without a list, or with NPU_MEM_IPC_ANY_PID, any process whose real
 *    and effective uid equal the exporter's, in the exporter's user
 *    namespace.  Other users, and other user namespaces, need a list.
 * The exporter's user is that of the process calling IPC_EXPORT; an
 * importer is judged by the calling process's pid and credentials (not the
 * file opener's: sharing is between processes).  A key lives until
 * IPC_REVOKE, until the exporting file FREEs the handle it was made from,
 * or until the exporting file is released (its last close() or munmap()),
 * whichever is first: then no one can import with it, and imports already
 * made keep the memory alive until they are freed.  The memory stays charged (Accounting)
 * to the exporter's user and memory cgroup for as long as any handle,
 * mapping or dma-buf of it lives.  Keys are not kept across module reloads.
 * Errors: -ENOENT for a key that names nothing (never issued, revoked, or
 * its exporter gone), -EACCES for an importer the rules above refuse,
 * -EPERM for IPC_SET_PIDS or IPC_REVOKE from a file other than the
 * exporter's, -ESRCH for a pid in IPC_SET_PIDS that names no process (or
 * a thread that is not a process's main thread; pids are checked before
 * the key), -ENOSPC for an IPC_EXPORT beyond NPU_MEM_IPC_MAX_KEYS live
 * keys of one file, -ENOMEM; IPC_IMPORT also fails as ALLOC does when the
 * file has no handle or offset space left (-EBUSY, -ENOSPC).  Duplicate
 * pids in an allow-list each take a place in it.
 */
#define NPU_MEM_IPC_ANY_PID	(1U << 0)	/* any process of the exporter's
						 * user; the allow-list is ignored
						 * (old modules: -EINVAL with
						 * NPU_MEM_IPC_KEY64) */
/*
 * A key of 64 random bits in key[0] (key[1] is 0), for APIs whose handles
 * are 64-bit integers.  Such a key admits only the processes on its
 * allow-list (none until IPC_SET_PIDS), or, exported with
 * NPU_MEM_IPC_ANY_PID, any process of the exporter's user, as a 128-bit
 * key without a list does.  64 bits suffice for that: a guess is one
 * IPC_IMPORT, about 1 us, so finding one of a file's 4096 live keys
 * (NPU_MEM_IPC_MAX_KEYS) takes 2^64 / 2 / 4096 guesses, 2.3e15: 71 years
 * on one CPU, 13 months on 64.  Only processes of the exporter's own user
 * get that far, and they may read the exporter's memory with ptrace
 * wherever Yama allows it.  A key that other users or user namespaces
 * import always needs a list.
 */
#define NPU_MEM_IPC_KEY64	(1U << 1)
#define NPU_MEM_IPC_EXPORT_VALID	(NPU_MEM_IPC_ANY_PID | NPU_MEM_IPC_KEY64)
/* Most pids one key's allow-list holds (IPC_SET_PIDS: -ENOSPC beyond). */
#define NPU_MEM_IPC_MAX_PIDS	1024
/* Most live keys one open file may have exported (IPC_EXPORT: -ENOSPC). */
#define NPU_MEM_IPC_MAX_KEYS	4096

/**
 * struct npu_mem_ipc_export - NPU_MEM_IOCTL_IPC_EXPORT
 * @handle: in: the buffer (not one that is NPU_MEM_BUF_HOST: -EINVAL)
 * @flags: in: NPU_MEM_IPC_*
 * @key: out: the key.  Each call makes a new key with its own allow-list.
 */
struct npu_mem_ipc_export {
	__u32 handle;
	__u32 flags;
	__u64 key[2];
};

/**
 * struct npu_mem_ipc_set_pids - NPU_MEM_IOCTL_IPC_SET_PIDS
 * @key: in: a key this file exported
 * @pids: in: user pointer to @count pid_t (__s32) values; each must name
 *	a live process (-ESRCH) and is added to the key's allow-list
 * @count: in: 1..NPU_MEM_IPC_MAX_PIDS (-EINVAL otherwise)
 * @flags: in: must be 0
 */
struct npu_mem_ipc_set_pids {
	__u64 key[2];
	__u64 pids;
	__u32 count;
	__u32 flags;
};

/**
 * struct npu_mem_ipc_import - NPU_MEM_IOCTL_IPC_IMPORT
 * @key: in: the exporter's key
 * @flags: in: must be 0
 * @handle: out: a new handle in this file (NPU_MEM_BUF_IMPORTED set)
 * @buf: out: the buffer's description, as QUERY gives it in this file
 *
 * -ENODEV when the buffer's device mapping is gone (Device removal).
 */
struct npu_mem_ipc_import {
	__u64 key[2];
	__u32 flags;
	__u32 handle;
	struct npu_mem_buffer buf;
};

/**
 * struct npu_mem_ipc_revoke - NPU_MEM_IOCTL_IPC_REVOKE
 * @key: in: a key this file exported; no import is possible after this
 * @flags: in: must be 0
 * @pad: must be 0
 */
struct npu_mem_ipc_revoke {
	__u64 key[2];
	__u32 flags;
	__u32 pad;
};

/* npu_mem_host_register.flags */
#define NPU_MEM_HOST_READONLY	(1U << 0)	/* the device only reads: the pages
						 * are pinned without write access */
#define NPU_MEM_HOST_VALID	(NPU_MEM_HOST_READONLY)

/**
 * struct npu_mem_host_register - NPU_MEM_IOCTL_HOST_REGISTER
 * @addr: in: start of a range of the caller's memory, page-aligned
 * @size: in: bytes, a non-zero multiple of the page size
 * @flags: in: NPU_MEM_HOST_*
 * @handle: out: a handle naming the pinned range (NPU_MEM_BUF_HOST); FREE
 *	unregisters it
 * @buf: out: its description; dev_addr is where @device sees @addr
 * @device: in: the NPU to map the range for (see Several NPUs); QUERY
 *	reports it.  Since ABI 1.5, as is @pad: the struct grew by them, so
 *	a caller built before (which passes the size up to @buf) means NPU 0
 *	(and the command number changed with the size; the module takes both)
 * @pad: must be 0
 *
 * The pages under the range are pinned for the long term (FOLL_LONGTERM)
 * and DMA-mapped for @device, charged like a buffer's (Accounting:
 * RLIMIT_MEMLOCK and VmPin, not the global cap, since no memory is added).
 * The device keeps these pages until FREE: if the process unmaps or
 * remaps the range meanwhile, its new pages are not what the device sees.
 * A registered private range stays with the parent at fork(); the child
 * gets copies.  SYNC works as for buffers.  The mapping is @device's only:
 * other NPUs' DMA does not reach it (under an IOMMU each has its own
 * address space; PEER_MAP refuses registered memory), and removing
 * @device unmaps it (QUERY: NPU_MEM_BUF_DEV_UNMAPPED) while other NPUs'
 * registrations stay.  To reach one range from two NPUs, register it
 * read-only for each, or writable for one and read-only for the rest.
 * mmap and EXPORT of the handle are refused (-EINVAL): the memory is
 * already the process's own.
 * Errors: -EINVAL for a bad address, size, flags or pad, or a @device
 * that names no NPU; -E2BIG for a size over max_alloc (GET_INFO);
 * -EFAULT for a range not wholly mapped;
 * -EOPNOTSUPP for memory that cannot be pinned for the
 * long term (I/O and PFN maps, DAX, file-backed shared mappings other than
 * shmem and hugetlbfs); -EEXIST for npu-mem's own mappings, which have a
 * device address already, and for a writable registration of a page that
 * a live writable registration (of any process, this one's own range
 * included, for any NPU) has already: a page is mapped for a device to
 * write once, or bounce buffering would give each mapping its own copy
 * and keep only one (read-only registrations may share pages with
 * anything); -ENOMEM as for ALLOC's limits; -ENODEV when @device's device
 * was removed (checked before anything is pinned, as for ALLOC).
 */
struct npu_mem_host_register {
	__u64 addr;
	__u64 size;
	__u32 flags;
	__u32 handle;
	struct npu_mem_buffer buf;
	__u32 device;
	__u32 pad;
};

/**
 * struct npu_mem_dmabuf_import - NPU_MEM_IOCTL_DMABUF_IMPORT
 * @fd: in: a dma-buf file descriptor
 * @flags: in: must be 0
 * @handle: out: a new handle (NPU_MEM_BUF_IMPORTED) naming the dma-buf
 * @device: in: the NPU to map another driver's dma-buf for (see Several
 *	NPUs); QUERY reports it.  Was pad, which had to be 0, before ABI 1.5:
 *	an older caller means NPU 0, and an older module refuses others
 *	(-EINVAL)
 * @buf: out: its description: @size is the dma-buf's, @dev_addr where the
 *	NPU sees its first byte (as for buffers, withheld without an IOMMU
 *	unless the opener had CAP_SYS_ADMIN)
 *
 * npu-mem attaches to the dma-buf as a static importer: the exporter must
 * pin the memory while it is mapped for the NPU, and exporters that can
 * only move it (dynamic-only, without pinning) fail the import with their
 * error.  The handle holds a reference to the dma-buf until FREE and the
 * last mapping; the memory stays charged to whoever the exporter charges.
 * The dma-buf file's access mode is the handle's: one opened without
 * O_RDWR (npu-mem's EXPORT without O_RDWR, DRM PRIME without DRM_RDWR, a
 * dma-heap allocation with O_RDONLY) gives a NPU_MEM_BUF_READONLY handle,
 * read-only everywhere: mmap with PROT_WRITE gives -EACCES and mprotect
 * cannot add it (also through the exporter's mmap), EXPORT with O_RDWR
 * -EACCES, IPC keys made from it give READONLY handles, and another
 * driver's read-only dma-buf is mapped for the NPU to read only
 * (DMA_TO_DEVICE).  A read-only handle on an npu-mem buffer shares that
 * buffer's device mapping, which is its owner's.
 *  - a dma-buf of npu-mem itself gives a handle on the same buffer (as
 *    IPC_IMPORT does: NPU_MEM_BUF_IMPORTED, not FOREIGN), whatever the
 *    @device (a valid one): the buffer keeps its own NPU, which QUERY
 *    reports, and PEER_MAP maps it for others;
 *  - another driver's gets NPU_MEM_BUF_FOREIGN; importing it again for
 *    the same @device, into any file, names the same import (one
 *    attachment per dma-buf and NPU, so no device maps its pages twice);
 *    importing it for another NPU makes that NPU's own import, attached
 *    and mapped for its device, with its own handle and device address
 *    (PEER_MAP refuses foreign imports: this is how two NPUs share one).
 *    Its mmap_offset maps it through the exporter's own mmap (refused
 *    with the exporter's error if it has none), SYNC maintains the whole dma-buf for the NPU through the
 *    exporter (DMA_BUF_IOCTL_SYNC's begin/end CPU access) whatever the
 *    range, once the range is checked; EXPORT, IPC_EXPORT give -EINVAL:
 *    pass the original dma-buf instead.
 * Removing an NPU's device detaches every import made for it (other
 * NPUs' stay attached): QUERY reports NPU_MEM_BUF_DEV_UNMAPPED, mmap keeps
 * working.
 * Errors: -EBADF for a bad fd, -EINVAL for a file that is not a dma-buf,
 * bad flags, a @device that names no NPU, -ENODEV when @device's device
 * was removed (for an npu-mem dma-buf: the buffer's own), -ENOMEM, and the
 * exporter's errors from attaching or mapping (see its driver).
 */
struct npu_mem_dmabuf_import {
	__u32 fd;
	__u32 flags;
	__u32 handle;
	__u32 device;
	struct npu_mem_buffer buf;
};

/*
 * Peer mappings (PEER_MAP, PEER_UNMAP, PEER_QUERY).  A buffer allocated
 * for one NPU (its own device, QUERY's device) can also be DMA-mapped for
 * another, its peer, so that the peer's DMA reaches the same pages: under
 * an IOMMU each device has its own address space, and the peer gets its
 * own device address for the buffer.  A mapping belongs to the buffer, not
 * to a handle or file: one per (buffer, peer NPU), which any handle of the
 * buffer with write access can make, query and unmap; it ends with
 * PEER_UNMAP, with the buffer (its last reference: FREE of the last
 * handle, the last munmap, the last dma-buf), when the peer's device is
 * removed, and when the buffer's own device is removed (a buffer whose own
 * mapping is gone has no device mappings at all).  Nothing more is
 * charged: the pages are the same.  SYNC maintains the CPU caches for
 * every mapping of the buffer, its own and its peers'.  Only buffers of
 * npu-mem's own pages have peer mappings: registered host memory and
 * other drivers' dma-bufs (NPU_MEM_BUF_HOST, NPU_MEM_BUF_FOREIGN) give
 * -EOPNOTSUPP; their owners map them for each device themselves.
 * Errors (all three commands):
 *  -EINVAL   non-zero flags, pad or reserved; a device index that names no
 *            NPU; the buffer's own device (PEER_MAP and PEER_UNMAP: it is
 *            mapped for it already, for its whole life; PEER_QUERY
 *            describes that mapping)
 *  -ENOENT   an unknown handle
 *  -EACCES   PEER_MAP or PEER_UNMAP through a handle that gives less access
 *            than the buffer's owner has (NPU_MEM_BUF_READONLY of an
 *            imported handle): the peer could write what it may not
 *  -EOPNOTSUPP  registered host memory or another driver's dma-buf
 *  -EEXIST   PEER_MAP: already mapped for that device
 *  -ENXIO    PEER_UNMAP, PEER_QUERY: not mapped for that device
 *  -ENODEV   PEER_MAP: the peer's device, or the buffer's own, was removed
 *  -ENOMEM   PEER_MAP: no memory, or the peer's DMA address space (IOMMU
 *            or bounce buffers) is full
 *  -EFAULT   a bad pointer; a PEER_MAP whose answer cannot be written back
 *            is undone (the buffer is not left mapped for the peer)
 */

/**
 * struct npu_mem_peer - NPU_MEM_IOCTL_PEER_MAP, _PEER_UNMAP, _PEER_QUERY
 * @handle: in: the buffer
 * @device: in: the peer NPU's index (see Several NPUs); for PEER_QUERY
 *	also the buffer's own, which describes its own mapping
 * @flags: in: must be 0
 * @buf_flags: out (PEER_MAP, PEER_QUERY): NPU_MEM_BUF_DEV_CONTIG,
 *	NPU_MEM_BUF_DEV_HIDDEN and NPU_MEM_BUF_BOUNCED for this mapping, as
 *	struct npu_mem_buffer has them for the buffer's own
 * @dev_addr: out (PEER_MAP, PEER_QUERY): the buffer's first byte as
 *	@device sees it; 0 with NPU_MEM_BUF_DEV_HIDDEN (a physical address,
 *	without an IOMMU, for an opener without CAP_SYS_ADMIN)
 * @dev_segments: out (PEER_MAP, PEER_QUERY): contiguous device address
 *	ranges of the mapping (0 when hidden)
 * @pad: must be 0
 * @reserved: must be 0
 */
struct npu_mem_peer {
	__u32 handle;
	__u32 device;
	__u32 flags;
	__u32 buf_flags;
	__u64 dev_addr;
	__u32 dev_segments;
	__u32 pad;
	__u64 reserved;
};

#define NPU_MEM_IOCTL_MAGIC	0xB9

#define NPU_MEM_IOCTL_GET_INFO	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x00, struct npu_mem_info)
#define NPU_MEM_IOCTL_ALLOC	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x01, struct npu_mem_alloc)
#define NPU_MEM_IOCTL_FREE	_IOW(NPU_MEM_IOCTL_MAGIC, 0x02, struct npu_mem_free)
#define NPU_MEM_IOCTL_QUERY	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x03, struct npu_mem_query)
#define NPU_MEM_IOCTL_SYNC	_IOW(NPU_MEM_IOCTL_MAGIC, 0x04, struct npu_mem_sync)
#define NPU_MEM_IOCTL_EXPORT	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x05, struct npu_mem_export)
#define NPU_MEM_IOCTL_IPC_EXPORT	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x06, struct npu_mem_ipc_export)
#define NPU_MEM_IOCTL_IPC_SET_PIDS	_IOW(NPU_MEM_IOCTL_MAGIC, 0x07, struct npu_mem_ipc_set_pids)
#define NPU_MEM_IOCTL_IPC_IMPORT	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x08, struct npu_mem_ipc_import)
#define NPU_MEM_IOCTL_IPC_REVOKE	_IOW(NPU_MEM_IOCTL_MAGIC, 0x09, struct npu_mem_ipc_revoke)
#define NPU_MEM_IOCTL_HOST_REGISTER	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x0a, struct npu_mem_host_register)
#define NPU_MEM_IOCTL_DMABUF_IMPORT	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x0b, struct npu_mem_dmabuf_import)
#define NPU_MEM_IOCTL_PEER_MAP	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x0c, struct npu_mem_peer)
#define NPU_MEM_IOCTL_PEER_UNMAP	_IOW(NPU_MEM_IOCTL_MAGIC, 0x0d, struct npu_mem_peer)
#define NPU_MEM_IOCTL_PEER_QUERY	_IOWR(NPU_MEM_IOCTL_MAGIC, 0x0e, struct npu_mem_peer)

#endif /* _UAPI_LINUX_NPU_MEM_H */
