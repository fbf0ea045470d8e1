// SPDX-License-Identifier: MIT
/*
 * Cache maintenance in stream order (aclrtCmo*) and aclrtDeviceL2CacheFlush.
 *
 * The caches that matter here are the CPU's over device memory, which the
 * driver's SYNC keeps coherent with what the device sees: WRITEBACK and
 * FLUSH do what aclrtMemFlush does (write dirty lines back, both
 * directions), INVALID what aclrtMemInvalidate does (drop lines so the CPU
 * reads what the device wrote), PREFETCH has nothing to do but its checks.
 * CANN's current parts accept only PREFETCH for aclrtCmoAsync and
 * aclrtCmoAsyncWithDesc; the other types are accepted here too, since
 * their meaning is documented and the driver can do them.
 *
 * Checks when queued, in this order: src NULL, size 0 or a type outside
 * aclrtCmoType: ACL_ERROR_INVALID_PARAM; no current context:
 * ACL_ERROR_RT_CONTEXT_NULL; [src, src + size) not inside one live
 * aclrtMalloc* buffer ("device memory of this device"):
 * ACL_ERROR_RT_PARAM_INVALID.  The range is looked up again when the task
 * runs; a buffer freed meanwhile fails the stream's next synchronisation
 * with ACL_ERROR_RT_PARAM_INVALID.
 *
 * A descriptor (aclrtCmoSetDesc) is CMO_DESC_SIZE bytes of device memory
 * holding a mark, src and size; aclrtCmoAsyncWithDesc reads it when the
 * task runs, as the device would (CANN's "second-level pointer"), and also
 * checks it when queued.
 *
 * Barriers: CANN has them on parts with models only (the stream must be
 * bound to a model); here any stream will do.  An INVALID operation with
 * barrierId > 0 counts against that id; aclrtCmoWaitBarrier queues a wait
 * for every such operation queued (on any stream) before it.  Ids share 64
 * counters (id % 64), so a wait may also wait for operations of another
 * id queued before it, never for fewer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "aclmem/aclmem.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "stream.h"

#define CMO_DESC_MAGIC	0x61636c6d656d636dULL	/* "aclmemcm" */
#define CMO_DESC_SIZE	32u

struct cmo_desc {
	uint64_t magic;
	uint64_t src;
	uint64_t size;
	uint64_t rsv;
};

_Static_assert(sizeof(struct cmo_desc) == CMO_DESC_SIZE, "descriptor size");

#define BARRIER_SLOTS	64u

static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t barrier_cond = PTHREAD_COND_INITIALIZER;
static uint64_t barrier_queued[BARRIER_SLOTS], barrier_done[BARRIER_SLOTS];

struct cmo_task {
	struct aclmem_task task;
	void *src;			/* NULL: read desc when run */
	size_t size;
	const struct cmo_desc *desc;
	int type;
	uint32_t barrier;		/* 0: none */
	/* a barrier wait: targets per slot, barrier_mask of slots */
	uint64_t target[BARRIER_SLOTS];
	uint64_t barrier_mask;
};

static bool type_valid(int type)
{
	return type >= ACL_RT_CMO_TYPE_PREFETCH &&
	       type <= ACL_RT_CMO_TYPE_FLUSH;
}

/* The cache operation on a range: ACL code, quiet (runs on workers too). */
static int cmo_do(void *src, size_t size, int type)
{
	struct aclmem_range r;
	uint32_t dir;
	int ret;

	if (aclmem_mem_range(src, size, ACLMEM_BUF_DEVICE, &r))
		return ACL_ERROR_RT_PARAM_INVALID;
	if (type == ACL_RT_CMO_TYPE_PREFETCH)
		return ACL_SUCCESS;
	dir = type == ACL_RT_CMO_TYPE_INVALID ? NPU_MEM_SYNC_FROM_DEVICE :
	      NPU_MEM_SYNC_BIDIRECTIONAL;
	ret = aclmem_sync(aclmem_ctx_fd(), r.handle, dir, r.offset, size);
	if (ret) {
		aclmem_info("cache operation SYNC of handle %u failed: %d",
			    r.handle, ret);
		return aclmem_ioctl_errno_to_acl(-ret);
	}
	return ACL_SUCCESS;
}

/* A descriptor's range, if desc lies in device memory and was set. */
static int desc_read(const struct cmo_desc *desc, void **src, size_t *size)
{
	if (aclmem_mem_range(desc, sizeof(*desc), ACLMEM_BUF_DEVICE, NULL) ||
	    desc->magic != CMO_DESC_MAGIC)
		return ACL_ERROR_RT_PARAM_INVALID;
	*src = (void *)(uintptr_t)desc->src;
	*size = (size_t)desc->size;
	return ACL_SUCCESS;
}

