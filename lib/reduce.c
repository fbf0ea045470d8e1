// SPDX-License-Identifier: MIT
/*
 * aclrtReduceAsync: the SDMA engine's reduce copy, dst[i] = dst[i] op
 * src[i] over count bytes of device memory, in stream order.  Here the
 * stream's worker does it with the CPU.
 *
 * The checks follow CANN's layers.  Its acl layer refuses NULL pointers, a
 * reserve that is not NULL and a data type outside the ones it maps for
 * the runtime (ACL_ERROR_INVALID_PARAM).  Its runtime then needs a context
 * and a stream of it, and asks the device's capability masks whether the
 * kind and the type are supported: a clear bit is
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT.  The "device" here reduces SUM, MAX
 * and MIN (not EQUAL) of int8, int16, int32, uint32, fp16, fp32 and bf16,
 * the widest set CANN documents for a part (Atlas 350); int4, uint8 and
 * uint16, which the acl layer maps but no part reduces, are refused so.
 * Both addresses must be aligned to the element (CANN's runtime checks
 * that too) and count must be whole elements; both ranges must lie in
 * live device memory, looked up again when the task runs.
 *
 * Integer sums wrap around; fp16 and bf16 are computed in float and
 * rounded once, fp16 as aclFloatToFloat16 rounds (CANN's saturation mode:
 * what would overflow becomes +-65504), bf16 to nearest even.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "args.h"
#include "context.h"
#include "copy.h"
#include "float16.h"
#include "log.h"
#include "stream.h"

static const char fn[] = "aclrtReduceAsync";

struct reduce_task {
	struct aclmem_task task;
	void *dst;
	const void *src;
	uint64_t count;
	int kind;
	int type;
};

/* Bytes per element of a type this device reduces, else 0. */
static size_t reduce_size(int type)
{
	switch (type) {
	case ACL_INT8:
		return 1;
	case ACL_INT16:
	case ACL_FLOAT16:
	case ACL_BF16:
		return 2;
	case ACL_INT32:
	case ACL_UINT32:
	case ACL_FLOAT:
		return 4;
	default:
		return 0;
	}
}

/* The types CANN's acl layer passes on to its runtime. */
static bool type_mapped(int type)
{
	return reduce_size(type) || type == ACL_INT4 || type == ACL_UINT8 ||
	       type == ACL_UINT16;
}

static bool kind_supported(int kind)
{
	return kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM ||
	       kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX ||
	       kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN;
}

/* One float operation; a NaN operand makes MAX and MIN NaN too. */
static float op_float(int kind, float a, float b)
{
	if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
		return a + b;
	if (isnan(a) || isnan(b))
		return isnan(a) ? a : b;
	if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX)
		return a > b ? a : b;
	return a < b ? a : b;
}

/* One integer operation: a sum wraps around, as two's complement does. */
static int64_t op_int(int kind, int64_t a, int64_t b)
{
	if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
		return a + b;
	if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX)
		return a > b ? a : b;
	return a < b ? a : b;
}

static void reduce_one(int kind, int type, unsigned char *d,
		       const unsigned char *s)
{
	int8_t i8[2];
	int16_t i16[2];
	int32_t i32[2];
	uint32_t u32[2];
	uint16_t h[2];
	float f[2];

	switch (type) {
	case ACL_INT8:
		memcpy(&i8[0], d, 1);
		memcpy(&i8[1], s, 1);
		i8[0] = (int8_t)(uint8_t)op_int(kind, i8[0], i8[1]);
		memcpy(d, &i8[0], 1);
		break;
	case ACL_INT16:
		memcpy(&i16[0], d, 2);
		memcpy(&i16[1], s, 2);
		i16[0] = (int16_t)(uint16_t)op_int(kind, i16[0], i16[1]);
		memcpy(d, &i16[0], 2);
		break;
	case ACL_INT32:
		memcpy(&i32[0], d, 4);
		memcpy(&i32[1], s, 4);
		i32[0] = (int32_t)(uint32_t)op_int(kind, i32[0], i32[1]);
		memcpy(d, &i32[0], 4);
		break;
	case ACL_UINT32:
		memcpy(&u32[0], d, 4);
		memcpy(&u32[1], s, 4);
		u32[0] = (uint32_t)op_int(kind, u32[0], u32[1]);
		memcpy(d, &u32[0], 4);
		break;
	case ACL_FLOAT:
		memcpy(&f[0], d, 4);
		memcpy(&f[1], s, 4);
		f[0] = op_float(kind, f[0], f[1]);
		memcpy(d, &f[0], 4);
		break;
	case ACL_FLOAT16:
		memcpy(h, d, 2);
		memcpy(&h[1], s, 2);
		h[0] = aclFloatToFloat16(op_float(kind, aclFloat16ToFloat(h[0]),
						  aclFloat16ToFloat(h[1])));
		memcpy(d, &h[0], 2);
		break;
	case ACL_BF16:
		memcpy(h, d, 2);
		memcpy(&h[1], s, 2);
		f[0] = op_float(kind, aclmem_bf16_to_float(h[0]),
				aclmem_bf16_to_float(h[1]));
		h[0] = aclmem_float_to_bf16(f[0]);
		memcpy(d, &h[0], 2);
		break;
	}
}

