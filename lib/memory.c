// SPDX-License-Identifier: MIT
/*
 * aclrtMalloc and its family, aclrtFree, and the table of live buffers.
 *
 * The table is an AVL tree under a read-write lock: range lookups (memset,
 * memcpy, flush, attributes) share it, allocation and free take it alone
 * for an O(log n) insert or remove.  Nothing slow (ioctl, mmap, munmap) runs
 * under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "acl/acl_rt.h"
#include "aclmem/aclmem.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "pool.h"

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct addrtree table;

static inline struct aclmem_buf *to_buf(struct addrtree_node *n)
{
	return (struct aclmem_buf *)((char *)n - offsetof(struct aclmem_buf, node));
}

/* One driver buffer, mapped; ACL code. */
static int buf_create(const struct aclmem_alloc_req *req, uint8_t kind,
		      struct aclmem_buf **out)
{
	int fd = aclmem_ctx_fd();
	struct npu_mem_buffer kb;
	struct aclmem_buf *b;
	uint32_t handle;
	void *addr;
	int ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	ret = aclmem_alloc(fd, req->size, req->kpolicy, req->kflags, &handle, &kb);
	if (ret) {
		aclmem_info("alloc of %zu bytes (policy %u) failed: %s",
			    req->size, req->kpolicy, strerror(-ret));
		free(b);
		return aclmem_ioctl_errno_to_acl(-ret);
	}
	ret = aclmem_map(fd, &kb, &addr);
	if (ret) {
		aclmem_err("mmap of %llu bytes failed: %s",
			   (unsigned long long)kb.size, strerror(-ret));
		aclmem_free(fd, handle);
		free(b);
		return aclmem_mmap_errno_to_acl(-ret);
	}
	b->addr = addr;
	b->node.key = (uintptr_t)addr;
	b->map_len = kb.size;
	b->handle = handle;
	b->kpolicy = req->kpolicy;
	b->kflags = req->kflags;
	b->page_size = aclmem_buffer_page_size(&kb);
	b->kind = kind;
	*out = b;
	return ACL_SUCCESS;
}

void aclmem_buf_release(struct aclmem_buf *b)
{
	int ret;

	if (munmap(b->addr, b->map_len))
		aclmem_err("munmap(%p, %zu): %s", b->addr, b->map_len,
			   strerror(errno));
	ret = aclmem_free(aclmem_ctx_fd(), b->handle);
	if (ret)
		aclmem_err("FREE of handle %u: %s", b->handle, strerror(-ret));
	free(b);
}

static size_t size_class(const struct aclmem_alloc_req *req)
{
	size_t g = aclmem_policy_granule(req->kpolicy);

	if (req->size > SIZE_MAX - (g - 1))
		return 0;
	return (req->size + g - 1) & ~(g - 1);
}

int aclmem_mem_alloc(enum aclmem_api api, void **ptr, size_t size,
		     uint32_t policy)
{
	uint8_t kind = api == ACLMEM_API_MALLOC_HOST ? ACLMEM_BUF_HOST :
						       ACLMEM_BUF_DEVICE;
	struct aclmem_pool *pool;
	struct aclmem_alloc_req req;
	struct aclmem_buf *b;
	size_t cls;
	int ret;

	if (!ptr)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_policy_resolve(api, size, policy, &req);
	if (ret)
		return ret;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;

	pool = aclmem_pool_global();
	cls = size_class(&req);
	b = aclmem_pool_get(pool, kind, req.kpolicy, req.kflags, cls);
	if (b && b->map_len < req.size) {
		/* A class must never hold a buffer too small for it. */
		aclmem_err("pool: %zu-byte buffer in class %zu", b->map_len, cls);
		aclmem_buf_release(b);
		b = NULL;
	}
	if (!b) {
		ret = buf_create(&req, kind, &b);
		/* CANN: on lack of memory, give back what is cached, retry once. */
		if (ret == ACL_ERROR_RT_MEMORY_ALLOCATION &&
		    aclmem_pool_trim(pool, 0))
			ret = buf_create(&req, kind, &b);
		if (ret)
			return ret;
		b->pool_class = cls;
	}
	b->size = req.size;

	pthread_rwlock_wrlock(&table_lock);
	ret = addrtree_insert(&table, &b->node);
	pthread_rwlock_unlock(&table_lock);
	if (ret) {
		/* Two live mappings at one address: the kernel broke mmap. */
		aclmem_err("address %p already in the table", b->addr);
		aclmem_buf_release(b);
		return ACL_ERROR_RT_INTERNAL_ERROR;
	}
	*ptr = b->addr;
	return ACL_SUCCESS;
}

