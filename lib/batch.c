// SPDX-License-Identifier: MIT
/*
 * Batched copies (aclrtMemcpyBatch*, CANN's experimental calls) and the
 * deprecated aclrtMemcpyAsyncWithCondition.
 *
 * What CANN documents, and how it is checked here, in this order:
 *   - every array (dsts, destMaxs, srcs, sizes, attrs, attrsIndexes) and
 *     failIndex, for the calls that have it, must be given; numBatches > 0;
 *     1 <= numAttrs <= numBatches; attrsIndexes[0] == 0, each entry above
 *     the one before, the last below numBatches: else
 *     ACL_ERROR_INVALID_PARAM with *failIndex = SIZE_MAX (the error is not
 *     one copy's);
 *   - a current context (ACL_ERROR_RT_CONTEXT_NULL, failIndex SIZE_MAX);
 *   - copy i takes attrs[k] for the last k with attrsIndexes[k] <= i.  Its
 *     locations must be HOST and DEVICE (host to device) or DEVICE and HOST
 *     (device to host), the device's id one of a device (any, not only the
 *     current one: host memory meets any device's without peer access),
 *     reserved bytes 0, and every copy of the batch must go the same way
 *     ("only one of host to device or device to host"): else
 *     ACL_ERROR_INVALID_PARAM.  Its memory must be what the locations say,
 *     as aclrtMemcpyAsync checks a kind: the device side inside one live
 *     aclrtMalloc* buffer of the device named, the host side not device
 *     memory, sizes[i] <= destMaxs[i] (ACL_ERROR_RT_PARAM_INVALID; NULL
 *     pointers ACL_ERROR_INVALID_PARAM).  These are the checks CANN reports a
 *     failIndex for: *failIndex = i, the first copy that fails.
 * A copy of 0 bytes is checked for its attributes only and does nothing.
 * Every copy is checked before any is made, so a refused batch copies
 * nothing; on success *failIndex is SIZE_MAX.
 *
 * CANN says the copies of a batch happen in no particular order; here they
 * are made in array order.  The asynchronous calls queue the whole batch
 * as one task on the stream, whose ranges are checked again when it runs.
 * As CANN documents, when a host side is not pinned memory (not from
 * aclrtMallocHost or aclrtMalloc*), the call returns only once the stream
 * has made the copies, so the caller may reuse that memory at once.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "args.h"
#include "context.h"
#include "copy.h"
#include "log.h"
#include "memory.h"
#include "stream.h"

struct one_copy {
	void *dst;
	const void *src;
	size_t max, count;
	int kind;
};

struct batch_task {
	struct aclmem_task task;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int refs;		/* the stream's, and the caller's if it waits */
	bool finished;
	size_t n;
	struct one_copy c[];
};

static void batch_put(struct batch_task *b)
{
	bool last;

	pthread_mutex_lock(&b->lock);
	last = --b->refs == 0;
	pthread_mutex_unlock(&b->lock);
	if (last) {
		pthread_cond_destroy(&b->cond);
		pthread_mutex_destroy(&b->lock);
		free(b);
	}
}

static int batch_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	struct batch_task *b = (struct batch_task *)t;
	size_t i;
	int ret;

	(void)s;
	/* Checked again, all first: a buffer may have gone since. */
	for (i = 0; i < b->n; i++) {
		ret = aclmem_copy_recheck(b->c[i].dst, b->c[i].max,
					  b->c[i].src, b->c[i].count,
					  b->c[i].kind);
		if (ret) {
			aclmem_info("queued batch copy %zu failed: %d", i, ret);
			return ret;
		}
	}
	for (i = 0; i < b->n; i++)
		aclmem_copy_run(b->c[i].dst, b->c[i].src, b->c[i].count);
	return ACL_SUCCESS;
}

static void batch_release(struct aclmem_task *t, bool ran)
{
	struct batch_task *b = (struct batch_task *)t;

	(void)ran;
	pthread_mutex_lock(&b->lock);
	b->finished = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	batch_put(b);
}

