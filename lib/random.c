// SPDX-License-Identifier: MIT
/*
 * aclrtRandomNumAsync: the device's random number task, run by the
 * stream's worker.  As on the device the generator is Philox4x32-10: the
 * key is the 64-bit seed, the counter the 128 bits (four little-endian
 * 32-bit words, lowest first) at randomCounterAddr, which the task
 * advances by the blocks it used, so that calls in a row give new numbers
 * and the same seed and counter give the same numbers again.  How the
 * device maps Philox words to values is not public; this mapping is the
 * library's own, so sequences match other runs of this library, not an
 * NPU's.
 *
 * Distributions: uniform (floats in [min, max), rounded to the type;
 * integers in [min, max), max == min giving min), normal (Box-Muller),
 * truncated normal (drawn again until within two standard deviations, as
 * the common definition has it), dropout bitmask (bit i, least significant
 * first in byte i / 8, is 1 when element i is kept: drawn u >= ratio, the
 * ratio being the fraction dropped).
 *
 * A parameter is a value (isAddr 0, size bytes of valueOrAddr) or the
 * address of one in device memory (isAddr 1), read when the task runs.
 * Seed and count are 4- or 8-byte integers, a pointed-to one is 64-bit;
 * the other values have the size of the task's data type.  randomParaAddr
 * is the device's staging area for the parameters: the task keeps its own
 * copy, so it is accepted and not used.
 *
 * Codes: taskInfo NULL or a data type CANN does not generate
 * ACL_ERROR_INVALID_PARAM (its acl layer); then, as its runtime, no
 * context 107002, a stream of another context 107003, reserve not NULL, a
 * function type out of range, a type the function does not take (normal
 * ones are floating point), isAddr other than 0 or 1, a bad size, the
 * result or counter not in live device memory, min > max, a negative
 * stddev or a ratio outside [0, 1]: ACL_ERROR_RT_PARAM_INVALID, found
 * when the call is made where the values are in the task information,
 * else by the task (the stream's error at its synchronisation).
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

static const char fn[] = "aclrtRandomNumAsync";

struct random_task {
	struct aclmem_task task;
	aclrtRandomNumTaskInfo info;
};

/* The resolved parameters of one task. */
struct random_args {
	uint64_t seed, num;
	double a, b;		/* min/max, mean/stddev, ratio */
	int64_t ia, ib;		/* integer min/max */
	size_t out_bytes;
};

static size_t type_size(int type)
{
	switch (type) {
	case ACL_BF16:
	case ACL_FLOAT16:
		return 2;
	case ACL_INT32:
	case ACL_UINT32:
	case ACL_FLOAT:
		return 4;
	case ACL_INT64:
	case ACL_UINT64:
		return 8;
	default:
		return 0;
	}
}

static bool type_float(int type)
{
	return type == ACL_BF16 || type == ACL_FLOAT16 || type == ACL_FLOAT;
}

/*
 * Where a parameter's bytes are: in the structure, or at its address in
 * device memory (check only: NULL *p).  ACL code.
 */
static int param_bytes(const aclrtRandomParaInfo *p, size_t want,
		       bool counts, const void **at)
{
	void *addr;

	if (p->isAddr > 1)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (!p->isAddr) {
		if (counts ? p->size != 4 && p->size != 8 : p->size != want)
			return ACL_ERROR_RT_PARAM_INVALID;
		*at = p->valueOrAddr;
		return ACL_SUCCESS;
	}
	memcpy(&addr, p->valueOrAddr, sizeof(addr));
	if (!addr || aclmem_copy_recheck(addr, want, addr, want,
					 ACL_MEMCPY_DEVICE_TO_DEVICE))
		return ACL_ERROR_RT_PARAM_INVALID;
	*at = addr;
	return ACL_SUCCESS;
}

static int param_count(const aclrtRandomParaInfo *p, uint64_t *v)
{
	const void *at;
	uint32_t v32;
	int ret = param_bytes(p, 8, true, &at);

	if (ret)
		return ret;
	if (!p->isAddr && p->size == 4) {
		memcpy(&v32, at, 4);
		*v = v32;
	} else {
		memcpy(v, at, 8);
	}
	return ACL_SUCCESS;
}

/* A value of the task's type, as a double and as an integer. */
static int param_value(const aclrtRandomParaInfo *p, int type, double *d,
		       int64_t *i)
{
	const void *at;
	uint16_t h;
	int32_t s32;
	uint32_t u32;
	float f;
	int ret = param_bytes(p, type_size(type), false, &at);

	if (ret)
		return ret;
	*i = 0;
	switch (type) {
	case ACL_FLOAT16:
		memcpy(&h, at, 2);
		*d = aclFloat16ToFloat(h);
		break;
	case ACL_BF16:
		memcpy(&h, at, 2);
		*d = aclmem_bf16_to_float(h);
		break;
	case ACL_FLOAT:
		memcpy(&f, at, 4);
		*d = f;
		break;
	case ACL_INT32:
		memcpy(&s32, at, 4);
		*i = s32;
		break;
	case ACL_UINT32:
		memcpy(&u32, at, 4);
		*i = u32;
		break;
	default:		/* 64-bit: the bits, unsigned ones compared so */
		memcpy(i, at, 8);
		break;
	}
	if (!type_float(type))
		*d = (double)*i;
	return ACL_SUCCESS;
}

