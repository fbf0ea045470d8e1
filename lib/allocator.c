// SPDX-License-Identifier: MIT
/*
 * Custom allocator descriptions and their registration per stream, with
 * CANN's checks: every setter refuses NULL; registering needs a stream
 * (the default stream, NULL, cannot have one), the allocator object and
 * the alloc, free and get-address functions (alloc-advise is optional);
 * looking up a stream without a registration is ACL_ERROR_INVALID_PARAM.
 * Registration copies the description, as CANN does.
 *
 * Nothing in libaclmem allocates workspace, so the registered allocator is
 * never called here; the table exists so that programs (and libraries
 * built on ACL) that register and look up allocators work unchanged.
 */
#include <pthread.h>
#include <stdlib.h>

#include "acl/acl_rt.h"
#include "allocator.h"

struct desc {
	aclrtAllocator obj;
	aclrtAllocatorAllocFunc alloc;
	aclrtAllocatorFreeFunc free;
	aclrtAllocatorAllocAdviseFunc advise;
	aclrtAllocatorGetAddrFromBlockFunc addr;
};

struct reg {
	struct reg *next;
	aclrtStream stream;
	aclrtAllocatorDesc handle;	/* what the program registered */
	struct desc copy;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg *regs;

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
	return calloc(1, sizeof(struct desc));
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
	if (!allocatorDesc)
		return ACL_ERROR_INVALID_PARAM;
	free(allocatorDesc);
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc,
				    aclrtAllocator allocator)
{
	if (!allocatorDesc || !allocator)
		return ACL_ERROR_INVALID_PARAM;
	((struct desc *)allocatorDesc)->obj = allocator;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
					  aclrtAllocatorAllocFunc func)
{
	if (!allocatorDesc || !func)
		return ACL_ERROR_INVALID_PARAM;
	((struct desc *)allocatorDesc)->alloc = func;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
					 aclrtAllocatorFreeFunc func)
{
	if (!allocatorDesc || !func)
		return ACL_ERROR_INVALID_PARAM;
	((struct desc *)allocatorDesc)->free = func;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetAllocAdviseFuncToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func)
{
	if (!allocatorDesc || !func)
		return ACL_ERROR_INVALID_PARAM;
	((struct desc *)allocatorDesc)->advise = func;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
	aclrtAllocatorDesc allocatorDesc,
	aclrtAllocatorGetAddrFromBlockFunc func)
{
	if (!allocatorDesc || !func)
		return ACL_ERROR_INVALID_PARAM;
	((struct desc *)allocatorDesc)->addr = func;
	return ACL_SUCCESS;
}

/* The registration of a stream; under reg_lock. */
static struct reg **find_locked(aclrtStream stream)
{
	struct reg **pr;

	for (pr = &regs; *pr; pr = &(*pr)->next)
		if ((*pr)->stream == stream)
			return pr;
	return pr;
}

aclError aclrtAllocatorRegister(aclrtStream stream,
				aclrtAllocatorDesc allocatorDesc)
{
	const struct desc *d = allocatorDesc;
	struct reg **pr, *r;

	if (!stream || !d || !d->obj || !d->alloc || !d->free || !d->addr)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&reg_lock);
	pr = find_locked(stream);
	r = *pr;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			pthread_mutex_unlock(&reg_lock);
			return ACL_ERROR_BAD_ALLOC;
		}
		r->stream = stream;
		*pr = r;
	}
	r->handle = allocatorDesc;
	r->copy = *d;
	pthread_mutex_unlock(&reg_lock);
	return ACL_SUCCESS;
}

aclError aclrtAllocatorGetByStream(aclrtStream stream,
				   aclrtAllocatorDesc *allocatorDesc,
				   aclrtAllocator *allocator,
				   aclrtAllocatorAllocFunc *allocFunc,
				   aclrtAllocatorFreeFunc *freeFunc,
				   aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
				   aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
	struct reg *r;

	if (!allocatorDesc || !stream)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&reg_lock);
	r = *find_locked(stream);
	if (r) {
		*allocatorDesc = r->handle;
		if (allocator)
			*allocator = r->copy.obj;
		if (allocFunc)
			*allocFunc = r->copy.alloc;
		if (freeFunc)
			*freeFunc = r->copy.free;
		if (allocAdviseFunc)
			*allocAdviseFunc = r->copy.advise;
		if (getAddrFromBlockFunc)
			*getAddrFromBlockFunc = r->copy.addr;
	}
	pthread_mutex_unlock(&reg_lock);
	return r ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

void aclmem_allocator_forget_stream(aclrtStream stream)
{
	struct reg **pr, *r;

	pthread_mutex_lock(&reg_lock);
	pr = find_locked(stream);
	r = *pr;
	if (r)
		*pr = r->next;
	pthread_mutex_unlock(&reg_lock);
	free(r);
}

aclError aclrtAllocatorUnregister(aclrtStream stream)
{
	/* CANN: unregistering a stream without a registration is fine. */
	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	aclmem_allocator_forget_stream(stream);
	return ACL_SUCCESS;
}

void aclmem_allocator_forget_all(void)
{
	struct reg *r;

	pthread_mutex_lock(&reg_lock);
	r = regs;
	regs = NULL;
	pthread_mutex_unlock(&reg_lock);
	while (r) {
		struct reg *next = r->next;

		free(r);
		r = next;
	}
}
