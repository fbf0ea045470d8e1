// SPDX-License-Identifier: MIT
/*
 * aclrtMalloc and its family, aclrtFree, and the table of live buffers.
 *
 * The table is an AVL tree under a read-write lock: range lookups (memset,
 * memcpy, flush, attributes) share it, allocation and free take it alone
 * for an O(log n) insert or remove.  Nothing slow (ioctl, mmap, munmap) runs
 * under it, but for the peer ioctls of a walk over one device's buffers
 * (aclmem_mem_foreach_device: a change of peer access, shared); the one
 * lock taken under it, ipcmem.c's, is held at most across one ioctl.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "acl/acl_rt.h"
#include "acl/ops/acl_dvpp.h"
#include "aclmem/aclmem.h"
#include "args.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "pool.h"
#include "stream.h"

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct addrtree table;
/*
 * Freed buffers the pool keeps, still mapped: a stale pointer into one
 * must not pass for ordinary host memory (copy.c treats memory outside
 * every buffer as the program's own), so lookups see these as taken.
 * Under table_lock; a buffer is in one tree at a time (same node).
 */
static struct addrtree parked;

/*
 * What aclrtGetMemUsageInfo reports, per device: device memory held by
 * live buffers (the driver's mapped bytes) and by the caching pool, now
 * and at the most.
 */
static _Atomic uint64_t dev_live[ACLMEM_DEVICES_MAX];
static _Atomic uint64_t dev_peak[ACLMEM_DEVICES_MAX];
static _Atomic uint64_t pool_peak[ACLMEM_DEVICES_MAX];

static void peak_raise(_Atomic uint64_t *peak_p, uint64_t now)
{
	uint64_t peak = atomic_load(peak_p);

	while (now > peak &&
	       !atomic_compare_exchange_weak(peak_p, &peak, now))
		;
}

static void usage_add(const struct aclmem_buf *b)
{
	if (b->kind != ACLMEM_BUF_DEVICE)
		return;
	peak_raise(&dev_peak[b->device],
		   atomic_fetch_add(&dev_live[b->device], b->map_len) +
		   b->map_len);
}

static void usage_sub(const struct aclmem_buf *b)
{
	if (b->kind == ACLMEM_BUF_DEVICE)
		atomic_fetch_sub(&dev_live[b->device], b->map_len);
}

/* The pool's bytes of device dev now, its peak raised to them. */
static uint64_t pool_usage_sample(int32_t dev)
{
	struct aclmem_pool *p = aclmem_pool_global();
	uint64_t now;

	pthread_mutex_lock(&p->lock);
	now = p->dev_bytes[dev];
	pthread_mutex_unlock(&p->lock);
	peak_raise(&pool_peak[dev], now);
	return now;
}

static inline struct aclmem_buf *to_buf(struct addrtree_node *n)
{
	return (struct aclmem_buf *)((char *)n - offsetof(struct aclmem_buf, node));
}

/* One driver buffer for device dev, mapped; ACL code. */
static int buf_create(const struct aclmem_alloc_req *req, uint8_t kind,
		      int32_t dev, struct aclmem_buf **out)
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
	ret = aclmem_dev_alloc(fd, dev, req->size, req->kpolicy, req->kflags,
			       &handle, &kb);
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
	b->device = dev;
	b->kind = kind;
	*out = b;
	return ACL_SUCCESS;
}

/* ---- what is built on the table (memory.h) ---- */

#define MAX_EXTS	4

static const struct aclmem_mem_ext *exts[MAX_EXTS];
static unsigned int nr_exts;

void aclmem_mem_ext_register(const struct aclmem_mem_ext *ext)
{
	/* A constant table's worth: one too many is a build mistake. */
	if (nr_exts == MAX_EXTS)
		abort();
	exts[nr_exts++] = ext;
}

static void exts_exported_freed(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < nr_exts; i++)
		if (exts[i]->exported_freed)
			exts[i]->exported_freed(handle);
}

static void exts_host_freed(void *addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < nr_exts; i++)
		if (exts[i]->host_freed)
			exts[i]->host_freed(addr, len);
}

