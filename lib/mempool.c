// SPDX-License-Identifier: MIT
/*
 * Stream-ordered memory pools (aclrtMemPool*, CANN's acl_rt_memory_soma.h).
 *
 * A pool hands out device memory of the device its props name (aclrtMalloc*
 * buffers of that device, whatever device is current when a block is
 * allocated, so every ACL call takes its pointers) and takes it back in
 * stream order: aclrtMemPoolFreeAsync
 * queues the return on the stream, and only when the stream reaches it does
 * the block become free for the next aclrtMemPoolMallocAsync, which takes
 * the smallest free block large enough before it allocates more.  The
 * memory is allocated when MallocAsync is called, so work queued after it
 * on any stream may use it.  Blocks above the release threshold
 * (ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, default 0: keep nothing) go
 * back to the driver when a free reaches them.
 *
 * Where CANN is silent: maxSize 0 means no limit of the pool's own (the
 * driver's caps still hold); growing past maxSize is
 * ACL_ERROR_RT_MEMORY_ALLOCATION; the three REUSE attributes are kept and
 * read back (freed blocks are only ever reused after their free ran, which
 * every one of them allows); destroying a pool releases its free blocks at
 * once and each block still in use when its free arrives; a free that a
 * stream drops (abort, forced destroy) still frees, since the program asked
 * for it.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "acl/acl_rt_memory_soma.h"
#include "args.h"
#include "context.h"
#include "log.h"
#include "memory.h"
#include "stream.h"

struct pool;

struct block {
	struct block *next;		/* the pool's, under pools_lock */
	struct pool *pool;
	void *ptr;
	size_t size;
	bool free;			/* reusable: its free has run */
	bool freeing;			/* a free is queued */
};

struct pool {
	struct pool *next;		/* live pools, under pools_lock */
	struct block *blocks;
	int32_t device;			/* whose memory it hands out */
	size_t max;
	uint64_t threshold;
	uint64_t reserved, reserved_high, used, used_high;
	int reuse[3];
	bool dead;			/* destroyed; blocks still in use */
};

static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool *pools;
/* Destroyed pools whose blocks are still in use, until the last is freed. */
static struct pool *dead_pools;

static struct pool *pool_find_locked(const void *handle)
{
	struct pool *p;

	for (p = pools; p && p != handle; p = p->next)
		;
	return p;
}

aclError aclrtMemPoolCreate(aclrtMemPool *memPool,
			    const aclrtMemPoolProps *props)
{
	struct pool *p;
	int ret;

	if (!memPool || !props)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemPoolCreate: NULL %s",
				   memPool ? "props" : "memPool");
	if (props->allocType != ACL_MEM_ALLOCATION_TYPE_PINNED ||
	    props->handleType != ACL_MEM_HANDLE_TYPE_NONE ||
	    props->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemPoolCreate: pinned device memory "
				   "without a shareable handle only");
	if (!aclmem_device_valid(props->location.id))
		return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
				   "aclrtMemPoolCreate: no device %u",
				   props->location.id);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtMemPoolCreate", ret);
	p = calloc(1, sizeof(*p));
	if (!p)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtMemPoolCreate: out of memory");
	p->max = props->maxSize;
	p->device = (int32_t)props->location.id;
	pthread_mutex_lock(&pools_lock);
	p->next = pools;
	pools = p;
	pthread_mutex_unlock(&pools_lock);
	*memPool = p;
	return ACL_SUCCESS;
}

/*
 * Take a block out of its dead pool's list; the pool goes (out of
 * dead_pools, freed by the caller) with its last block.
 */