static void barrier_count_done(uint32_t id)
{
	pthread_mutex_lock(&barrier_lock);
	barrier_done[id % BARRIER_SLOTS]++;
	pthread_cond_broadcast(&barrier_cond);
	pthread_mutex_unlock(&barrier_lock);
}

static int barrier_wait_run(struct cmo_task *t, struct aclmem_stream *s)
{
	int ret = ACL_SUCCESS;
	unsigned int i;
	bool done;

	pthread_mutex_lock(&barrier_lock);
	for (;;) {
		done = true;
		for (i = 0; i < BARRIER_SLOTS; i++)
			if ((t->barrier_mask >> i & 1) &&
			    barrier_done[i] < t->target[i])
				done = false;
		if (done)
			break;
		if (aclmem_stream_cancelled(s)) {
			ret = ACL_ERROR_RT_STREAM_ABORT;
			break;
		}
		pthread_cond_wait(&barrier_cond, &barrier_lock);
	}
	pthread_mutex_unlock(&barrier_lock);
	return ret;
}

static int cmo_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct cmo_task *t = (struct cmo_task *)task;
	void *src = t->src;
	size_t size = t->size;
	int ret;

	if (t->barrier_mask)
		return barrier_wait_run(t, s);
	if (t->desc) {
		ret = desc_read(t->desc, &src, &size);
		if (ret)
			return ret;
	}
	return cmo_do(src, size, t->type);
}

static void cmo_release(struct aclmem_task *task, bool ran)
{
	struct cmo_task *t = (struct cmo_task *)task;

	(void)ran;
	/* Run or discarded, a barrier's operation is over: waits go on. */
	if (t->barrier)
		barrier_count_done(t->barrier);
	free(t);
}

/* The stream was cancelled: a barrier wait gives up. */
static void cmo_cancel(struct aclmem_task *task)
{
	(void)task;
	pthread_mutex_lock(&barrier_lock);
	pthread_cond_broadcast(&barrier_cond);
	pthread_mutex_unlock(&barrier_lock);
}

static const struct aclmem_task_ops cmo_ops = {
	.run = cmo_run,
	.release = cmo_release,
	.cancel = cmo_cancel,
	.name = "cache operation",
};

/* The checks every queued operation makes; records the failure. */
static int cmo_check(const char *fn, void *src, size_t size, int type)
{
	int ret;

	if (!src || !size || !type_valid(type))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !src ? "src is NULL" : !size ? "size is 0" :
				   "unknown cmoType");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (aclmem_mem_range(src, size, ACLMEM_BUF_DEVICE, NULL))
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID, "%s(%p, %zu): "
				   "not inside one live device buffer", fn,
				   src, size);
	return ACL_SUCCESS;
}

static int cmo_queue(const char *fn, struct cmo_task *t, aclrtStream stream)
{
	if (t->barrier) {
		pthread_mutex_lock(&barrier_lock);
		barrier_queued[t->barrier % BARRIER_SLOTS]++;
		pthread_mutex_unlock(&barrier_lock);
	}
	/* On failure the task is released, which counts the barrier done. */
	return aclmem_task_queue(fn, stream, &t->task);
}

/* NULL when out of memory, recorded as fn's failure. */
static struct cmo_task *cmo_task_new(const char *fn)
{
	return aclmem_task_new(fn, sizeof(struct cmo_task), &cmo_ops);
}

/*
 * Check and queue one operation on [src, +size), or, given desc, on the
 * range desc holds when the task runs (src and size: what it holds now).
 */
static aclError cmo_async(const char *fn, void *src, size_t size, void *desc,
			  aclrtCmoType cmoType, uint32_t barrierId,
			  aclrtStream stream)
{
	struct cmo_task *t;
	int ret;

	ret = cmo_check(fn, src, size, (int)cmoType);
	if (ret)
		return ret;
	t = cmo_task_new(fn);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	if (desc) {
		t->desc = desc;
	} else {
		t->src = src;
		t->size = size;
	}
	t->type = (int)cmoType;
	t->barrier = barrierId;
	return cmo_queue(fn, t, stream);
}

aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType,
		       aclrtStream stream)
{
	return cmo_async("aclrtCmoAsync", src, size, NULL, cmoType, 0, stream);
}

/* barrierId names INVALID operations only: for the others it must be 0. */
aclError aclrtCmoAsyncWithBarrier(void *src, size_t size,
				  aclrtCmoType cmoType, uint32_t barrierId,
				  aclrtStream stream)
{
	if (barrierId && cmoType != ACL_RT_CMO_TYPE_INVALID)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCmoAsyncWithBarrier: barrierId %u "
				   "with a cmoType other than INVALID",
				   barrierId);
	return cmo_async("aclrtCmoAsyncWithBarrier", src, size, NULL, cmoType,
			 barrierId, stream);
}

