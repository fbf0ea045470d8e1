// SPDX-License-Identifier: MIT
/*
 * Runtime settings that programs make and read back, though nothing here
 * computes with them: system parameter options (aclrtSetSysParamOpt for the
 * process, aclrtCtxSetSysParamOpt for the current context), the device's
 * float saturation mode, the task scheduler a thread uses
 * (aclrtSetTsDevice), the SIMT/SIMD limits (aclrtDeviceSetLimit) and the
 * float overflow status (always zero).
 *
 * What programs rely on is CANN's bookkeeping: a value set is the value
 * read; an option never set reads as ACL_ERROR_RT_SYSPARAMOPT_NOT_SET
 * (107021), so callers fall back to their default as they do on CANN; a
 * context's options go with the context.  There are no SIMT or SIMD cores,
 * so their stack and FIFO limits are ACL_ERROR_RT_FEATURE_NOT_SUPPORT; the
 * cube core limits of streams and threads are 0, the vector ones the
 * device's.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "copy.h"
#include "log.h"
#include "memory.h"
#include "stream.h"
#include "system.h"

#define NR_OPTS	(ACL_OPT_ENABLE_DEBUG_KERNEL + 1)

struct ctx_opts {
	struct ctx_opts *next;
	const struct aclmem_ctx *ctx;
	bool set[NR_OPTS];
	int64_t value[NR_OPTS];
};

static pthread_mutex_t settings_lock = PTHREAD_MUTEX_INITIALIZER;
static bool proc_set[NR_OPTS];
static int64_t proc_value[NR_OPTS];
static struct ctx_opts *ctx_opts;
static aclrtFloatOverflowMode sat_mode = ACL_RT_OVERFLOW_MODE_SATURATION;

static bool opt_valid(aclSysParamOpt opt)
{
	return (int)opt >= 0 && (int)opt < NR_OPTS;
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
	if (!opt_valid(opt) || value < 0)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetSysParamOpt(%d, %lld): no such option "
				   "or a negative value", (int)opt,
				   (long long)value);
	pthread_mutex_lock(&settings_lock);
	proc_set[opt] = true;
	proc_value[opt] = value;
	pthread_mutex_unlock(&settings_lock);
	return ACL_SUCCESS;
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
	int ret = ACL_SUCCESS;

	if (!value || !opt_valid(opt))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetSysParamOpt(%d): no such option or "
				   "NULL value", (int)opt);
	pthread_mutex_lock(&settings_lock);
	if (proc_set[opt])
		*value = proc_value[opt];
	else
		ret = ACL_ERROR_RT_SYSPARAMOPT_NOT_SET;
	pthread_mutex_unlock(&settings_lock);
	return ret ? aclmem_fail(ret, "aclrtGetSysParamOpt(%d): never set",
				 (int)opt) : ACL_SUCCESS;
}

/* The current context's entry, made if asked; dead contexts' go.  Locked. */
static struct ctx_opts *ctx_entry(bool create)
{
	const struct aclmem_ctx *ctx = aclmem_ctx_current();
	struct ctx_opts **pc, *c;

