/* SPDX-License-Identifier: MIT */
/*
 * libaclmem native API: a thin, liburing-style layer over /dev/npu-mem.
 *
 * Every call returns 0 (or a non-negative value) on success and -errno on
 * failure; errno itself is left alone.  ioctls interrupted by a signal are
 * restarted.  The structures are the kernel's own (<linux/npu_mem.h>), so a
 * program can mix these calls with raw ioctls on the same file descriptor.
 *
 * The ACL API (<acl/acl.h>) is built on these calls but keeps its own device
 * file descriptor; buffers made here are not known to aclrtFree() and the
 * like.
 */
#ifndef ACLMEM_ACLMEM_H
#define ACLMEM_ACLMEM_H

#include <stddef.h>
#include <stdint.h>
#include <linux/npu_mem.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ACLMEM_API __attribute__((visibility("default")))
#else
#define ACLMEM_API
#endif

/* Default device node; the NPU_MEM_DEVICE environment variable overrides it. */
#define ACLMEM_DEVICE_PATH	"/dev/" NPU_MEM_DEVICE_NAME

/*
 * Open the device: a new client with its own handle table.  O_CLOEXEC is
 * always set.  Returns the file descriptor, or -ENOENT when the node is
 * missing (module not loaded), -EACCES without permission, ...
 */
ACLMEM_API int aclmem_open(void);
ACLMEM_API int aclmem_close(int fd);

/*
 * NPU_MEM_IOCTL_GET_INFO of NPU 0, the whole struct as this header has it
 * (symbol version ACLMEM_1.9).  A program linked against an older library
 * (ACLMEM_1.0) gets the struct up to @reserved, all it had room for.
 */
ACLMEM_API int aclmem_get_info(int fd, struct npu_mem_info *info);

/*
 * NPU_MEM_IOCTL_ALLOC: size bytes with an npu_mem_policy and NPU_MEM_ALLOC_*
 * flags.  On success *handle names the buffer and *buf (may be NULL)
 * describes it.
 */
ACLMEM_API int aclmem_alloc(int fd, uint64_t size, uint32_t policy,
			    uint32_t flags, uint32_t *handle,
			    struct npu_mem_buffer *buf);
ACLMEM_API int aclmem_free(int fd, uint32_t handle);
ACLMEM_API int aclmem_query(int fd, uint32_t handle, struct npu_mem_buffer *buf);

/* Cache maintenance of [offset, offset + length) in the buffer. */
ACLMEM_API int aclmem_sync(int fd, uint32_t handle, uint32_t direction,
			   uint64_t offset, uint64_t length);

/* A dma-buf for the buffer; flags: O_CLOEXEC and/or O_RDWR.  Returns its fd. */
ACLMEM_API int aclmem_export(int fd, uint32_t handle, uint32_t flags);

/*
 * Map the whole buffer shared, read-write (read-only when the buffer was
 * allocated NPU_MEM_ALLOC_READONLY).  Buffers backed by 2 MiB or 1 GiB pages
 * are mapped at an address aligned to that size, congruent with their
 * physical chunks.  The driver maps every buffer with 4 KiB page table
 * entries all the same (a PMD entry for driver pages would keep
 * get_user_pages(), and so O_DIRECT, off the mapping), so the alignment
 * does not widen the TLB reach today.  The mapping keeps the buffer alive
 * after aclmem_free(); release it with aclmem_unmap().
 */
ACLMEM_API int aclmem_map(int fd, const struct npu_mem_buffer *buf,
			  void **addr);
ACLMEM_API int aclmem_unmap(void *addr, const struct npu_mem_buffer *buf);

/* The ACL error code the ACL API would return for a native -errno. */
ACLMEM_API int aclmem_acl_error(int err);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACLMEM_H */