static enum aclmem_lookup exts_lookup(const void *p, size_t len,
				      struct aclmem_range *out)
{
	enum aclmem_lookup ret = ACLMEM_RANGE_NONE;
	unsigned int i;

	for (i = 0; i < nr_exts && ret == ACLMEM_RANGE_NONE; i++)
		if (exts[i]->lookup)
			ret = exts[i]->lookup(p, len, out);
	return ret;
}

static void exts_allocated(uint32_t handle, int32_t device)
{
	unsigned int i;

	for (i = 0; i < nr_exts; i++)
		if (exts[i]->allocated)
			exts[i]->allocated(handle, device);
}

static void walk_device(struct addrtree_node *n, int32_t device,
			void (*fn)(uint32_t handle, void *arg), void *arg)
{
	const struct aclmem_buf *b;

	/* AVL: the depth is O(log n), so recursion is bounded. */
	for (; n; n = n->right) {
		walk_device(n->left, device, fn, arg);
		b = to_buf(n);
		if (b->kind == ACLMEM_BUF_DEVICE && b->device == device)
			fn(b->handle, arg);
	}
}

void aclmem_mem_foreach_device(int32_t device,
			       void (*fn)(uint32_t handle, void *arg),
			       void *arg)
{
	pthread_rwlock_rdlock(&table_lock);
	walk_device(table.root, device, fn, arg);
	walk_device(parked.root, device, fn, arg);
	pthread_rwlock_unlock(&table_lock);
}

static int exts_piece_range(const void *p, void **base, size_t *size)
{
	int ret = ACL_ERROR_RT_PARAM_INVALID;
	unsigned int i;

	for (i = 0; i < nr_exts && ret; i++)
		if (exts[i]->piece_range)
			ret = exts[i]->piece_range(p, base, size);
	return ret;
}

void aclmem_buf_release(struct aclmem_buf *b)
{
	int ret;

	/* Its keys die with the handle (FREE): forget them first. */
	if (b->share & ACLMEM_SHARE_EXPORTED)
		exts_exported_freed(b->handle);
	/* Pool evictions come here: the buffer leaves the parked set. */
	pthread_rwlock_wrlock(&table_lock);
	if (addrtree_find(&parked, (uintptr_t)b->addr) == &b->node)
		addrtree_remove(&parked, (uintptr_t)b->addr);
	pthread_rwlock_unlock(&table_lock);

	/*
	 * Warnings, not errors: the call that released the buffer still
	 * succeeds, and an error message would be taken for the explanation
	 * of the thread's next failure (see aclmem_api_ret()).
	 */
	if (munmap(b->addr, b->map_len))
		aclmem_warn("munmap(%p, %zu): %s", b->addr, b->map_len,
			    strerror(errno));
	ret = aclmem_free(aclmem_ctx_fd(), b->handle);
	if (ret)
		aclmem_warn("FREE of handle %u: %s", b->handle, strerror(-ret));
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
	return aclmem_mem_alloc_on(api, ptr, size, policy, -1);
}

