/* SPDX-License-Identifier: MIT */
/*
 * Stream-ordered memory pools (CANN's acl/acl_rt_memory_soma.h, an
 * experimental feature there): allocations made and freed in stream order
 * from a pool that keeps freed memory for reuse.  Names and values are
 * CANN's.  See lib/mempool.c for what this implementation does.
 */
#ifndef ACLMEM_ACL_RT_MEMORY_SOMA_H
#define ACLMEM_ACL_RT_MEMORY_SOMA_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclrtMemPool;

typedef enum aclrtMemPoolAttr {
	ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1,
	ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2,
	ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3,
	ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4,
	ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5,
	ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6,
	ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7,
	ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8,
} aclrtMemPoolAttr;

typedef struct {
	aclrtMemAllocationType allocType;
	aclrtMemHandleType handleType;
	aclrtMemLocation location;
	size_t maxSize;
	unsigned char reserved[32];
} aclrtMemPoolProps;

ACL_FUNC_VISIBILITY aclError aclrtMemPoolCreate(aclrtMemPool *memPool,
						const aclrtMemPoolProps *poolProps);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolSetAttr(aclrtMemPool memPool,
						 aclrtMemPoolAttr attr,
						 void *value);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolGetAttr(aclrtMemPool memPool,
						 aclrtMemPoolAttr attr,
						 void *value);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolMallocAsync(void **ptr, size_t size,
						     aclrtMemPool memPool,
						     aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolFreeAsync(void *ptr,
						   aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_RT_MEMORY_SOMA_H */
