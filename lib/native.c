// SPDX-License-Identifier: MIT
/*
 * The native API (<aclmem/aclmem.h>): one call per ioctl, 0 or -errno.
 * Structures are zeroed before use so that pad and reserved fields, which
 * the driver requires to be zero, always are.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aclmem/aclmem.h"
#include "device.h"

int aclmem_open(void)
{
	return aclmem_device_open();
}

int aclmem_close(int fd)
{
	int saved = errno, ret = 0;

	/* Linux always releases the descriptor, even on EINTR: never retry. */
	if (close(fd) < 0 && errno != EINTR)
		ret = -errno;
	errno = saved;
	return ret;
}

static int get_info(int fd, struct npu_mem_info *info, size_t len)
{
	struct npu_mem_info in;
	int ret;

	if (!info)
		return -EFAULT;
	ret = aclmem_dev_get_info(fd, 0, &in);
	if (!ret)
		memcpy(info, &in, len);
	return ret;
}

/*
 * Two versions of aclmem_get_info, since the call has no size: a program
 * linked before ABI 1.4 (version ACLMEM_1.0) has the struct without the
 * per-device and zero reserve fields, and gets no more than that; one
 * linked since gets the whole struct (ACLMEM_1.9, the default).
 */
__attribute__((symver("aclmem_get_info@ACLMEM_1.0"))) ACLMEM_API
int aclmem_get_info_1_0(int fd, struct npu_mem_info *info);
int aclmem_get_info_1_0(int fd, struct npu_mem_info *info)
{
	return get_info(fd, info, offsetof(struct npu_mem_info, dev_bytes));
}

__attribute__((symver("aclmem_get_info@@ACLMEM_1.9"))) ACLMEM_API
int aclmem_get_info_1_9(int fd, struct npu_mem_info *info);
int aclmem_get_info_1_9(int fd, struct npu_mem_info *info)
{
	return get_info(fd, info, sizeof(*info));
}

int aclmem_alloc(int fd, uint64_t size, uint32_t policy, uint32_t flags,
		 uint32_t *handle, struct npu_mem_buffer *buf)
{
	if (!handle)
		return -EFAULT;
	return aclmem_dev_alloc(fd, 0, size, policy, flags, handle, buf);
}

int aclmem_free(int fd, uint32_t handle)
{
	struct npu_mem_free f;

	memset(&f, 0, sizeof(f));
	f.handle = handle;
	return aclmem_do_ioctl(fd, NPU_MEM_IOCTL_FREE, &f);
}

int aclmem_query(int fd, uint32_t handle, struct npu_mem_buffer *buf)
{
	struct npu_mem_query q;
	int ret;

	if (!buf)
		return -EFAULT;
	memset(&q, 0, sizeof(q));
	q.handle = handle;
	ret = aclmem_do_ioctl(fd, NPU_MEM_IOCTL_QUERY, &q);
	if (!ret)
		*buf = q.buf;
	return ret;
}

int aclmem_sync(int fd, uint32_t handle, uint32_t direction, uint64_t offset,
		uint64_t length)
{
	struct npu_mem_sync s;

	memset(&s, 0, sizeof(s));
	s.handle = handle;
	s.direction = direction;
	s.offset = offset;
	s.length = length;
	return aclmem_do_ioctl(fd, NPU_MEM_IOCTL_SYNC, &s);
}

int aclmem_export(int fd, uint32_t handle, uint32_t flags)
{
	struct npu_mem_export e;
	int ret;

	memset(&e, 0, sizeof(e));
	e.handle = handle;
	e.flags = flags;
	ret = aclmem_do_ioctl(fd, NPU_MEM_IOCTL_EXPORT, &e);
	return ret ? ret : (int)e.fd;
}

static size_t map_align(const struct npu_mem_buffer *buf)
{
	if (buf->giant_pages)
		return (size_t)1 << 30;
	if (buf->huge_pages)
		return (size_t)2 << 20;
	return 0;
}

static int map(int fd, const struct npu_mem_buffer *buf, void **addr)
{
	int prot = PROT_READ;
	size_t len, align;
	uint8_t *p, *want;

	if (!buf || !addr)
		return -EFAULT;
	len = buf->size;
	if (!len || len != buf->size)
		return -EINVAL;
	if (!(buf->flags & NPU_MEM_BUF_READONLY))
		prot |= PROT_WRITE;

	align = map_align(buf);
	if (!align || len > SIZE_MAX - align) {
		p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)buf->mmap_offset);
		if (p == MAP_FAILED)
			return -errno;
		*addr = p;
		return 0;
	}
	/*
	 * Put the buffer at a virtual address aligned like its physical
	 * chunks, so the driver maps each 2 MiB chunk with one PMD: reserve
	 * address space with room to align, map the buffer over the aligned
	 * part, give back the slack on both sides.  Drivers since ABI 1.1 pick
	 * such an address themselves; this keeps older ones, and 1 GiB
	 * pages, aligned too.
	 */
	p = mmap(NULL, len + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	want = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	/*
	 * MAP_POPULATE: the driver maps large chunks on first touch, one
	 * fault per 2 MiB; doing them here, inside the kernel, measured 1 to
	 * 10% faster over allocation + first touch + release (make bench,
	 * "populate" row), and the first access after aclrtMalloc never
	 * faults.
	 */
	if (mmap(want, len, prot, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd,
		 (off_t)buf->mmap_offset) == MAP_FAILED) {
		int err = errno;

		munmap(p, len + align);
		return -err;
	}
	if (want > p)
		munmap(p, (size_t)(want - p));
	if (want + len < p + len + align)
		munmap(want + len, (size_t)(p + len + align - (want + len)));
	*addr = want;
	return 0;
}

int aclmem_map(int fd, const struct npu_mem_buffer *buf, void **addr)
{
	int saved = errno, ret = map(fd, buf, addr);

	errno = saved;
	return ret;
}

int aclmem_unmap(void *addr, const struct npu_mem_buffer *buf)
{
	int saved = errno, ret;

	if (!addr || !buf)
		return -EFAULT;
	ret = munmap(addr, buf->size) ? -errno : 0;
	errno = saved;
	return ret;
}

int aclmem_acl_error(int err)
{
	return aclmem_ioctl_errno_to_acl(err < 0 ? -err : err);
}