int aclmem_mem_alloc_on(enum aclmem_api api, void **ptr, size_t size,
			uint32_t policy, int32_t device)
{
	uint8_t kind = api == ACLMEM_API_MALLOC_HOST ? ACLMEM_BUF_HOST :
						       ACLMEM_BUF_DEVICE;
	struct aclmem_pool *pool;
	struct aclmem_alloc_req req;
	struct aclmem_buf *b;
	int32_t dev;
	size_t cls;
	int ret;

	/* The public caller's aclmem_api_ret() names itself before these. */
	if (!ptr) {
		aclmem_err("the pointer for the address is NULL");
		return ACL_ERROR_INVALID_PARAM;
	}
	ret = aclmem_policy_resolve(api, size, policy, &req);
	if (ret) {
		aclmem_err("cannot allocate %zu bytes", size);
		return ret;
	}
	ret = aclmem_ctx_require();
	if (ret)
		return ret;

	dev = device >= 0 ? device : aclmem_ctx_device(aclmem_ctx_current());
	pool = aclmem_pool_global();
	cls = size_class(&req);
	b = aclmem_pool_get(pool, kind, req.kpolicy, req.kflags, dev, cls);
	if (b && b->map_len < req.size) {
		/* A class must never hold a buffer too small for it. */
		aclmem_warn("pool: %zu-byte buffer in class %zu", b->map_len,
			    cls);
		aclmem_buf_release(b);
		b = NULL;
	}
	if (!b) {
		ret = buf_create(&req, kind, dev, &b);
		/* CANN: on lack of memory, give back what is cached, retry once. */
		if (ret == ACL_ERROR_RT_MEMORY_ALLOCATION &&
		    aclmem_pool_trim(pool, 0))
			ret = buf_create(&req, kind, dev, &b);
		if (ret)
			return ret;
		b->pool_class = cls;
	}
	b->size = req.size;
	b->dvpp = api == ACLMEM_API_DVPP_MALLOC;

	pthread_rwlock_wrlock(&table_lock);
	addrtree_remove(&parked, b->node.key);
	ret = addrtree_insert(&table, &b->node);
	pthread_rwlock_unlock(&table_lock);
	if (ret) {
		/* Two live mappings at one address: the kernel broke mmap. */
		aclmem_err("address %p already in the table", b->addr);
		aclmem_buf_release(b);
		return ACL_ERROR_RT_INTERNAL_ERROR;
	}
	usage_add(b);
	if (kind == ACLMEM_BUF_DEVICE)
		exts_allocated(b->handle, dev);
	*ptr = b->addr;
	return ACL_SUCCESS;
}

/*
 * No current context is needed: CANN frees through the driver, and the
 * table is the process's, so a buffer can be freed from any thread and
 * after the device was reset.  Without a context the memory goes straight
 * back to the driver instead of into the pool, which the device's last
 * reset has emptied and which nothing would empty again before aclFinalize.
 */
static int mem_free(void *ptr, enum aclmem_buf_kind kind, bool dvpp)
{
	struct addrtree_node *n;
	struct aclmem_buf *b = NULL;
	int32_t dev;

	/* The public caller's aclmem_api_ret() names itself before these. */
	if (!ptr) {
		aclmem_err("the pointer is NULL");
		return ACL_ERROR_INVALID_PARAM;
	}

	pthread_rwlock_wrlock(&table_lock);
	n = addrtree_find(&table, (uintptr_t)ptr);
	/* Imported memory is another process's: aclrtIpcMemClose frees it. */
	if (n && to_buf(n)->kind == kind && to_buf(n)->dvpp == dvpp &&
	    !(to_buf(n)->share & ACLMEM_SHARE_IMPORTED)) {
		addrtree_remove(&table, n->key);
		b = to_buf(n);
	}
	pthread_rwlock_unlock(&table_lock);
	if (!b) {
		aclmem_err("%p is not the start of a live %s buffer", ptr,
			   kind == ACLMEM_BUF_HOST ? "host" :
			   dvpp ? "acldvppMalloc" : "device");
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	usage_sub(b);
	if (kind == ACLMEM_BUF_HOST)
		exts_host_freed(b->addr, b->map_len);
	if (aclmem_ctx_require() || b->share) {
		aclmem_buf_release(b);
		return ACL_SUCCESS;
	}
	/* Parked before the pool can hand it out again (see "parked"). */
	pthread_rwlock_wrlock(&table_lock);
	addrtree_insert(&parked, &b->node);
	pthread_rwlock_unlock(&table_lock);
	dev = b->device;	/* b is the pool's once put */
	if (!aclmem_pool_put(aclmem_pool_global(), b))
		aclmem_buf_release(b);
	else
		pool_usage_sample(dev);
	return ACL_SUCCESS;
}

int aclmem_mem_free(void *ptr, enum aclmem_buf_kind kind)
{
	return mem_free(ptr, kind, false);
}

int aclmem_mem_free_dvpp(void *ptr)
{
	return mem_free(ptr, ACLMEM_BUF_DEVICE, true);
}

/* Is ptr the start of a live buffer of this kind? */
static bool is_buffer(void *ptr, enum aclmem_buf_kind kind)
{
	struct addrtree_node *n;
	bool ret;

	pthread_rwlock_rdlock(&table_lock);
	n = addrtree_find(&table, (uintptr_t)ptr);
	ret = n && to_buf(n)->kind == kind;
	pthread_rwlock_unlock(&table_lock);
	return ret;
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
			/* Past the reserved end but in the mapping: not ours. */
			ret = off < b->map_len ? ACLMEM_RANGE_OVERRUN :
						 ACLMEM_RANGE_NONE;
		} else if (len > b->size - off) {
			ret = ACLMEM_RANGE_OVERRUN;
		} else {
			if (out) {
				out->handle = b->handle;
				out->offset = off;
				out->page_size = b->page_size;
				out->device = b->device;
				out->kind = b->kind;
				out->readonly = b->kflags & NPU_MEM_ALLOC_READONLY;
				out->dvpp = b->dvpp;
			}
			ret = ACLMEM_RANGE_INSIDE;
		}
	}
	if (ret == ACLMEM_RANGE_NONE) {
		n = addrtree_find_le(&parked, (uintptr_t)p);
		if (n && (uintptr_t)p - n->key < to_buf(n)->map_len)
			ret = ACLMEM_RANGE_OVERRUN;
	}
	pthread_rwlock_unlock(&table_lock);
	/* Pieces of reserved ranges (aclrtMapMem) are not in the table. */
	if (ret == ACLMEM_RANGE_NONE)
		ret = exts_lookup(p, len, out);
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