static const struct aclmem_task_ops batch_ops = {
	.run = batch_run,
	.release = batch_release,
	.name = "memcpy batch",
};

/* Is a host side of copy c memory outside every ACL buffer? */
static bool unpinned_host(const struct one_copy *c)
{
	const void *host = c->kind == ACL_MEMCPY_HOST_TO_DEVICE ? c->src :
			   c->kind == ACL_MEMCPY_DEVICE_TO_HOST ? c->dst : NULL;

	if (c->kind == ACL_MEMCPY_DEFAULT || c->kind == ACL_MEMCPY_HOST_TO_HOST)
		return aclmem_mem_lookup(c->src, c->count, NULL) !=
		       ACLMEM_RANGE_INSIDE ||
		       aclmem_mem_lookup(c->dst, c->count, NULL) !=
		       ACLMEM_RANGE_INSIDE;
	return host && aclmem_mem_lookup(host, c->count, NULL) !=
		       ACLMEM_RANGE_INSIDE;
}

/*
 * Queue copies c[0..n) (checked) as one task; wait for it when a host side
 * is not pinned.  An ACL code, not yet recorded.
 */
static int batch_submit(const struct one_copy *c, size_t n,
			aclrtStream stream)
{
	struct batch_task *b;
	bool wait = false;
	size_t i, k = 0;
	int ret;

	b = calloc(1, sizeof(*b) + n * sizeof(b->c[0]));
	if (!b) {
		aclmem_err("out of memory for the task");
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	for (i = 0; i < n; i++) {
		if (!c[i].count)
			continue;
		b->c[k++] = c[i];
		wait = wait || unpinned_host(&c[i]);
	}
	b->n = k;
	b->refs = wait ? 2 : 1;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->task.ops = &batch_ops;
	ret = aclmem_stream_submit(stream, &b->task);
	/* On failure the task was released unrun: finished is set. */
	if (wait) {
		pthread_mutex_lock(&b->lock);
		while (!b->finished)
			pthread_cond_wait(&b->cond, &b->lock);
		pthread_mutex_unlock(&b->lock);
		batch_put(b);
	}
	return ret;
}

static bool loc_ok(const aclrtMemLocation *l)
{
	return l->type == ACL_MEM_LOCATION_TYPE_HOST ||
	       (l->type == ACL_MEM_LOCATION_TYPE_DEVICE &&
		aclmem_device_valid(l->id));
}

/* The device side of a checked copy is memory of the device its attr names. */
static bool on_device(const struct one_copy *c, const aclrtMemcpyBatchAttr *a)
{
	bool h2d = c->kind == ACL_MEMCPY_HOST_TO_DEVICE;
	struct aclmem_range r;

	return aclmem_mem_lookup(h2d ? c->dst : c->src, c->count, &r) ==
	       ACLMEM_RANGE_INSIDE &&
	       r.device == (int32_t)(h2d ? a->dstLoc.id : a->srcLoc.id);
}

/* The kind an attribute names, or -1 when it is not one CANN allows. */
static int attr_kind(const aclrtMemcpyBatchAttr *a)
{
	size_t i;

	for (i = 0; i < sizeof(a->rsv); i++)
		if (a->rsv[i])
			return -1;
	if (!loc_ok(&a->srcLoc) || !loc_ok(&a->dstLoc))
		return -1;
	if (a->srcLoc.type == ACL_MEM_LOCATION_TYPE_HOST &&
	    a->dstLoc.type == ACL_MEM_LOCATION_TYPE_DEVICE)
		return ACL_MEMCPY_HOST_TO_DEVICE;
	if (a->srcLoc.type == ACL_MEM_LOCATION_TYPE_DEVICE &&
	    a->dstLoc.type == ACL_MEM_LOCATION_TYPE_HOST)
		return ACL_MEMCPY_DEVICE_TO_HOST;
	return -1;
}

/*
 * The checks of the arrays and counts (the first in the comment at the
 * top), which no copy's index is reported for: ACL code, logged.
 */
static int batch_args(const char *fn, void **dsts, size_t *destMaxs,
		      void **srcs, size_t *sizes, size_t numBatches,
		      aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
		      size_t numAttrs)
{
	size_t k;

	if (!dsts || !destMaxs || !srcs || !sizes || !attrs || !attrsIndexes)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: an array is "
				   "NULL", fn);
	if (!numBatches || !numAttrs || numAttrs > numBatches)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: numBatches %zu,"
				   " numAttrs %zu: need 1 <= numAttrs <= "
				   "numBatches", fn, numBatches, numAttrs);
	for (k = 0; k < numAttrs; k++)
		if ((k == 0 && attrsIndexes[0] != 0) ||
		    (k > 0 && attrsIndexes[k] <= attrsIndexes[k - 1]) ||
		    attrsIndexes[k] >= numBatches)
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: attrsIndexes[%zu] = %zu: must "
					   "start at 0, rise, and stay below "
					   "numBatches", fn, k,
					   attrsIndexes[k]);
	return ACL_SUCCESS;
}

