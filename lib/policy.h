/* SPDX-License-Identifier: MIT */
/*
 * From an ACL allocation request (size, aclrtMemMallocPolicy, which call) to
 * what is asked of the driver: CANN's size rounding and policy rules in one
 * pure function, tested on the host.
 */
#ifndef ACLMEM_POLICY_H
#define ACLMEM_POLICY_H

#include <stddef.h>
#include <stdint.h>

enum aclmem_api {
	ACLMEM_API_MALLOC,		/* aclrtMalloc */
	ACLMEM_API_MALLOC_ALIGN32,	/* aclrtMallocAlign32 */
	ACLMEM_API_MALLOC_CACHED,	/* aclrtMallocCached */
	ACLMEM_API_MALLOC_HOST,		/* aclrtMallocHost (policy ignored) */
	ACLMEM_API_DVPP_MALLOC,		/* acldvppMalloc (policy ignored) */
};

#define ACLMEM_SZ_2M	((size_t)2 << 20)
#define ACLMEM_SZ_1M	((size_t)1 << 20)

struct aclmem_alloc_req {
	size_t size;		/* bytes reserved: the usable size of the buffer */
	uint32_t kpolicy;	/* enum npu_mem_policy */
	uint32_t kflags;	/* NPU_MEM_ALLOC_* */
};

/*
 * Returns ACL_SUCCESS and fills *req, or ACL_ERROR_INVALID_PARAM for size 0
 * or a size that overflows when rounded.
 */
int aclmem_policy_resolve(enum aclmem_api api, size_t size, uint32_t policy,
			  struct aclmem_alloc_req *req);

/*
 * The granule the driver rounds a buffer of this npu_mem_policy to: the
 * pool's size classes, so one class holds buffers of one size.
 */
size_t aclmem_policy_granule(uint32_t kpolicy);

#endif /* ACLMEM_POLICY_H */