/* Under table_lock: the buffer of this process's own holding [p, +len). */
static struct aclmem_buf *share_find(const void *p, size_t len)
{
	struct addrtree_node *n = addrtree_find_le(&table, (uintptr_t)p);
	struct aclmem_buf *b;
	size_t off;

	if (!n)
		return NULL;
	b = to_buf(n);
	off = (uintptr_t)p - n->key;
	if (b->kind != ACLMEM_BUF_DEVICE || (b->share & ACLMEM_SHARE_IMPORTED) ||
	    off >= b->size || len > b->size - off)
		return NULL;
	return b;
}

int aclmem_mem_share(const void *p, size_t len, struct aclmem_range *out)
{
	struct aclmem_buf *b;

	pthread_rwlock_rdlock(&table_lock);
	b = share_find(p, len);
	if (b) {
		out->handle = b->handle;
		out->offset = (uintptr_t)p - (uintptr_t)b->addr;
		out->page_size = b->page_size;
		out->device = b->device;
		out->kind = b->kind;
		out->readonly = b->kflags & NPU_MEM_ALLOC_READONLY;
	}
	pthread_rwlock_unlock(&table_lock);
	return b ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
}

int aclmem_mem_share_commit(const void *p, size_t len, uint32_t handle,
			    void (*record)(void *arg), void *arg)
{
	struct aclmem_buf *b;

	pthread_rwlock_wrlock(&table_lock);
	b = share_find(p, len);
	if (b && b->handle == handle) {
		b->share |= ACLMEM_SHARE_EXPORTED;
		record(arg);
	}
	pthread_rwlock_unlock(&table_lock);
	return b && b->handle == handle ? ACL_SUCCESS :
					  ACL_ERROR_RT_PARAM_INVALID;
}

int aclmem_mem_insert(struct aclmem_buf *b)
{
	int ret;

	b->node.key = (uintptr_t)b->addr;
	pthread_rwlock_wrlock(&table_lock);
	ret = addrtree_insert(&table, &b->node);
	pthread_rwlock_unlock(&table_lock);
	if (ret) {
		aclmem_err("address %p already in the table", b->addr);
		return ACL_ERROR_RT_INTERNAL_ERROR;
	}
	return ACL_SUCCESS;
}

struct aclmem_buf *aclmem_mem_take(void *addr)
{
	struct addrtree_node *n;
	struct aclmem_buf *b = NULL;

	pthread_rwlock_wrlock(&table_lock);
	n = addrtree_find(&table, (uintptr_t)addr);
	if (n && (to_buf(n)->share & ACLMEM_SHARE_IMPORTED)) {
		addrtree_remove(&table, n->key);
		b = to_buf(n);
	}
	pthread_rwlock_unlock(&table_lock);
	return b;
}