/* Everything the task needs, read and checked; ACL code. */
static int resolve(const aclrtRandomNumTaskInfo *t, struct random_args *a)
{
	const aclrtRandomNumFuncParaInfo *f = &t->randomNumFuncParaInfo;
	int type = (int)t->dataType;
	size_t size = type_size(type);
	bool ok;
	int ret;

	ret = param_count(&t->randomSeed, &a->seed);
	if (!ret)
		ret = param_count(&t->randomNum, &a->num);
	if (ret)
		return ret;
	switch (f->funcType) {
	case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
		if (!type_float(type))
			return ACL_ERROR_RT_PARAM_INVALID;
		ret = param_value(&f->paramInfo.dropoutBitmaskInfo.dropoutRation,
				  type, &a->a, &a->ia);
		ok = a->a >= 0 && a->a <= 1;
		a->out_bytes = (size_t)(a->num / 8 + !!(a->num % 8));
		break;
	case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
		ret = param_value(&f->paramInfo.uniformDisInfo.min, type,
				  &a->a, &a->ia);
		if (!ret)
			ret = param_value(&f->paramInfo.uniformDisInfo.max,
					  type, &a->b, &a->ib);
		if (type == ACL_UINT64)
			ok = (uint64_t)a->ia <= (uint64_t)a->ib;
		else if (type_float(type))
			ok = a->a <= a->b;
		else
			ok = a->ia <= a->ib;
		break;
	case ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS:
	case ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS:
		if (!type_float(type))
			return ACL_ERROR_RT_PARAM_INVALID;
		ret = param_value(&f->paramInfo.normalDisInfo.mean, type,
				  &a->a, &a->ia);
		if (!ret)
			ret = param_value(&f->paramInfo.normalDisInfo.stddev,
					  type, &a->b, &a->ib);
		ok = a->b >= 0;
		break;
	default:
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	if (ret)
		return ret;
	if (!ok)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (f->funcType != ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK) {
		if (a->num > SIZE_MAX / size)
			return ACL_ERROR_RT_PARAM_INVALID;
		a->out_bytes = (size_t)a->num * size;
	}
	if (!t->randomCounterAddr ||
	    aclmem_copy_recheck(t->randomCounterAddr, 16, t->randomCounterAddr,
				16, ACL_MEMCPY_DEVICE_TO_DEVICE))
		return ACL_ERROR_RT_PARAM_INVALID;
	if (!t->randomResultAddr ||
	    (a->out_bytes &&
	     aclmem_copy_recheck(t->randomResultAddr, a->out_bytes,
				 t->randomResultAddr, a->out_bytes,
				 ACL_MEMCPY_DEVICE_TO_DEVICE)))
		return ACL_ERROR_RT_PARAM_INVALID;
	return ACL_SUCCESS;
}

/* ---- Philox4x32-10 ---- */

struct philox {
	uint32_t ctr[4], key[2];
	uint32_t out[4];
	unsigned int used;	/* words of out handed out */
	uint64_t blocks;
};

static void philox_block(struct philox *p)
{
	uint32_t c[4], k[2];
	uint64_t m0, m1;
	int r;

	memcpy(c, p->ctr, sizeof(c));
	memcpy(k, p->key, sizeof(k));
	for (r = 0; r < 10; r++) {
		m0 = (uint64_t)0xD2511F53u * c[0];
		m1 = (uint64_t)0xCD9E8D57u * c[2];
		c[0] = (uint32_t)(m1 >> 32) ^ c[1] ^ k[0];
		c[1] = (uint32_t)m1;
		c[2] = (uint32_t)(m0 >> 32) ^ c[3] ^ k[1];
		c[3] = (uint32_t)m0;
		k[0] += 0x9E3779B9u;
		k[1] += 0xBB67AE85u;
	}
	memcpy(p->out, c, sizeof(c));
	p->used = 0;
	p->blocks++;
	/* The 128-bit counter steps by one, carrying upwards. */
	for (r = 0; r < 4 && !++p->ctr[r]; r++)
		;
}

static uint32_t philox_u32(struct philox *p)
{
	if (p->used == 4)
		philox_block(p);
	return p->out[p->used++];
}

static uint64_t philox_u64(struct philox *p)
{
	uint64_t hi = philox_u32(p);

	return hi << 32 | philox_u32(p);
}

/* Uniform in [0, 1), 53 bits. */
static double philox_unit(struct philox *p)
{
	return (double)(philox_u64(p) >> 11) * 0x1p-53;
}

static double normal_draw(struct philox *p, bool truncated)
{
	double z;

	do {
		double u1 = 1.0 - philox_unit(p);	/* (0, 1] */
		double u2 = philox_unit(p);

		z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
	} while (truncated && fabs(z) > 2.0);
	return z;
}

static void store(void *out, uint64_t i, int type, double d, int64_t v)
{
	unsigned char *o = out;
	uint16_t h;
	int32_t s32;
	uint32_t u32;
	float f;

	switch (type) {
	case ACL_FLOAT16:
		h = aclFloatToFloat16((float)d);
		memcpy(o + i * 2, &h, 2);
		break;
	case ACL_BF16:
		h = aclmem_float_to_bf16((float)d);
		memcpy(o + i * 2, &h, 2);
		break;
	case ACL_FLOAT:
		f = (float)d;
		memcpy(o + i * 4, &f, 4);
		break;
	case ACL_INT32:
		s32 = (int32_t)v;
		memcpy(o + i * 4, &s32, 4);
		break;
	case ACL_UINT32:
		u32 = (uint32_t)v;
		memcpy(o + i * 4, &u32, 4);
		break;
	default:
		memcpy(o + i * 8, &v, 8);
		break;
	}
}

static void generate(const aclrtRandomNumTaskInfo *t,
		     const struct random_args *a)
{
	int func = t->randomNumFuncParaInfo.funcType, type = (int)t->dataType;
	unsigned char *out = t->randomResultAddr;
	struct philox p = { .used = 4 };
	uint64_t i, span;
	double d;

	memcpy(p.ctr, t->randomCounterAddr, sizeof(p.ctr));
	p.key[0] = (uint32_t)a->seed;
	p.key[1] = (uint32_t)(a->seed >> 32);
	if (func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK)
		memset(out, 0, a->out_bytes);
	span = (uint64_t)a->ib - (uint64_t)a->ia;
	for (i = 0; i < a->num; i++) {
		switch (func) {
		case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
			if (philox_unit(&p) >= a->a)
				out[i / 8] |= (unsigned char)(1u << (i % 8));
			continue;
		case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
			if (!type_float(type)) {
				store(out, i, type, 0, (int64_t)((uint64_t)a->ia +
					(span ? philox_u64(&p) % span : 0)));
				continue;
			}
			d = a->a + (a->b - a->a) * philox_unit(&p);
			break;
		default:
			d = a->a + a->b * normal_draw(&p,
				func == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS);
			break;
		}
		store(out, i, type, d, 0);
	}
	memcpy(t->randomCounterAddr, p.ctr, sizeof(p.ctr));
}

static int random_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct random_task *t = (struct random_task *)task;
	struct random_args a;
	int ret;

	(void)s;
	ret = resolve(&t->info, &a);
	if (ret) {
		aclmem_info("queued random number task failed: %d", ret);
		return ret;
	}
	generate(&t->info, &a);
	return ACL_SUCCESS;
}

