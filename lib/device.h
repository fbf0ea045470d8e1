/* SPDX-License-Identifier: MIT */
/*
 * The device file: opening it, issuing ioctls, and turning errno values
 * into ACL error codes.  The only place the library touches the kernel ABI
 * besides mmap().
 */
#ifndef ACLMEM_DEVICE_H
#define ACLMEM_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/npu_mem.h>

/* Path of the device node: $NPU_MEM_DEVICE, else /dev/npu-mem. */
const char *aclmem_device_path(void);

/* open() the node with O_RDWR | O_CLOEXEC: fd or -errno. */
int aclmem_device_open(void);

/* The most NPUs the library keeps state for: the module's limit. */
#define ACLMEM_DEVICES_MAX	64

/*
 * NPUs the module serves (GET_INFO's device_count, at most
 * ACLMEM_DEVICES_MAX; 1 from a module before ABI 1.3, or while the
 * device file cannot be opened, so that device 0's own call reports why).
 * Asked once per process.
 */
uint32_t aclmem_device_count(void);

/* ioctl() restarted on EINTR/EAGAIN: 0 or -errno. */
int aclmem_do_ioctl(int fd, unsigned long req, void *arg);

/*
 * GET_INFO about NPU dev, and ALLOC for NPU dev: the native API's
 * aclmem_get_info() and aclmem_alloc() with a device index, which they
 * leave 0 (their callers predate several NPUs).  0 or -errno.
 */
int aclmem_dev_get_info(int fd, int32_t dev, struct npu_mem_info *info);
int aclmem_dev_alloc(int fd, int32_t dev, uint64_t size, uint32_t policy,
		     uint32_t flags, uint32_t *handle,
		     struct npu_mem_buffer *buf);

/*
 * errno (positive) -> ACL code, for failures of open(), of an ioctl or of
 * mmap() on the device.  Pure functions, tested on the host.
 */
int aclmem_open_errno_to_acl(int err);
int aclmem_ioctl_errno_to_acl(int err);
int aclmem_mmap_errno_to_acl(int err);

/* What the ACL API calls need to describe a buffer after mapping it. */
uint32_t aclmem_buffer_page_size(const struct npu_mem_buffer *buf);

#endif /* ACLMEM_DEVICE_H */