/*
 * Check a batch, in the order the comment at the top gives; *out (n
 * entries) gets the copies.  Records the failure; *fail the copy's index.
 */
static int batch_check(const char *fn, void **dsts, size_t *destMaxs,
		       void **srcs, size_t *sizes, size_t numBatches,
		       aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
		       size_t numAttrs, size_t *fail, struct one_copy **out)
{
	struct one_copy *c;
	size_t i, k;
	int ret, kind, first = -1;

	*fail = SIZE_MAX;
	*out = NULL;
	ret = batch_args(fn, dsts, destMaxs, srcs, sizes, numBatches, attrs,
			 attrsIndexes, numAttrs);
	if (ret)
		return ret;
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (numBatches > SIZE_MAX / sizeof(*c))
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: too many copies", fn);
	c = calloc(numBatches, sizeof(*c));
	if (!c)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	for (i = 0, k = 0; i < numBatches; i++) {
		while (k + 1 < numAttrs && attrsIndexes[k + 1] <= i)
			k++;
		kind = attr_kind(&attrs[k]);
		if (kind < 0 || (first >= 0 && kind != first)) {
			*fail = i;
			free(c);
			return aclmem_fail(ACL_ERROR_INVALID_PARAM,
					   "%s: copy %zu: attrs[%zu] %s", fn,
					   i, k, kind < 0 ?
					   "names no host<->device copy of "
					   "a device" :
					   "goes the other way from copy 0");
		}
		first = kind;
		c[i] = (struct one_copy){ dsts[i], srcs[i], destMaxs[i],
					  sizes[i], kind };
		if (!sizes[i])
			continue;
		ret = aclmem_copy_check(dsts[i], destMaxs[i], srcs[i],
					sizes[i], kind);
		if (!ret && !on_device(&c[i], &attrs[k]))
			ret = aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
					  "%s: copy %zu: its device memory is "
					  "not device %u's", fn, i, kind ==
					  ACL_MEMCPY_HOST_TO_DEVICE ?
					  attrs[k].dstLoc.id :
					  attrs[k].srcLoc.id);
		if (ret) {
			*fail = i;
			free(c);
			aclmem_err("copy %zu", i);
			return aclmem_api_ret(fn, ret);
		}
	}
	*out = c;
	return ACL_SUCCESS;
}

/* batch_check(), then *failIndex (when given) from it. */
static int batch_prepare(const char *fn, void **dsts, size_t *destMaxs,
			 void **srcs, size_t *sizes, size_t numBatches,
			 aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
			 size_t numAttrs, size_t *failIndex,
			 struct one_copy **out)
{
	size_t fail;
	int ret;

