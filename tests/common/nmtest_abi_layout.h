/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_abi_layout.h: the frozen layout of the npu-mem UAPI structs
 * (ABI 1.0, the structs later minors added, and the fields they appended).
 *
 * These numbers are the ABI: a v1 binary built with any compiler, 32- or
 * 64-bit, must see exactly these sizes and offsets.  Structs may only grow at
 * their end (a new version appends fields; nothing here may change).
 *
 * Including this header after <linux/npu_mem.h> checks every number with
 * _Static_assert; tests/host/uapi_layout compiles it with -m32 and -m64.
 * The X-macros let tests walk the table.
 */
#ifndef NMTEST_ABI_LAYOUT_H
#define NMTEST_ABI_LAYOUT_H

#include <stddef.h>
#include <linux/npu_mem.h>

/* X(struct tag, sizeof) */
#define NM_ABI_STRUCTS(X)			\
	X(npu_mem_info, 192)			\
	X(npu_mem_buffer, 48)			\
	X(npu_mem_alloc, 72)			\
	X(npu_mem_free, 8)			\
	X(npu_mem_query, 72)			\
	X(npu_mem_sync, 32)			\
	X(npu_mem_export, 16)			\
	X(npu_mem_ipc_export, 24)		\
	X(npu_mem_ipc_set_pids, 32)		\
	X(npu_mem_ipc_import, 72)		\
	X(npu_mem_ipc_revoke, 24)		\
	X(npu_mem_host_register, 80)		\
	X(npu_mem_dmabuf_import, 64)		\
	X(npu_mem_peer, 40)

/* X(struct tag, member, offsetof, sizeof) -- every member, in order */
#define NM_ABI_FIELDS(X)					\
	X(npu_mem_info, flags, 0, 4)				\
	X(npu_mem_info, abi_major, 4, 4)			\
	X(npu_mem_info, abi_minor, 8, 4)			\
	X(npu_mem_info, dev_flags, 12, 4)			\
	X(npu_mem_info, page_sizes, 16, 8)			\
	X(npu_mem_info, total_ram, 24, 8)			\
	X(npu_mem_info, free_ram, 32, 8)			\
	X(npu_mem_info, limit_bytes, 40, 8)			\
	X(npu_mem_info, max_alloc, 48, 8)			\
	X(npu_mem_info, allocated_bytes, 56, 8)			\
	X(npu_mem_info, huge_pages, 64, 8)			\
	X(npu_mem_info, normal_pages, 72, 8)			\
	X(npu_mem_info, giant_pages, 80, 8)			\
	X(npu_mem_info, buffers, 88, 8)				\
	X(npu_mem_info, client_buffers, 96, 8)			\
	X(npu_mem_info, client_bytes, 104, 8)			\
	X(npu_mem_info, retained_bytes, 112, 8)			\
	X(npu_mem_info, device, 120, 4)				\
	X(npu_mem_info, device_count, 124, 4)			\
	X(npu_mem_info, dev_node, 128, 4)			\
	X(npu_mem_info, dev_pci_domain, 132, 4)			\
	X(npu_mem_info, dev_pci_bdf, 136, 4)			\
	X(npu_mem_info, reserved, 140, 4)			\
	X(npu_mem_info, dev_bytes, 144, 8)			\
	X(npu_mem_info, dev_buffers, 152, 8)			\
	X(npu_mem_info, dev_node_bytes, 160, 8)		\
	X(npu_mem_info, zero_reserve_bytes, 168, 8)		\
	X(npu_mem_info, zero_reserve_low, 176, 8)		\
	X(npu_mem_info, zero_reserve_high, 184, 8)		\
	X(npu_mem_buffer, size, 0, 8)				\
	X(npu_mem_buffer, mmap_offset, 8, 8)			\
	X(npu_mem_buffer, dev_addr, 16, 8)			\
	X(npu_mem_buffer, huge_pages, 24, 4)			\
	X(npu_mem_buffer, normal_pages, 28, 4)			\
	X(npu_mem_buffer, giant_pages, 32, 4)			\
	X(npu_mem_buffer, policy, 36, 4)			\
	X(npu_mem_buffer, flags, 40, 4)				\
	X(npu_mem_buffer, dev_segments, 44, 4)			\
	X(npu_mem_alloc, size, 0, 8)				\
	X(npu_mem_alloc, policy, 8, 4)				\
	X(npu_mem_alloc, flags, 12, 4)				\
	X(npu_mem_alloc, handle, 16, 4)				\
	X(npu_mem_alloc, device, 20, 4)				\
	X(npu_mem_alloc, buf, 24, 48)				\
	X(npu_mem_free, handle, 0, 4)				\
	X(npu_mem_free, flags, 4, 4)				\
	X(npu_mem_query, handle, 0, 4)				\
	X(npu_mem_query, flags, 4, 4)				\
	X(npu_mem_query, buf, 8, 48)				\
	X(npu_mem_query, device, 56, 4)				\
	X(npu_mem_query, node, 60, 4)				\
	X(npu_mem_query, off_node_pages, 64, 4)			\
	X(npu_mem_query, pad, 68, 4)				\
	X(npu_mem_sync, handle, 0, 4)				\
	X(npu_mem_sync, direction, 4, 4)			\
	X(npu_mem_sync, offset, 8, 8)				\
	X(npu_mem_sync, length, 16, 8)				\
	X(npu_mem_sync, reserved, 24, 8)			\
	X(npu_mem_export, handle, 0, 4)				\
	X(npu_mem_export, flags, 4, 4)				\
	X(npu_mem_export, fd, 8, 4)				\
	X(npu_mem_export, pad, 12, 4)				\
	X(npu_mem_ipc_export, handle, 0, 4)			\
	X(npu_mem_ipc_export, flags, 4, 4)			\
	X(npu_mem_ipc_export, key, 8, 16)			\
	X(npu_mem_ipc_set_pids, key, 0, 16)			\
	X(npu_mem_ipc_set_pids, pids, 16, 8)			\
	X(npu_mem_ipc_set_pids, count, 24, 4)			\
	X(npu_mem_ipc_set_pids, flags, 28, 4)			\
	X(npu_mem_ipc_import, key, 0, 16)			\
	X(npu_mem_ipc_import, flags, 16, 4)			\
	X(npu_mem_ipc_import, handle, 20, 4)			\
	X(npu_mem_ipc_import, buf, 24, 48)			\
	X(npu_mem_ipc_revoke, key, 0, 16)			\
	X(npu_mem_ipc_revoke, flags, 16, 4)			\
	X(npu_mem_ipc_revoke, pad, 20, 4)			\
	X(npu_mem_host_register, addr, 0, 8)			\
	X(npu_mem_host_register, size, 8, 8)			\
	X(npu_mem_host_register, flags, 16, 4)			\
	X(npu_mem_host_register, handle, 20, 4)			\
	X(npu_mem_host_register, buf, 24, 48)			\
	X(npu_mem_host_register, device, 72, 4)			\
	X(npu_mem_host_register, pad, 76, 4)			\
	X(npu_mem_dmabuf_import, fd, 0, 4)			\
	X(npu_mem_dmabuf_import, flags, 4, 4)			\
	X(npu_mem_dmabuf_import, handle, 8, 4)			\
	X(npu_mem_dmabuf_import, device, 12, 4)			\
	X(npu_mem_dmabuf_import, buf, 16, 48)			\
	X(npu_mem_peer, handle, 0, 4)				\
	X(npu_mem_peer, device, 4, 4)				\
	X(npu_mem_peer, flags, 8, 4)				\
	X(npu_mem_peer, buf_flags, 12, 4)			\
	X(npu_mem_peer, dev_addr, 16, 8)			\
	X(npu_mem_peer, dev_segments, 24, 4)			\
	X(npu_mem_peer, pad, 28, 4)				\
	X(npu_mem_peer, reserved, 32, 8)

