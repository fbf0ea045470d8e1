/* SPDX-License-Identifier: MIT */
/*
 * The argument checks that many calls make, each written once: whether an
 * id names a device (0 .. aclmem_device_count() - 1, context.h),
 * a NULL pointer, and a range that wraps around the address space.
 *
 * They only check and word: each call still makes its checks in CANN's
 * order, so that the same argument wins when two are bad.  The int
 * helpers record the failure with aclmem_fail() (log.h) and return its
 * ACL code, or ACL_SUCCESS; a call's public name, fn, starts the message.
 */
#ifndef ACLMEM_ARGS_H
#define ACLMEM_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* Whether id names a device; any integer type of id, signed or not. */
bool aclmem_device_valid(int64_t id);

/*
 * ACL_SUCCESS if id names a device, else aclmem_device_refused(): the
 * failure ACL_ERROR_RT_INVALID_DEVICEID with "fn: no device <id> (device
 * 0 only)" or "(devices 0 to <n - 1>)".
 */
int aclmem_arg_device(const char *fn, int64_t id);
int aclmem_device_refused(const char *fn, int64_t id);

/* ACL_ERROR_INVALID_PARAM with "fn: <what> is NULL". */
int aclmem_arg_null(const char *fn, const char *what);

/* Whether [p, p + size) runs past the end of the address space. */
static inline bool aclmem_range_wraps(const void *p, uint64_t size)
{
	return size > UINTPTR_MAX - (uintptr_t)p;
}

#endif /* ACLMEM_ARGS_H */
