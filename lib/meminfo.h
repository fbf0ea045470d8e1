/* SPDX-License-Identifier: MIT */
/*
 * aclrtGetMemInfo: the driver's figures seen through an aclrtMemAttr.
 */
#ifndef ACLMEM_MEMINFO_H
#define ACLMEM_MEMINFO_H

#include <stddef.h>
#include <linux/npu_mem.h>

/*
 * Free and total bytes for attr given the driver's GET_INFO answer; pure,
 * tested on the host.  ACL_SUCCESS, or ACL_ERROR_INVALID_PARAM for an
 * attribute out of range.
 */
int aclmem_meminfo_compute(int attr, const struct npu_mem_info *info,
			   size_t *free_bytes, size_t *total_bytes);

#endif /* ACLMEM_MEMINFO_H */