/* aclFinalize: every buffer the program never freed, released. */
static size_t mem_release_all(void)
{
	struct addrtree_node *n;
	struct aclmem_buf *list = NULL;
	size_t count = 0;

	pthread_rwlock_wrlock(&table_lock);
	while ((n = addrtree_pop(&table))) {
		to_buf(n)->lru_next = list;
		list = to_buf(n);
		usage_sub(list);
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

static void mem_fork_prepare(void)
{
	pthread_rwlock_wrlock(&table_lock);
}

static void mem_fork_parent(void)
{
	pthread_rwlock_unlock(&table_lock);
}

static void mem_fork_child(void)
{
	struct addrtree_node *n;
	int i;

	/*
	 * glibc's rwlock unlock tells a writer by its TID, which changed in
	 * the child: initialise the lock afresh instead of unlocking it.  The
	 * parent's buffers are not mapped here (VM_DONTCOPY): forget them
	 * without touching the driver, whose handles are the parent's.
	 */
	pthread_rwlock_init(&table_lock, NULL);
	while ((n = addrtree_pop(&table)))
		free(to_buf(n));
	/* The pool frees the parked buffers (its rank is below ours). */
	addrtree_init(&parked);
	for (i = 0; i < ACLMEM_DEVICES_MAX; i++) {
		atomic_store(&dev_live[i], 0);
		atomic_store(&dev_peak[i], 0);
		atomic_store(&pool_peak[i], 0);
	}
}

ACLMEM_PART(.rank = ACLMEM_RANK_MEMORY,
	    .release = mem_release_all,
	    .fork_prepare = mem_fork_prepare,
	    .fork_parent = mem_fork_parent,
	    .fork_child = mem_fork_child)

/* ---- the ACL calls ---- */

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return aclmem_api_ret("aclrtMalloc",
			      aclmem_mem_alloc(ACLMEM_API_MALLOC, devPtr, size,
					       policy));
}

aclError aclrtMallocAlign32(void **devPtr, size_t size,
			    aclrtMemMallocPolicy policy)
{
	return aclmem_api_ret("aclrtMallocAlign32",
			      aclmem_mem_alloc(ACLMEM_API_MALLOC_ALIGN32, devPtr,
					       size, policy));
}

aclError aclrtMallocCached(void **devPtr, size_t size,
			   aclrtMemMallocPolicy policy)
{
	return aclmem_api_ret("aclrtMallocCached",
			      aclmem_mem_alloc(ACLMEM_API_MALLOC_CACHED, devPtr,
					       size, policy));
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	return aclmem_api_ret("aclrtMallocHost",
			      aclmem_mem_alloc(ACLMEM_API_MALLOC_HOST, hostPtr,
					       size, 0));
}

aclError aclrtFree(void *devPtr)
{
	return aclmem_api_ret("aclrtFree",
			      aclmem_mem_free(devPtr, ACLMEM_BUF_DEVICE));
}

aclError aclrtFreeHost(void *hostPtr)
{
	return aclmem_api_ret("aclrtFreeHost",
			      aclmem_mem_free(hostPtr, ACLMEM_BUF_HOST));
}

/*
 * Media memory (acl/ops/acl_dvpp.h; CANN exports it from libacl_dvpp.so,
 * the toolkit links that name here): device memory with acldvppMalloc's
 * rounding (policy.c), usable wherever device memory is, freed by
 * acldvppFree only.  aclrtFree refuses it and acldvppFree refuses
 * aclrtMalloc's memory, 107000 both (CANN says only that each must be
 * freed by its own call).
 */
aclError acldvppMalloc(void **devPtr, size_t size)
{
	return aclmem_api_ret("acldvppMalloc",
			      aclmem_mem_alloc(ACLMEM_API_DVPP_MALLOC, devPtr,
					       size, 0));
}

aclError acldvppFree(void *devPtr)
{
	return aclmem_api_ret("acldvppFree", aclmem_mem_free_dvpp(devPtr));
}

/*
 * Flush and invalidate reach the driver's SYNC: flush writes dirty lines
 * back and invalidates them (both directions), invalidate only drops lines
 * so the CPU sees what the device wrote.  On a coherent device the driver
 * does no cache work.
 */
static aclError cache_op(void *ptr, size_t size, uint32_t dir)
{
	const char *fn = dir == NPU_MEM_SYNC_FROM_DEVICE ?
			 "aclrtMemInvalidate" : "aclrtMemFlush";
	struct aclmem_range r;
	int ret;

	if (!ptr || !size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !ptr ? "devPtr is NULL" : "size is 0");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	ret = aclmem_mem_range(ptr, size, ACLMEM_BUF_DEVICE | ACLMEM_BUF_HOST,
			       &r);
	if (ret)
		return aclmem_fail(ret, "%s(%p, %zu): not inside one live "
				   "buffer", fn, ptr, size);
	ret = aclmem_sync(aclmem_ctx_fd(), r.handle, dir, r.offset, size);
	if (ret)
		return aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				   "%s: SYNC of handle %u [%llu, +%zu): %s", fn,
				   r.handle, (unsigned long long)r.offset,
				   size, strerror(-ret));
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
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtPointerGetAttributes: %s is NULL",
				   !ptr ? "ptr" : "attributes");
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