	for (pc = &ctx_opts; (c = *pc);) {
		if (!aclmem_ctx_alive(c->ctx)) {
			*pc = c->next;
			free(c);
			continue;
		}
		if (c->ctx == ctx)
			return c;
		pc = &c->next;
	}
	if (!create)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->ctx = ctx;
		c->next = ctx_opts;
		ctx_opts = c;
	}
	return c;
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
	struct ctx_opts *c;
	int ret;

	if (!opt_valid(opt) || value < 0)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCtxSetSysParamOpt(%d, %lld): no such "
				   "option or a negative value", (int)opt,
				   (long long)value);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_fail(ret, "aclrtCtxSetSysParamOpt: no context");
	pthread_mutex_lock(&settings_lock);
	c = ctx_entry(true);
	if (c) {
		c->set[opt] = true;
		c->value[opt] = value;
	}
	pthread_mutex_unlock(&settings_lock);
	return c ? ACL_SUCCESS :
		   aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
			       "aclrtCtxSetSysParamOpt: out of memory");
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
	struct ctx_opts *c;
	int ret;

	if (!value || !opt_valid(opt))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCtxGetSysParamOpt(%d): no such option "
				   "or NULL value", (int)opt);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_fail(ret, "aclrtCtxGetSysParamOpt: no context");
	pthread_mutex_lock(&settings_lock);
	c = ctx_entry(false);
	if (c && c->set[opt])
		*value = c->value[opt];
	else
		ret = ACL_ERROR_RT_SYSPARAMOPT_NOT_SET;
	pthread_mutex_unlock(&settings_lock);
	return ret ? aclmem_fail(ret, "aclrtCtxGetSysParamOpt(%d): never set "
				 "in this context", (int)opt) : ACL_SUCCESS;
}

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)
{
	int ret;

	if (mode != ACL_RT_OVERFLOW_MODE_SATURATION &&
	    mode != ACL_RT_OVERFLOW_MODE_INFNAN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetDeviceSatMode(%d): no such mode",
				   (int)mode);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_fail(ret, "aclrtSetDeviceSatMode: no device");
	pthread_mutex_lock(&settings_lock);
	sat_mode = mode;
	pthread_mutex_unlock(&settings_lock);
	return ACL_SUCCESS;
}

aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode)
{
	int ret;

	if (!mode)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetDeviceSatMode: NULL mode");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_fail(ret, "aclrtGetDeviceSatMode: no device");
	pthread_mutex_lock(&settings_lock);
	*mode = sat_mode;
	pthread_mutex_unlock(&settings_lock);
	return ACL_SUCCESS;
}

/* One scheduler here: both documented ones name it. */
aclError aclrtSetTsDevice(aclrtTsId tsId)
{
	if (tsId != ACL_TS_ID_AICORE && tsId != ACL_TS_ID_AIVECTOR)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetTsDevice(%d): no such scheduler",
				   (int)tsId);
	return ACL_SUCCESS;
}

static int limit_unsupported(const char *fn, aclrtDeviceLimit limit)
{
	if ((int)limit < ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE ||
	    limit > ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s(%d): no such "
				   "limit", fn, (int)limit);
	return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s(%d): no SIMT "
			   "or SIMD cores here", fn, (int)limit);
}

aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit, size_t value)
{
	(void)value;
	return limit_unsupported("aclrtDeviceSetLimit", limit);
}

aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit, size_t *value)
{
	if (!value)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDeviceGetLimit: NULL value");
	return limit_unsupported("aclrtDeviceGetLimit", limit);
}

/* ---- core limits of streams and threads ---- */

/*
 * CANN lets a stream, or a thread using a stream's limits, run on fewer AI
 * cores than the device has.  There are no cube cores here: that limit is
 * 0, 0 may be set and anything more is refused, as for the device
 * (aclrtSetDeviceResLimit).  The vector limit is the stream's device's
 * (aclmem_vector_limit): limits up to it are accepted.
 */
static __thread bool thread_uses_stream;

/* A resource type and a stream: ACL code; *dev (may be NULL) its device. */
static int res_check(const char *fn, aclrtStream stream,
		     aclrtDevResLimitType type, int32_t *dev)
{
	struct aclmem_stream *s;
	int ret;

	if (type != ACL_RT_DEV_RES_CUBE_CORE &&
	    type != ACL_RT_DEV_RES_VECTOR_CORE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: no such resource %d", fn, (int)type);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (dev)
		*dev = aclmem_stream_device(s);
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
				uint32_t *value)
{
	int32_t dev = 0;
	int ret;

	if (!value)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetStreamResLimit: value is NULL");
	ret = res_check("aclrtGetStreamResLimit", stream, type, &dev);
	if (!ret)
		*value = type == ACL_RT_DEV_RES_VECTOR_CORE ?
			 aclmem_vector_limit(dev) : 0;
	return ret;
}

aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
				uint32_t value)
{
	int32_t dev = 0;
	int ret = res_check("aclrtSetStreamResLimit", stream, type, &dev);
	uint32_t max = ret || type != ACL_RT_DEV_RES_VECTOR_CORE ? 0 :
		       aclmem_vector_limit(dev);

	if (!ret && value > max)
		ret = aclmem_fail(ACL_ERROR_INVALID_PARAM,
				  "aclrtSetStreamResLimit: %u cores, the "
				  "limit is %u", value, max);
	return ret;
}