/*
 * taskInfo: 1..ACL_RT_CMO_MAX_BARRIER_NUM entries, each INVALID with a
 * barrierId > 0; flag 0.  Else ACL_ERROR_INVALID_PARAM.
 */
aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo *taskInfo,
			     aclrtStream stream, uint32_t flag)
{
	const char *fn = "aclrtCmoWaitBarrier";
	struct cmo_task *t;
	uint32_t slot;
	size_t i;
	int ret;

	if (!taskInfo || flag)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !taskInfo ? "taskInfo is NULL" :
				   "flag must be 0");
	if (!taskInfo->barrierNum ||
	    taskInfo->barrierNum > ACL_RT_CMO_MAX_BARRIER_NUM)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: barrierNum "
				   "%zu: 1..%u", fn, taskInfo->barrierNum,
				   ACL_RT_CMO_MAX_BARRIER_NUM);
	for (i = 0; i < taskInfo->barrierNum; i++)
		if (taskInfo->cmoInfo[i].cmoType != ACL_RT_CMO_TYPE_INVALID ||
		    !taskInfo->cmoInfo[i].barrierId)
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: cmoInfo[%zu]: only INVALID "
					   "with a barrierId > 0", fn, i);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	t = cmo_task_new(fn);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	pthread_mutex_lock(&barrier_lock);
	for (i = 0; i < taskInfo->barrierNum; i++) {
		slot = taskInfo->cmoInfo[i].barrierId % BARRIER_SLOTS;
		t->barrier_mask |= 1ULL << slot;
		t->target[slot] = barrier_queued[slot];
	}
	pthread_mutex_unlock(&barrier_lock);
	return cmo_queue(fn, t, stream);
}

aclError aclrtCmoGetDescSize(size_t *size)
{
	if (!size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCmoGetDescSize: size is NULL");
	*size = CMO_DESC_SIZE;
	return ACL_SUCCESS;
}

/*
 * cmoDesc: CMO_DESC_SIZE bytes inside one live aclrtMalloc* buffer; src
 * and size as for aclrtCmoAsync.  NULL or size 0: ACL_ERROR_INVALID_PARAM;
 * memory elsewhere: ACL_ERROR_RT_PARAM_INVALID.
 */
aclError aclrtCmoSetDesc(void *cmoDesc, void *src, size_t size)
{
	const char *fn = "aclrtCmoSetDesc";
	struct cmo_desc d = { CMO_DESC_MAGIC, (uint64_t)(uintptr_t)src,
			      (uint64_t)size, 0 };
	int ret;

	if (!cmoDesc)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: cmoDesc is "
				   "NULL", fn);
	ret = cmo_check(fn, src, size, ACL_RT_CMO_TYPE_PREFETCH);
	if (ret)
		return ret;
	if (aclmem_mem_range(cmoDesc, sizeof(d), ACLMEM_BUF_DEVICE, NULL))
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: cmoDesc %p "
				   "is not %u bytes of a live device buffer",
				   fn, cmoDesc, CMO_DESC_SIZE);
	memcpy(cmoDesc, &d, sizeof(d));
	return ACL_SUCCESS;
}

/*
 * reserve must be NULL, cmoDesc set by aclrtCmoSetDesc (else
 * ACL_ERROR_INVALID_PARAM for NULL pointers, ACL_ERROR_RT_PARAM_INVALID
 * for a descriptor that is not one); the range it holds is checked now and
 * read again when the task runs.
 */
aclError aclrtCmoAsyncWithDesc(void *cmoDesc, aclrtCmoType cmoType,
			       aclrtStream stream, const void *reserve)
{
	const char *fn = "aclrtCmoAsyncWithDesc";
	size_t size;
	void *src;
	int ret;

	if (!cmoDesc || reserve || !type_valid((int)cmoType))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !cmoDesc ? "cmoDesc is NULL" : reserve ?
				   "reserve must be NULL" : "unknown cmoType");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (desc_read(cmoDesc, &src, &size))
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not "
				   "a descriptor set by aclrtCmoSetDesc", fn,
				   cmoDesc);
	return cmo_async(fn, src, size, cmoDesc, cmoType, 0, stream);
}

/*
 * There is no device L2 cache: device memory is host RAM, reached through
 * the CPU's caches, which the driver keeps coherent per buffer.  So the
 * flush has nothing to do; it checks its argument (rsv must be NULL,
 * ACL_ERROR_INVALID_PARAM) and that a device is in use
 * (ACL_ERROR_RT_CONTEXT_NULL), and succeeds.
 */
aclError aclrtDeviceL2CacheFlush(void *rsv)
{
	if (rsv)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDeviceL2CacheFlush: rsv must be NULL");
	return aclmem_api_ret("aclrtDeviceL2CacheFlush", aclmem_ctx_require());
}
