/* SPDX-License-Identifier: MIT */
/*
 * Custom allocators (CANN's acl/acl_rt_allocator.h): a program describes
 * its own allocator and registers it for a stream, so that the runtime
 * takes workspace for work on that stream from it.  Nothing inside
 * libaclmem allocates workspace, so here registration only records the
 * description per stream and aclrtAllocatorGetByStream hands it back.
 * Included by acl_rt.h, as in CANN.
 */
#ifndef ACLMEM_ACL_RT_ALLOCATOR_H
#define ACLMEM_ACL_RT_ALLOCATOR_H

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator,
					 size_t size);
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator,
				       aclrtAllocatorBlock block);
typedef void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator,
					       size_t size,
					       aclrtAllocatorAddr addr);
typedef void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

/* A new, empty description; NULL when out of memory. */
ACL_FUNC_VISIBILITY aclrtAllocatorDesc aclrtAllocatorCreateDesc();
ACL_FUNC_VISIBILITY aclError aclrtAllocatorDestroyDesc(
	aclrtAllocatorDesc allocatorDesc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetObjToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocFuncToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetFreeFuncToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocatorFreeFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocAdviseFuncToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
	aclrtAllocatorDesc allocatorDesc,
	aclrtAllocatorGetAddrFromBlockFunc func);

/*
 * Register (replacing any earlier registration), look up and drop the
 * description of a stream.  The description is copied at registration:
 * changing or destroying it afterwards does not change what is registered,
 * but GetByStream returns the handle that was registered.
 */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorRegister(
	aclrtStream stream, aclrtAllocatorDesc allocatorDesc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorGetByStream(
	aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
	aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
	aclrtAllocatorFreeFunc *freeFunc,
	aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
	aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorUnregister(aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_RT_ALLOCATOR_H */
