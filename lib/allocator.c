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
 *
 * The table is keyed by the aclrtStream handle's value alone: it checks
 * nothing about the stream, so a registration would outlive its stream if
 * the stream's destruction did not drop it (allocator_stream_gone()).
 */
#include <pthread.h>
#include <stdlib.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "log.h"
#include "stream.h"

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
	struct desc *d = calloc(1, sizeof(*d));

	/* NULL is the failure; the code is there for aclrtGetLastError. */
	if (!d)
		aclmem_fail(ACL_ERROR_BAD_ALLOC,
			    "aclrtAllocatorCreateDesc: out of memory");
	return d;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
	if (!allocatorDesc)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorDestroyDesc: allocatorDesc is NULL");
	free(allocatorDesc);
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc,
				    aclrtAllocator allocator)
{
	if (!allocatorDesc || !allocator)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorSetObjToDesc: %s is NULL",
				   !allocatorDesc ? "allocatorDesc" : "allocator");
	((struct desc *)allocatorDesc)->obj = allocator;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
					  aclrtAllocatorAllocFunc func)
{
	if (!allocatorDesc || !func)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorSetAllocFuncToDesc: %s is NULL",
				   !allocatorDesc ? "allocatorDesc" : "func");
	((struct desc *)allocatorDesc)->alloc = func;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
					 aclrtAllocatorFreeFunc func)
{
	if (!allocatorDesc || !func)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorSetFreeFuncToDesc: %s is NULL",
				   !allocatorDesc ? "allocatorDesc" : "func");
	((struct desc *)allocatorDesc)->free = func;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetAllocAdviseFuncToDesc(
	aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func)
{
	if (!allocatorDesc || !func)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorSetAllocAdviseFuncToDesc: %s is NULL",
				   !allocatorDesc ? "allocatorDesc" : "func");
	((struct desc *)allocatorDesc)->advise = func;
	return ACL_SUCCESS;
}

aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
	aclrtAllocatorDesc allocatorDesc,
	aclrtAllocatorGetAddrFromBlockFunc func)
{
	if (!allocatorDesc || !func)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorSetGetAddrFromBlockFuncToDesc: %s is NULL",
				   !allocatorDesc ? "allocatorDesc" : "func");
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

	if (!stream || !d)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorRegister: %s",
				   !stream ? "the default stream (NULL) takes "
				   "no allocator" : "allocatorDesc is NULL");
	if (!d->obj || !d->alloc || !d->free || !d->addr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorRegister: the description has "
				   "no %s", !d->obj ? "allocator" :
				   !d->alloc ? "alloc function" :
				   !d->free ? "free function" :
				   "get-address function");
	pthread_mutex_lock(&reg_lock);
	pr = find_locked(stream);
	r = *pr;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			pthread_mutex_unlock(&reg_lock);
			return aclmem_fail(ACL_ERROR_BAD_ALLOC,
					   "aclrtAllocatorRegister: out of memory");
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
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorGetByStream: %s",
				   !allocatorDesc ? "allocatorDesc is NULL" :
				   "the default stream (NULL) has no allocator");
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
	if (!r)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorGetByStream(%p): no allocator "
				   "registered", stream);
	return ACL_SUCCESS;
}

/* Drop a stream's registration, if any. */
static void forget_stream(aclrtStream stream)
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
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtAllocatorUnregister: the default stream "
				   "(NULL) has no allocator");
	forget_stream(stream);
	return ACL_SUCCESS;
}

/* Drop every registration (aclFinalize). */
static void forget_all(void)
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

static void allocator_stream_gone(struct aclmem_stream *s)
{
	forget_stream(aclmem_stream_handle(s));
}

static void allocator_idle(bool finalize)
{
	if (finalize)
		forget_all();
}

/* The lock may be a copy of one another thread held at the fork. */
static void allocator_fork_child(void)
{
	pthread_mutex_init(&reg_lock, NULL);
	forget_all();
}

ACLMEM_PART(.rank = ACLMEM_RANK_ALLOCATOR,
	    .idle = allocator_idle,
	    .fork_child = allocator_fork_child,
	    .stream_gone = allocator_stream_gone)