/* ---- configured allocations, ranges, usage ---- */

/*
 * aclrtMallocConfig as CANN reads it: NULL or no attributes is no
 * configuration; attributes must be given when counted.  The module id is
 * bookkeeping (accepted, unused); the device id must name a device, whose
 * memory it is (*dev; -1 without one: the current device's); the VA flag
 * asks that host memory have the same address on the device, which is
 * always so here.  Reserved or unknown attributes are refused.
 */
static int cfg_check(const char *fn, const aclrtMallocConfig *cfg,
		     int32_t *dev)
{
	size_t i;

	*dev = -1;
	if (!cfg || !cfg->numAttrs)
		return ACL_SUCCESS;
	if (!cfg->attrs)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: cfg has %zu attributes but attrs is NULL",
				   fn, cfg->numAttrs);
	for (i = 0; i < cfg->numAttrs; i++) {
		const aclrtMallocAttribute *a = &cfg->attrs[i];

		switch (a->attr) {
		case ACL_RT_MEM_ATTR_MODULE_ID:
			break;
		case ACL_RT_MEM_ATTR_DEVICE_ID:
			if (!aclmem_device_valid(a->value.deviceId))
				return aclmem_arg_device(fn,
							 a->value.deviceId);
			*dev = (int32_t)a->value.deviceId;
			break;
		case ACL_RT_MEM_ATTR_VA_FLAG:
			if (a->value.vaFlag > 1)
				return aclmem_fail(ACL_ERROR_INVALID_PARAM,
						   "%s: vaFlag %u (0 or 1)", fn,
						   a->value.vaFlag);
			break;
		case ACL_RT_MEM_ATTR_RSV:
		default:
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: attribute %d unknown", fn,
					   (int)a->attr);
		}
	}
	return ACL_SUCCESS;
}