static void block_unlink_locked(struct block *b, bool *pool_gone)
{
	struct pool *p = b->pool, **pp;
	struct block **pb;

	for (pb = &p->blocks; *pb && *pb != b; pb = &(*pb)->next)
		;
	if (*pb)
		*pb = b->next;
	p->reserved -= b->size;
	*pool_gone = !p->blocks;
	if (*pool_gone) {
		for (pp = &dead_pools; *pp && *pp != p; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = p->next;
	}
}

/*
 * Free blocks above the threshold (all of them in a dead pool) come out of
 * the list here and are released by the caller, without the lock.
 */
static struct block *trim_locked(struct pool *p)
{
	struct block *out = NULL, **pb, *b;

	for (pb = &p->blocks; (b = *pb);) {
		if (b->free && (p->dead || p->reserved > p->threshold)) {
			*pb = b->next;
			p->reserved -= b->size;
			b->next = out;
			out = b;
		} else {
			pb = &b->next;
		}
	}
	return out;
}

static void release_blocks(struct block *list)
{
	struct block *b;

	while ((b = list)) {
		list = b->next;
		aclrtFree(b->ptr);
		free(b);
	}
}

aclError aclrtMemPoolDestroy(const aclrtMemPool memPool)
{
	struct pool **pp, *p = NULL;
	struct block *out = NULL;
	bool gone = false;

	if (!memPool)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemPoolDestroy: NULL pool");
	pthread_mutex_lock(&pools_lock);
	for (pp = &pools; *pp; pp = &(*pp)->next) {
		if (*pp == memPool) {
			p = *pp;
			*pp = p->next;
			break;
		}
	}
	if (p) {
		p->dead = true;
		out = trim_locked(p);
		gone = !p->blocks;
		if (!gone) {
			p->next = dead_pools;
			dead_pools = p;
		}
	}
	pthread_mutex_unlock(&pools_lock);
	if (!p)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "aclrtMemPoolDestroy(%p): not a live pool",
				   memPool);
	release_blocks(out);
	if (gone)
		free(p);
	return ACL_SUCCESS;
}

static void account_use(struct pool *p, size_t size)
{
	p->used += size;
	if (p->used > p->used_high)
		p->used_high = p->used;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
}

/* Under pools_lock: the smallest free block of p that holds size, taken. */
static struct block *reuse_locked(struct pool *p, size_t size)
{
	struct block *b, *best = NULL;

	for (b = p->blocks; b; b = b->next)
		if (b->free && b->size >= size &&
		    (!best || b->size < best->size))
			best = b;
	if (best) {
		best->free = false;
		account_use(p, best->size);
	}
	return best;
}

/* Under pools_lock: b, new and in use, holds mem's size bytes for p. */
static void block_add_locked(struct pool *p, struct block *b, void *mem,
			     size_t size)
{
	p->reserved += size;
	b->pool = p;
	b->ptr = mem;
	b->size = size;
	b->next = p->blocks;
	p->blocks = b;
	account_use(p, size);
}

aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool,
				 aclrtStream stream)
{
	struct aclmem_stream *s;
	struct block *b;
	struct pool *p;
	void *mem;
	int ret;

	if (!ptr || !size || !memPool)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemPoolMallocAsync: NULL pointer, "
				   "pool or size 0");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtMemPoolMallocAsync", ret);
	aclmem_stream_put(s);
	pthread_mutex_lock(&pools_lock);
	p = pool_find_locked(memPool);
	if (!p) {
		pthread_mutex_unlock(&pools_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "aclrtMemPoolMallocAsync(%p): not a live pool",
				   memPool);
	}
	b = reuse_locked(p, size);
	if (b) {
		*ptr = b->ptr;
		pthread_mutex_unlock(&pools_lock);
		return ACL_SUCCESS;
	}
	if (p->max && p->reserved + size > p->max) {
		pthread_mutex_unlock(&pools_lock);
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtMemPoolMallocAsync: %zu bytes would take "
				   "the pool past its maxSize %zu", size, p->max);
	}
	/*
	 * Under the lock, so that a pool is never destroyed in the middle
	 * (the allocation takes none of this file's locks).
	 */
	ret = aclmem_mem_alloc_on(ACLMEM_API_MALLOC, &mem, size,
				  ACL_MEM_MALLOC_HUGE_FIRST, p->device);
	b = ret ? NULL : calloc(1, sizeof(*b));
	if (!b) {
		pthread_mutex_unlock(&pools_lock);
		if (!ret)
			aclrtFree(mem);
		return aclmem_api_ret("aclrtMemPoolMallocAsync",
				      ret ? ret : ACL_ERROR_RT_MEMORY_ALLOCATION);
	}
	block_add_locked(p, b, mem, size);
	pthread_mutex_unlock(&pools_lock);
	*ptr = mem;
	return ACL_SUCCESS;
}

