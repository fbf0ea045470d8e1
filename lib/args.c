// SPDX-License-Identifier: MIT
/*
 * The argument checks that many calls share (args.h): one wording of each
 * failure, so that a call's messages and codes do not drift from its
 * neighbours'.
 */
#include "acl/acl_base.h"
#include "args.h"
#include "context.h"
#include "log.h"

bool aclmem_device_valid(int64_t id)
{
	return id >= 0 && id < (int64_t)aclmem_device_count();
}

int aclmem_arg_device(const char *fn, int64_t id)
{
	if (aclmem_device_valid(id))
		return ACL_SUCCESS;
	return aclmem_device_refused(fn, id);
}

int aclmem_device_refused(const char *fn, int64_t id)
{
	uint32_t n = aclmem_device_count();

	if (n == 1)
		return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
				   "%s: no device %lld (device 0 only)", fn,
				   (long long)id);
	return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
			   "%s: no device %lld (devices 0 to %u)", fn,
			   (long long)id, n - 1);
}

int aclmem_arg_null(const char *fn, const char *what)
{
	return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", fn, what);
}