aclError aclrtMallocWithCfg(void **devPtr, size_t size,
			    aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)
{
	int32_t dev;
	int ret;

	if (!devPtr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMallocWithCfg: devPtr is NULL");
	ret = cfg_check("aclrtMallocWithCfg", cfg, &dev);
	if (ret)
		return ret;
	return aclmem_api_ret("aclrtMallocWithCfg",
			      aclmem_mem_alloc_on(ACLMEM_API_MALLOC, devPtr,
						  size, policy, dev));
}

aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size,
				aclrtMallocConfig *cfg)
{
	int32_t dev;
	int ret;

	if (!ptr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMallocHostWithCfg: ptr is NULL");
	ret = cfg_check("aclrtMallocHostWithCfg", cfg, &dev);
	if (ret)
		return ret;
	if (size > SIZE_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMallocHostWithCfg: size %llu too large",
				   (unsigned long long)size);
	return aclmem_api_ret("aclrtMallocHostWithCfg",
			      aclmem_mem_alloc_on(ACLMEM_API_MALLOC_HOST, ptr,
						  (size_t)size, 0, dev));
}

/*
 * Wait for every stream, then free.  The pointer is checked first, so a
 * bad one does not wait; an error a stream kept is returned after the
 * memory was freed (it is freed either way).
 */
static aclError free_synced(void *ptr, enum aclmem_buf_kind kind)
{
	const char *fn = kind == ACLMEM_BUF_HOST ? "aclrtFreeHostWithDevSync" :
						   "aclrtFreeWithDevSync";
	int sync = ACL_SUCCESS, ret;

	if (!ptr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: NULL pointer",
				   fn);
	if (!is_buffer(ptr, kind))
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p): not the start of a live %s buffer",
				   fn, ptr,
				   kind == ACLMEM_BUF_HOST ? "host" : "device");
	if (!aclmem_ctx_require())
		sync = aclmem_streams_sync_all(-1);
	ret = aclmem_mem_free(ptr, kind);
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (sync)
		return aclmem_fail(sync, "%s(%p): freed, but a queued task had "
				   "failed (%d)", fn, ptr, sync);
	return ACL_SUCCESS;
}

aclError aclrtFreeWithDevSync(void *devPtr)
{
	return free_synced(devPtr, ACLMEM_BUF_DEVICE);
}

aclError aclrtFreeHostWithDevSync(void *hostPtr)
{
	return free_synced(hostPtr, ACLMEM_BUF_HOST);
}

aclError aclrtMemGetAddressRange(void *ptr, void **baseUserVa,
				 size_t *baseVaSize)
{
	struct addrtree_node *n;
	aclError ret = ACL_ERROR_RT_PARAM_INVALID;

	if (!ptr || !baseUserVa || !baseVaSize)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemGetAddressRange: %s is NULL",
				   !ptr ? "ptr" : !baseUserVa ? "baseUserVa" :
				   "baseVaSize");
	pthread_rwlock_rdlock(&table_lock);
	n = addrtree_find_le(&table, (uintptr_t)ptr);
	if (n && (uintptr_t)ptr - n->key < to_buf(n)->size) {
		*baseUserVa = to_buf(n)->addr;
		*baseVaSize = to_buf(n)->size;
		ret = ACL_SUCCESS;
	}
	pthread_rwlock_unlock(&table_lock);
	/* In a reserved range: the mapped piece, as CANN documents. */
	if (ret)
		ret = exts_piece_range(ptr, baseUserVa, baseVaSize);
	if (ret)
		return aclmem_fail(ret, "aclrtMemGetAddressRange(%p): not inside "
				   "a live buffer", ptr);
	return ACL_SUCCESS;
}

aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType,
			   uint32_t *checkResult, uint32_t reserve)
{
	const uint32_t known = ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP |
			       ACL_RT_MEM_TYPE_RSVD;
	uint32_t i, match = 1;
	struct aclmem_range r;

	if (!addrList || !checkResult)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCheckMemType: %s is NULL",
				   !addrList ? "addrList" : "checkResult");
	if (!size || reserve || !memType || (memType & ~known))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCheckMemType: size %u, memType 0x%x, "
				   "reserve %u", size, memType, reserve);
	for (i = 0; i < size; i++)
		if (!addrList[i])
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "aclrtCheckMemType: addrList[%u] is "
					   "NULL", i);
	/*
	 * Device memory is ordinary (aclrtMalloc*, DEV) or media memory
	 * (acldvppMalloc, DVPP); there is no reserved address range.
	 */
	for (i = 0; i < size && match; i++) {
		memset(&r, 0, sizeof(r));
		if (aclmem_mem_lookup(addrList[i], 0, &r) != ACLMEM_RANGE_INSIDE ||
		    r.kind != ACLMEM_BUF_DEVICE ||
		    !(memType & (r.dvpp ? ACL_RT_MEM_TYPE_DVPP :
					  ACL_RT_MEM_TYPE_DEV)))
			match = 0;
	}
	*checkResult = match;
	return ACL_SUCCESS;
}