struct free_task {
	struct aclmem_task task;
	struct block *block;
};

/* The free reached (or was dropped by) its stream: the block is free. */
static void block_freed(struct block *b)
{
	struct pool *p = b->pool;
	struct block *out;
	bool gone = false;

	pthread_mutex_lock(&pools_lock);
	b->freeing = false;
	b->free = true;
	p->used -= b->size;
	if (p->dead) {
		block_unlink_locked(b, &gone);
		b->next = NULL;
		out = b;
	} else {
		out = trim_locked(p);
	}
	pthread_mutex_unlock(&pools_lock);
	release_blocks(out);
	if (gone)
		free(p);
}

static int free_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	(void)t;
	(void)s;
	return ACL_SUCCESS;
}

static void free_release(struct aclmem_task *t, bool ran)
{
	(void)ran;
	block_freed(((struct free_task *)t)->block);
	free(t);
}

static const struct aclmem_task_ops free_ops = {
	.run = free_run,
	.release = free_release,
	.name = "mempool free",
};

aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream)
{
	struct free_task *t;
	struct block *b = NULL;
	struct pool *p;
	int ret;

	if (!ptr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemPoolFreeAsync: NULL pointer");
	t = calloc(1, sizeof(*t));
	if (!t)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtMemPoolFreeAsync: out of memory");
	pthread_mutex_lock(&pools_lock);
	for (p = pools; p && !b; p = p->next)
		for (b = p->blocks; b && b->ptr != ptr; b = b->next)
			;
	for (p = dead_pools; p && !b; p = p->next)
		for (b = p->blocks; b && b->ptr != ptr; b = b->next)
			;
	if (b && !b->free && !b->freeing)
		b->freeing = true;
	else
		b = NULL;
	pthread_mutex_unlock(&pools_lock);
	if (!b) {
		free(t);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "aclrtMemPoolFreeAsync(%p): not memory of a "
				   "live pool in use", ptr);
	}
	t->task.ops = &free_ops;
	t->block = b;
	/* On failure the release ran: the block is free at once. */
	ret = aclmem_stream_submit(stream, &t->task);
	return ret ? aclmem_api_ret("aclrtMemPoolFreeAsync", ret) : ACL_SUCCESS;
}

static aclError attr(const char *fn, aclrtMemPool memPool, aclrtMemPoolAttr a,
		     void *value, bool set)
{
	struct pool *p;
	int ret = ACL_SUCCESS;
	uint64_t *u = value;
	int *i = value;

	if (!memPool || !value)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: NULL %s", fn,
				   memPool ? "value" : "pool");
	pthread_mutex_lock(&pools_lock);
	p = pool_find_locked(memPool);
	if (!p) {
		ret = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	switch (a) {
	case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
	case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		if (set && *i != 0 && *i != 1)
			ret = ACL_ERROR_INVALID_PARAM;
		else if (set)
			p->reuse[a - 1] = *i;
		else
			*i = p->reuse[a - 1];
		break;
	case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
		if (set)
			p->threshold = *u;
		else
			*u = p->threshold;
		break;
	case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
	case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
		if (set)
			ret = ACL_ERROR_INVALID_PARAM;
		else
			*u = a == ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT ?
			     p->used : p->reserved;
		break;
	case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
	case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
		/* As CUDA's watermarks: only 0 may be set, to restart them. */
		if (set && *u)
			ret = ACL_ERROR_INVALID_PARAM;
		else if (set && a == ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH)
			p->used_high = p->used;
		else if (set)
			p->reserved_high = p->reserved;
		else
			*u = a == ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH ?
			     p->used_high : p->reserved_high;
		break;
	default:
		ret = ACL_ERROR_INVALID_PARAM;
	}
out:
	pthread_mutex_unlock(&pools_lock);
	return ret ? aclmem_fail(ret, "%s(%p, %d): not a live pool, or no such "
				 "attribute or value", fn, memPool, (int)a) :
		     ACL_SUCCESS;
}

aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr a,
			     void *value)
{
	return attr("aclrtMemPoolSetAttr", memPool, a, value, true);
}

aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr a,
			     void *value)
{
	return attr("aclrtMemPoolGetAttr", memPool, a, value, false);
}