aclError aclrtResetStreamResLimit(aclrtStream stream)
{
	return res_check("aclrtResetStreamResLimit", stream,
			 ACL_RT_DEV_RES_CUBE_CORE, NULL);
}

/* Whether this thread takes its limits from a stream's, once checked. */
static int use_stream_res(const char *fn, aclrtStream stream, bool use)
{
	int ret = res_check(fn, stream, ACL_RT_DEV_RES_CUBE_CORE, NULL);

	if (!ret)
		thread_uses_stream = use;
	return ret;
}

aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)
{
	return use_stream_res("aclrtUseStreamResInCurrentThread", stream,
			      true);
}

aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)
{
	return use_stream_res("aclrtUnuseStreamResInCurrentThread", stream,
			      false);
}

aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)
{
	int ret;

	if (!value || (type != ACL_RT_DEV_RES_CUBE_CORE &&
		       type != ACL_RT_DEV_RES_VECTOR_CORE))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetResInCurrentThread: NULL value or "
				   "no such resource %d", (int)type);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtGetResInCurrentThread", ret);
	/* The stream's limit or the device's: the same here. */
	(void)thread_uses_stream;
	*value = type == ACL_RT_DEV_RES_VECTOR_CORE ?
		 aclmem_vector_limit(aclmem_ctx_device(aclmem_ctx_current())) :
		 0;
	return ACL_SUCCESS;
}

/* ---- float overflow status ---- */

/*
 * CANN copies the device's overflow status, 64 bytes, into the caller's
 * device memory in stream order, and clears it in stream order too.  Only
 * AI cores overflow, and there are none: the status is always zero, so
 * aclrtGetOverflowStatus queues a fill of 64 zero bytes and
 * aclrtResetOverflowStatus a task with nothing to clear.  Both are
 * asynchronous, as CANN's: the zeroes are there once the stream gets
 * there.  CANN's acl layer checks outputAddr; its runtime then wants a
 * context (107002) and the documented fixed size, 64 bytes, into device
 * memory (107000 otherwise).
 */
#define OVERFLOW_STATUS_SIZE	64

aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize,
				aclrtStream stream)
{
	static const char fn[] = "aclrtGetOverflowStatus";
	struct aclmem_range r;
	int ret;

	if (!outputAddr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: outputAddr is NULL", fn);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (outputSize != OVERFLOW_STATUS_SIZE)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: outputSize %zu, the status is %d bytes",
				   fn, outputSize, OVERFLOW_STATUS_SIZE);
	if (aclmem_mem_range(outputAddr, outputSize, ACLMEM_BUF_DEVICE, &r) ||
	    r.readonly)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: [%p, +%zu) is not writable device "
				   "memory", fn, outputAddr, outputSize);
	return aclmem_api_ret(fn, aclmem_fill_async(fn, outputAddr, outputSize,
						    0, outputSize, stream));
}

static int nothing_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	(void)t;
	(void)s;
	return ACL_SUCCESS;
}

static const struct aclmem_task_ops nothing_ops = {
	.run = nothing_run,
	.release = aclmem_task_free,
	.name = "overflow reset",
	.replay = aclmem_task_dup,
};

aclError aclrtResetOverflowStatus(aclrtStream stream)
{
	static const char fn[] = "aclrtResetOverflowStatus";
	struct aclmem_task *t;
	int ret;

	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	t = aclmem_task_new(fn, sizeof(*t), &nothing_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	return aclmem_task_queue(fn, stream, t);
}

/* ---- what needs a model or AI cores ---- */

aclError aclrtCtxGetFloatOverflowAddr(void **overflowAddr)
{
	if (!overflowAddr)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCtxGetFloatOverflowAddr: NULL");
	return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
			   "aclrtCtxGetFloatOverflowAddr: no AI cores here to "
			   "report float overflow");
}

aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream)
{
	(void)activeStream;
	(void)stream;
	return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
			   "aclrtActiveStream: activating streams is for "
			   "models, which do not run here");
}