/* Device deviceId's memory: its live buffers, and what the pool keeps of it. */
aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo,
			      size_t inputNum, size_t *outputNum)
{
	aclrtMemUsageInfo e[2];
	size_t n, i;
	int ret;

	if (!memUsageInfo || !outputNum)
		return aclmem_arg_null("aclrtGetMemUsageInfo", !memUsageInfo ?
				       "memUsageInfo" : "outputNum");
	ret = aclmem_arg_device("aclrtGetMemUsageInfo", deviceId);
	if (ret)
		return ret;
	memset(e, 0, sizeof(e));
	/* "APP": the program's live buffers; "RUNTIME": the pool's cache. */
	snprintf(e[0].name, sizeof(e[0].name), "APP");
	e[0].curMemSize = atomic_load(&dev_live[deviceId]);
	e[0].memPeakSize = atomic_load(&dev_peak[deviceId]);
	snprintf(e[1].name, sizeof(e[1].name), "RUNTIME");
	e[1].curMemSize = pool_usage_sample(deviceId);
	e[1].memPeakSize = atomic_load(&pool_peak[deviceId]);
	if (e[1].memPeakSize < e[1].curMemSize)
		e[1].memPeakSize = e[1].curMemSize;
	/* Largest current use first, as CANN sorts them. */
	if (e[1].curMemSize > e[0].curMemSize) {
		aclrtMemUsageInfo t = e[0];

		e[0] = e[1];
		e[1] = t;
	}
	n = inputNum < 2 ? inputNum : 2;
	for (i = 0; i < n; i++)
		memUsageInfo[i] = e[i];
	*outputNum = n;
	return ACL_SUCCESS;
}

/*
 * The driver's page sizes: 4 KiB pages for normal memory, 2 MiB huge
 * pages, 1 GiB for the HUGE1G kinds.  The minimum is the page; the
 * recommended granularity is the same, because the driver rounds every
 * buffer to its pages and nothing is gained by asking for more.  The
 * attribute rules are CANN's: DDR kinds are host memory only, and only
 * the page/type combinations CANN maps are taken.
 */
aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
					  aclrtMemGranularityOptions option,
					  size_t *granularity)
{
	static const char fn[] = "aclrtMemGetAllocationGranularity";
	bool host, dev;
	size_t g;

	if (!prop || !granularity)
		return aclmem_arg_null(fn, !prop ? "prop" : "granularity");
	host = prop->location.type == ACL_MEM_LOCATION_TYPE_HOST ||
	       prop->location.type == ACL_MEM_LOCATION_TYPE_HOST_NUMA;
	dev = prop->location.type == ACL_MEM_LOCATION_TYPE_DEVICE;
	if (!host && !dev)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: location type %d", fn,
				   (int)prop->location.type);
	if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
	    option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: option %d", fn,
				   (int)option);
	switch (prop->memAttr) {
	case ACL_DDR_MEM_NORMAL:
	case ACL_DDR_MEM_P2P_NORMAL:
		if (!host)
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: memAttr %d is host memory", fn,
					   (int)prop->memAttr);
		/* fall through */
	case ACL_HBM_MEM_NORMAL:
	case ACL_MEM_NORMAL:
	case ACL_MEM_P2P_NORMAL:
		g = 4096;
		break;
	case ACL_DDR_MEM_HUGE:
	case ACL_DDR_MEM_P2P_HUGE:
		if (!host)
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: memAttr %d is host memory", fn,
					   (int)prop->memAttr);
		/* fall through */
	case ACL_HBM_MEM_HUGE:
	case ACL_MEM_HUGE:
	case ACL_MEM_P2P_HUGE:
		g = ACLMEM_SZ_2M;
		break;
	case ACL_HBM_MEM_HUGE1G:
	case ACL_MEM_HUGE1G:
	case ACL_MEM_P2P_HUGE1G:
		g = (size_t)1 << 30;
		break;
	default:
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: memAttr %d",
				   fn, (int)prop->memAttr);
	}
	if (dev && !aclmem_device_valid(prop->location.id))
		return aclmem_arg_device(fn, prop->location.id);
	*granularity = g;
	return ACL_SUCCESS;
}