static const struct aclmem_task_ops random_ops = {
	.run = random_run,
	.release = aclmem_task_free,
	.name = "random numbers",
	.replay = aclmem_task_dup,
};

/* Not read from device memory: judged at the call (isAddr 2 included). */
static bool immediate(const aclrtRandomParaInfo *p)
{
	return p->isAddr != 1;
}

/* Whether every value the task takes can be checked at the call. */
static bool all_immediate(const aclrtRandomNumTaskInfo *t)
{
	const aclrtRandomNumFuncParaInfo *f = &t->randomNumFuncParaInfo;

	if (!immediate(&t->randomSeed) || !immediate(&t->randomNum))
		return false;
	switch (f->funcType) {
	case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
		return immediate(&f->paramInfo.dropoutBitmaskInfo.dropoutRation);
	case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
		return immediate(&f->paramInfo.uniformDisInfo.min) &&
		       immediate(&f->paramInfo.uniformDisInfo.max);
	default:
		return immediate(&f->paramInfo.normalDisInfo.mean) &&
		       immediate(&f->paramInfo.normalDisInfo.stddev);
	}
}

aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo,
			     const aclrtStream stream, void *reserve)
{
	struct aclmem_stream *s;
	struct random_task *t;
	struct random_args a;
	int ret;

	if (!taskInfo)
		return aclmem_arg_null(fn, "taskInfo");
	if (!type_size((int)taskInfo->dataType))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: data type %d is not generated", fn,
				   (int)taskInfo->dataType);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_fail(ret, "%s: no current context", fn);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_fail(ret, "%s: stream %p is not one of the "
				   "current context", fn, stream);
	aclmem_stream_put(s);
	if (reserve)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: reserve must be NULL", fn);
	if ((unsigned int)taskInfo->randomNumFuncParaInfo.funcType >
	    ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: function type %d is out of range", fn,
				   (int)taskInfo->randomNumFuncParaInfo.funcType);
	if (all_immediate(taskInfo)) {
		ret = resolve(taskInfo, &a);
		if (ret)
			return aclmem_fail(ret, "%s: the task information is "
					   "not valid (a type, size, value "
					   "or address)", fn);
	}
	t = aclmem_task_new(fn, sizeof(*t), &random_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->info = *taskInfo;
	return aclmem_task_queue(fn, stream, &t->task);
}