/* X(command, direction, nr, struct tag) */
#define NM_ABI_IOCTLS(X)						\
	X(NPU_MEM_IOCTL_GET_INFO, _IOC_READ | _IOC_WRITE, 0x00, npu_mem_info) \
	X(NPU_MEM_IOCTL_ALLOC, _IOC_READ | _IOC_WRITE, 0x01, npu_mem_alloc) \
	X(NPU_MEM_IOCTL_FREE, _IOC_WRITE, 0x02, npu_mem_free)		\
	X(NPU_MEM_IOCTL_QUERY, _IOC_READ | _IOC_WRITE, 0x03, npu_mem_query) \
	X(NPU_MEM_IOCTL_SYNC, _IOC_WRITE, 0x04, npu_mem_sync)		\
	X(NPU_MEM_IOCTL_EXPORT, _IOC_READ | _IOC_WRITE, 0x05, npu_mem_export) \
	X(NPU_MEM_IOCTL_IPC_EXPORT, _IOC_READ | _IOC_WRITE, 0x06, npu_mem_ipc_export) \
	X(NPU_MEM_IOCTL_IPC_SET_PIDS, _IOC_WRITE, 0x07, npu_mem_ipc_set_pids) \
	X(NPU_MEM_IOCTL_IPC_IMPORT, _IOC_READ | _IOC_WRITE, 0x08, npu_mem_ipc_import) \
	X(NPU_MEM_IOCTL_IPC_REVOKE, _IOC_WRITE, 0x09, npu_mem_ipc_revoke) \
	X(NPU_MEM_IOCTL_HOST_REGISTER, _IOC_READ | _IOC_WRITE, 0x0a, npu_mem_host_register) \
	X(NPU_MEM_IOCTL_DMABUF_IMPORT, _IOC_READ | _IOC_WRITE, 0x0b, npu_mem_dmabuf_import) \
	X(NPU_MEM_IOCTL_PEER_MAP, _IOC_READ | _IOC_WRITE, 0x0c, npu_mem_peer) \
	X(NPU_MEM_IOCTL_PEER_UNMAP, _IOC_WRITE, 0x0d, npu_mem_peer)	\
	X(NPU_MEM_IOCTL_PEER_QUERY, _IOC_READ | _IOC_WRITE, 0x0e, npu_mem_peer)

#define NM_SA_STRUCT(s, size)						\
	_Static_assert(sizeof(struct s) == (size),			\
		       "sizeof(struct " #s ") != " #size);		\
	_Static_assert(sizeof(struct s) % 8 == 0,			\
		       "struct " #s " is not padded to 8 bytes");
#define NM_SA_FIELD(s, f, off, size)					\
	_Static_assert(offsetof(struct s, f) == (off),			\
		       "offsetof(struct " #s ", " #f ") != " #off);	\
	_Static_assert(sizeof(((struct s *)0)->f) == (size),		\
		       "sizeof(struct " #s "." #f ") != " #size);
#define NM_SA_IOCTL(cmd, dir, nr, s)					\
	_Static_assert((cmd) == _IOC((dir), 0xB9, (nr), sizeof(struct s)), \
		       #cmd " has the wrong encoding");

NM_ABI_STRUCTS(NM_SA_STRUCT)
NM_ABI_FIELDS(NM_SA_FIELD)
NM_ABI_IOCTLS(NM_SA_IOCTL)
_Static_assert(NPU_MEM_IOCTL_MAGIC == 0xB9, "ioctl magic changed");
_Static_assert(NPU_MEM_ABI_MAJOR == 1, "ABI major changed");

#endif /* NMTEST_ABI_LAYOUT_H */