	ret = batch_check(fn, dsts, destMaxs, srcs, sizes, numBatches, attrs,
			  attrsIndexes, numAttrs, &fail, out);
	if (failIndex)
		*failIndex = fail;
	return ret;
}

/* Check, then make the copies in array order; *failIndex if given. */
static aclError batch_sync(const char *fn, void **dsts, size_t *destMaxs,
			   void **srcs, size_t *sizes, size_t numBatches,
			   aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
			   size_t numAttrs, size_t *failIndex)
{
	struct one_copy *c;
	size_t i;
	int ret;

	ret = batch_prepare(fn, dsts, destMaxs, srcs, sizes, numBatches, attrs,
			    attrsIndexes, numAttrs, failIndex, &c);
	if (ret)
		return ret;
	for (i = 0; i < numBatches; i++)
		if (c[i].count)
			aclmem_copy_run(c[i].dst, c[i].src, c[i].count);
	free(c);
	return ACL_SUCCESS;
}

aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs,
			  size_t *sizes, size_t numBatches,
			  aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
			  size_t numAttrs, size_t *failIndex)
{
	if (failIndex)
		*failIndex = SIZE_MAX;
	if (!failIndex)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatch: "
				   "failIndex is NULL");
	return batch_sync("aclrtMemcpyBatch", dsts, destMaxs, srcs, sizes,
			  numBatches, attrs, attrsIndexes, numAttrs, failIndex);
}

aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs,
			    size_t *sizes, size_t numBatches,
			    aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
			    size_t numAttrs)
{
	return batch_sync("aclrtMemcpyBatchV2", dsts, destMaxs, srcs, sizes,
			  numBatches, attrs, attrsIndexes, numAttrs, NULL);
}

static aclError batch_async(const char *fn, void **dsts, size_t *destMaxs,
			    void **srcs, size_t *sizes, size_t numBatches,
			    aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
			    size_t numAttrs, size_t *failIndex,
			    aclrtStream stream)
{
	struct one_copy *c;
	int ret;

	ret = batch_prepare(fn, dsts, destMaxs, srcs, sizes, numBatches, attrs,
			    attrsIndexes, numAttrs, failIndex, &c);
	if (ret)
		return ret;
	ret = batch_submit(c, numBatches, stream);
	free(c);
	return aclmem_api_ret(fn, ret);
}

aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs,
			       size_t *sizes, size_t numBatches,
			       aclrtMemcpyBatchAttr *attrs,
			       size_t *attrsIndexes, size_t numAttrs,
			       size_t *failIndex, aclrtStream stream)
{
	if (!failIndex)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtMemcpyBatchAsync: failIndex is NULL");
	return batch_async("aclrtMemcpyBatchAsync", dsts, destMaxs, srcs,
			   sizes, numBatches, attrs, attrsIndexes, numAttrs,
			   failIndex, stream);
}

aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs,
				 size_t *sizes, size_t numBatches,
				 aclrtMemcpyBatchAttr *attrs,
				 size_t *attrsIndexes, size_t numAttrs,
				 aclrtStream stream)
{
	return batch_async("aclrtMemcpyBatchAsyncV2", dsts, destMaxs, srcs,
			   sizes, numBatches, attrs, attrsIndexes, numAttrs,
			   NULL, stream);
}

/*
 * CANN deprecates this for aclrtMemcpyAsync and documents the same
 * behaviour: a copy queued on the stream, which is finished before the
 * call returns when a host side is not pinned memory.
 */
aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax,
				       const void *src, size_t count,
				       aclrtMemcpyKind kind,
				       aclrtStream stream)
{
	struct one_copy c = { dst, src, destMax, count, (int)kind };
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_copy_check(dst, destMax, src, count, (int)kind);
	if (!ret)
		ret = batch_submit(&c, 1, stream);
	return aclmem_api_ret("aclrtMemcpyAsyncWithCondition", ret);
}