int aclmem_mem_free(void *ptr, enum aclmem_buf_kind kind)
{
	struct addrtree_node *n;
	struct aclmem_buf *b = NULL;
	int ret;

	if (!ptr)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;

	pthread_rwlock_wrlock(&table_lock);
	n = addrtree_find(&table, (uintptr_t)ptr);
	if (n && to_buf(n)->kind == kind) {
		addrtree_remove(&table, n->key);
		b = to_buf(n);
	}
	pthread_rwlock_unlock(&table_lock);
	if (!b) {
		aclmem_info("free of %p: not the start of a live %s buffer", ptr,
			    kind == ACLMEM_BUF_HOST ? "host" : "device");
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	if (!aclmem_pool_put(aclmem_pool_global(), b))
		aclmem_buf_release(b);
	return ACL_SUCCESS;
}

enum aclmem_lookup aclmem_mem_lookup(const void *p, size_t len,
				     struct aclmem_range *out)
{
	enum aclmem_lookup ret = ACLMEM_RANGE_NONE;
	struct addrtree_node *n;

	pthread_rwlock_rdlock(&table_lock);
	n = addrtree_find_le(&table, (uintptr_t)p);
	if (n) {
		struct aclmem_buf *b = to_buf(n);
		size_t off = (uintptr_t)p - n->key;

		if (off >= b->size) {
			ret = ACLMEM_RANGE_NONE;
		} else if (len > b->size - off) {
			ret = ACLMEM_RANGE_OVERRUN;
		} else {
			if (out) {
				out->handle = b->handle;
				out->offset = off;
				out->page_size = b->page_size;
				out->kind = b->kind;
				out->readonly = b->kflags & NPU_MEM_ALLOC_READONLY;
			}
			ret = ACLMEM_RANGE_INSIDE;
		}
	}
	pthread_rwlock_unlock(&table_lock);
	return ret;
}

int aclmem_mem_range(const void *p, size_t len, unsigned int kinds,
		     struct aclmem_range *out)
{
	struct aclmem_range r;

	if (aclmem_mem_lookup(p, len, &r) != ACLMEM_RANGE_INSIDE ||
	    !(kinds & r.kind))
		return ACL_ERROR_RT_PARAM_INVALID;
	if (out)
		*out = r;
	return ACL_SUCCESS;
}

size_t aclmem_mem_release_all(void)
{
	struct addrtree_node *n;
	struct aclmem_buf *list = NULL;
	size_t count = 0;

	pthread_rwlock_wrlock(&table_lock);
	while ((n = addrtree_pop(&table))) {
		to_buf(n)->lru_next = list;
		list = to_buf(n);
	}
	pthread_rwlock_unlock(&table_lock);
	while (list) {
		struct aclmem_buf *next = list->lru_next;

		aclmem_buf_release(list);
		list = next;
		count++;
	}
	return count;
}

void aclmem_mem_atfork_prepare(void)
{
	pthread_rwlock_wrlock(&table_lock);
}

void aclmem_mem_atfork_parent(void)
{
	pthread_rwlock_unlock(&table_lock);
}

void aclmem_mem_atfork_child(void)
{
	struct addrtree_node *n;

	/*
	 * glibc's rwlock unlock tells a writer by its TID, which changed in
	 * the child: initialise the lock afresh instead of unlocking it.  The
	 * parent's buffers are not mapped here (VM_DONTCOPY): forget them
	 * without touching the driver, whose handles are the parent's.
	 */
	pthread_rwlock_init(&table_lock, NULL);
	while ((n = addrtree_pop(&table)))
		free(to_buf(n));
}

/* ---- the ACL calls ---- */

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return aclmem_mem_alloc(ACLMEM_API_MALLOC, devPtr, size, policy);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size,
			    aclrtMemMallocPolicy policy)
{
	return aclmem_mem_alloc(ACLMEM_API_MALLOC_ALIGN32, devPtr, size, policy);
}

aclError aclrtMallocCached(void **devPtr, size_t size,
			   aclrtMemMallocPolicy policy)
{
	return aclmem_mem_alloc(ACLMEM_API_MALLOC_CACHED, devPtr, size, policy);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	return aclmem_mem_alloc(ACLMEM_API_MALLOC_HOST, hostPtr, size, 0);
}

aclError aclrtFree(void *devPtr)
{
	return aclmem_mem_free(devPtr, ACLMEM_BUF_DEVICE);
}

aclError aclrtFreeHost(void *hostPtr)
{
	return aclmem_mem_free(hostPtr, ACLMEM_BUF_HOST);
}

/*
 * Flush and invalidate reach the driver's SYNC: flush writes dirty lines
 * back and invalidates them (both directions), invalidate only drops lines
 * so the CPU sees what the device wrote.  On a coherent device the driver
 * does no cache work.
 */
static aclError cache_op(void *ptr, size_t size, uint32_t dir)
{
	struct aclmem_range r;
	int ret;

	if (!ptr || !size)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	ret = aclmem_mem_range(ptr, size, ACLMEM_BUF_DEVICE | ACLMEM_BUF_HOST,
			       &r);
	if (ret)
		return ret;
	ret = aclmem_sync(aclmem_ctx_fd(), r.handle, dir, r.offset, size);
	if (ret) {
		aclmem_err("SYNC of handle %u [%llu, +%zu): %s", r.handle,
			   (unsigned long long)r.offset, size, strerror(-ret));
		return aclmem_ioctl_errno_to_acl(-ret);
	}
	return ACL_SUCCESS;
}

aclError aclrtMemFlush(void *devPtr, size_t size)
{
	return cache_op(devPtr, size, NPU_MEM_SYNC_BIDIRECTIONAL);
}

aclError aclrtMemInvalidate(void *devPtr, size_t size)
{
	return cache_op(devPtr, size, NPU_MEM_SYNC_FROM_DEVICE);
}

aclError aclrtPointerGetAttributes(const void *ptr,
				   aclrtPtrAttributes *attributes)
{
	struct aclmem_range r;

	if (!ptr || !attributes)
		return ACL_ERROR_INVALID_PARAM;
	memset(attributes, 0, sizeof(*attributes));
	if (aclmem_mem_range(ptr, 0, ACLMEM_BUF_DEVICE | ACLMEM_BUF_HOST, &r)) {
		/* Memory ACL did not allocate: CANN says "unregistered". */
		attributes->location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
		return ACL_SUCCESS;
	}
	attributes->location.type = r.kind == ACLMEM_BUF_HOST ?
				    ACL_MEM_LOCATION_TYPE_HOST :
				    ACL_MEM_LOCATION_TYPE_DEVICE;
	attributes->location.id = 0;
	attributes->pageSize = r.page_size;
	return ACL_SUCCESS;
}