static int reduce_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct reduce_task *t = (struct reduce_task *)task;
	size_t size = reduce_size(t->type), i;
	int ret;

	(void)s;
	/* The buffers may have been freed since the call. */
	ret = aclmem_copy_recheck(t->dst, t->count, t->src, t->count,
				  ACL_MEMCPY_DEVICE_TO_DEVICE);
	if (ret) {
		aclmem_info("queued reduce of %llu bytes at %p failed: %d",
			    (unsigned long long)t->count, t->dst, ret);
		return ret;
	}
	for (i = 0; i < t->count; i += size)
		reduce_one(t->kind, t->type, (unsigned char *)t->dst + i,
			   (const unsigned char *)t->src + i);
	return ACL_SUCCESS;
}

static const struct aclmem_task_ops reduce_ops = {
	.run = reduce_run,
	.release = aclmem_task_free,
	.name = "reduce",
	.replay = aclmem_task_dup,
};

/* The runtime's checks, in its order: an ACL code. */
static int reduce_check(void *dst, const void *src, uint64_t count,
			int kind, int type, aclrtStream stream)
{
	struct aclmem_stream *s;
	size_t size = reduce_size(type);
	int ret;

	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_fail(ret, "%s: no current context", fn);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_fail(ret, "%s: stream %p is not one of the "
				   "current context", fn, stream);
	aclmem_stream_put(s);
	if (!kind_supported(kind))
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "%s: reduce kind %d is not supported "
				   "(SUM, MAX, MIN)", fn, kind);
	if (!size)
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "%s: data type %d cannot be reduced", fn,
				   type);
	if ((uintptr_t)dst % size || (uintptr_t)src % size)
		return aclmem_fail(ACL_ERROR_RT_ADDR_UNALIGNED,
				   "%s: %s %p is not aligned to its %zu-byte "
				   "elements", fn,
				   (uintptr_t)dst % size ? "dst" : "src",
				   (uintptr_t)dst % size ? dst : src, size);
	if (count % size)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: count %llu is not whole %zu-byte "
				   "elements", fn, (unsigned long long)count,
				   size);
	if (aclmem_range_wraps(dst, count) || aclmem_range_wraps(src, count))
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: count %llu runs past the address space",
				   fn, (unsigned long long)count);
	return ACL_SUCCESS;
}

aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count,
			  aclrtReduceKind kind, aclDataType type,
			  aclrtStream stream, void *reserve)
{
	struct reduce_task *t;
	int ret;

	if (!dst)
		return aclmem_arg_null(fn, "dst");
	if (!src)
		return aclmem_arg_null(fn, "src");
	if (reserve)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: reserve must be NULL", fn);
	if (!type_mapped((int)type))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: data type %d is not supported", fn,
				   (int)type);
	ret = reduce_check(dst, src, count, (int)kind, (int)type, stream);
	if (ret)
		return ret;
	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_copy_check(dst, (size_t)count, src, (size_t)count,
				ACL_MEMCPY_DEVICE_TO_DEVICE);
	if (ret)
		return aclmem_api_ret(fn, ret);
	t = aclmem_task_new(fn, sizeof(*t), &reduce_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->dst = dst;
	t->src = src;
	t->count = count;
	t->kind = (int)kind;
	t->type = (int)type;
	return aclmem_task_queue(fn, stream, &t->task);
}
