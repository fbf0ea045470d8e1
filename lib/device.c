// SPDX-License-Identifier: MIT
/*
 * Device file access.  Every ioctl goes through aclmem_do_ioctl(), which
 * restarts calls a signal interrupted (the driver returns -EINTR from long
 * allocations when a signal is pending; nothing has been done then), as
 * liburing and evdi do.
 *
 * Error mapping follows the CANN runtime: the driver rejecting an argument
 * is ACL_ERROR_RT_PARAM_INVALID, lack of memory ACL_ERROR_RT_MEMORY_ALLOCATION,
 * anything unexpected the driver's internal error.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "acl/acl_base.h"
#include "device.h"

const char *aclmem_device_path(void)
{
	/* secure_getenv: never let the environment redirect a setuid program. */
	const char *p = secure_getenv("NPU_MEM_DEVICE");

	return p && *p ? p : "/dev/" NPU_MEM_DEVICE_NAME;
}

/* Both return -errno and leave errno as they found it (liburing style). */
int aclmem_device_open(void)
{
	int saved = errno, fd;

	do {
		fd = open(aclmem_device_path(), O_RDWR | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		fd = -errno;
	errno = saved;
	return fd;
}

int aclmem_do_ioctl(int fd, unsigned long req, void *arg)
{
	int saved = errno, ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

int aclmem_dev_get_info(int fd, int32_t dev, struct npu_mem_info *info)
{
	struct npu_mem_info in;
	int ret;

	memset(&in, 0, sizeof(in));
	in.device = (uint32_t)dev;
	ret = aclmem_do_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &in);
	if (!ret)
		*info = in;
	return ret;
}

int aclmem_dev_alloc(int fd, int32_t dev, uint64_t size, uint32_t policy,
		     uint32_t flags, uint32_t *handle,
		     struct npu_mem_buffer *buf)
{
	struct npu_mem_alloc a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.size = size;
	a.policy = policy;
	a.flags = flags;
	a.device = (uint32_t)dev;
	ret = aclmem_do_ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a);
	if (ret)
		return ret;
	*handle = a.handle;
	if (buf)
		*buf = a.buf;
	return 0;
}

/*
 * Asked once: CANN too counts its devices when it starts.  The file is
 * opened for the question alone when no device is set yet; a failure
 * leaves the count unknown (1 until asked again) so that the call that
 * opens the file for good reports the reason.
 */
uint32_t aclmem_device_count(void)
{
	/* Devices the module serves, once asked; 0: not asked yet. */
	static _Atomic uint32_t dev_count;
	struct npu_mem_info info;
	uint32_t n = atomic_load(&dev_count);
	int fd, ret;

	if (n)
		return n;
	fd = aclmem_device_open();
	if (fd < 0)
		return 1;
	ret = aclmem_dev_get_info(fd, 0, &info);
	close(fd);
	if (ret)
		return 1;
	/* A module before ABI 1.3 leaves the field 0: it has one NPU. */
	n = info.device_count ? info.device_count : 1;
	if (n > ACLMEM_DEVICES_MAX)
		n = ACLMEM_DEVICES_MAX;
	atomic_store(&dev_count, n);
	return n;
}

int aclmem_open_errno_to_acl(int err)
{
	switch (err) {
	case 0:
		return ACL_SUCCESS;
	case ENOENT:	/* module not loaded, or no node made */
	case ENODEV:
	case ENXIO:
		return ACL_ERROR_RT_NO_DEVICE;
	case EACCES:
	case EPERM:
		return ACL_ERROR_RT_NO_PERMISSION;
	case ENOMEM:
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	default:
		return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
	}
}

int aclmem_ioctl_errno_to_acl(int err)
{
	switch (err) {
	case 0:
		return ACL_SUCCESS;
	case EINVAL:	/* argument refused by the driver */
	case ENOENT:	/* unknown handle */
	case EFAULT:
		return ACL_ERROR_RT_PARAM_INVALID;
	case ENOMEM:	/* no memory, a cap, RLIMIT_MEMLOCK, no huge pages */
	case E2BIG:	/* larger than the driver will ever allocate */
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	case EOPNOTSUPP:	/* e.g. 1 GiB pages on this kernel */
	case ENOTTY:	/* a module older than this library */
		return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	case EACCES:
	case EPERM:
		return ACL_ERROR_RT_NO_PERMISSION;
	case ENODEV:
		return ACL_ERROR_RT_NO_DEVICE;
	default:
		return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
	}
}

int aclmem_mmap_errno_to_acl(int err)
{
	switch (err) {
	case 0:
		return ACL_SUCCESS;
	case ENOMEM:	/* address space or vm.max_map_count exhausted */
	case EAGAIN:	/* RLIMIT_MEMLOCK */
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	case EACCES:
	case EPERM:
		return ACL_ERROR_RT_NO_PERMISSION;
	default:
		return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
	}
}

uint32_t aclmem_buffer_page_size(const struct npu_mem_buffer *buf)
{
	/*
	 * The largest pages backing it: a huge-first buffer whose tail (or a
	 * chunk that fell back) has small pages is still a huge-page buffer.
	 */
	if (buf->giant_pages)
		return 1u << 30;
	if (buf->huge_pages)
		return 2u << 20;
	return 4096;
}
