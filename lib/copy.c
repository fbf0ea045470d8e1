// SPDX-License-Identifier: MIT
/*
 * Copies and fills.  Device memory is mapped into the process, so the work
 * is a CPU memmove/memset; what the library adds is CANN's checking: the
 * device side of a call must lie inside one live device buffer, so a stale
 * or out-of-range pointer is refused instead of corrupting a neighbour.
 *
 * Host pointers cannot be checked in general (any memory of the process
 * will do); when one points into a buffer ACL allocated, its range is held
 * to that buffer's end like a device pointer's.
 */
#include <string.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "copy.h"
#include "memory.h"

/* One side of a copy: device (must be a live device buffer) or host. */
static int check_side(const void *p, size_t count, int device, int writing)
{
	struct aclmem_range r;

	switch (aclmem_mem_lookup(p, count, &r)) {
	case ACLMEM_RANGE_INSIDE:
		if (device && r.kind != ACLMEM_BUF_DEVICE)
			return ACL_ERROR_RT_PARAM_INVALID;
		if (writing && r.readonly)
			return ACL_ERROR_RT_PARAM_INVALID;
		return ACL_SUCCESS;
	case ACLMEM_RANGE_NONE:
		return device ? ACL_ERROR_RT_PARAM_INVALID : ACL_SUCCESS;
	case ACLMEM_RANGE_OVERRUN:
	default:
		return ACL_ERROR_RT_PARAM_INVALID;
	}
}

int aclmem_copy_recheck(void *dst, size_t destMax, const void *src,
			size_t count, int kind)
{
	int dst_dev, src_dev, ret;

	if (count > destMax)
		return ACL_ERROR_RT_PARAM_INVALID;
	switch (kind) {
	case ACL_MEMCPY_HOST_TO_HOST:
	case ACL_MEMCPY_DEFAULT:
		dst_dev = src_dev = 0;
		break;
	case ACL_MEMCPY_HOST_TO_DEVICE:
	case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
		dst_dev = 1;
		src_dev = 0;
		break;
	case ACL_MEMCPY_DEVICE_TO_HOST:
		dst_dev = 0;
		src_dev = 1;
		break;
	case ACL_MEMCPY_DEVICE_TO_DEVICE:
		dst_dev = src_dev = 1;
		break;
	default:
		return ACL_ERROR_INVALID_PARAM;
	}
	ret = check_side(dst, count, dst_dev, 1);
	if (!ret)
		ret = check_side(src, count, src_dev, 0);
	return ret;
}

int aclmem_copy_check(void *dst, size_t destMax, const void *src,
		      size_t count, int kind)
{
	int ret;

	if (!dst || !src)
		return ACL_ERROR_INVALID_PARAM;
	if (kind < ACL_MEMCPY_HOST_TO_HOST ||
	    kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	return aclmem_copy_recheck(dst, destMax, src, count, kind);
}

void aclmem_copy_run(void *dst, const void *src, size_t count)
{
	/* Ranges may overlap within one buffer (device to device). */
	memmove(dst, src, count);
}

int aclmem_set_recheck(void *devPtr, size_t maxCount, size_t count)
{
	if (count > maxCount)
		return ACL_ERROR_RT_PARAM_INVALID;
	return check_side(devPtr, count, 1, 1);
}

int aclmem_set_check(void *devPtr, size_t maxCount, size_t count)
{
	int ret;

	if (!devPtr)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	return aclmem_set_recheck(devPtr, maxCount, count);
}

void aclmem_set_run(void *devPtr, int32_t value, size_t count)
{
	/* The device fills bytes with the value's low byte, like memset(). */
	memset(devPtr, (int)(uint8_t)value, count);
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	int ret;

	/* CANN returns before any other check when there is nothing to do. */
	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_copy_check(dst, destMax, src, count, (int)kind);
	if (ret)
		return ret;
	aclmem_copy_run(dst, src, count);
	return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
		     size_t count)
{
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_set_check(devPtr, maxCount, count);
	if (ret)
		return ret;
	aclmem_set_run(devPtr, value, count);
	return ACL_SUCCESS;
}
