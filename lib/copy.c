// SPDX-License-Identifier: MIT
/*
 * Copies and fills.  Device memory is mapped into the process, so the work
 * is a CPU memmove/memset; what the library adds is CANN's checking.
 *
 * Where a pointer lies decides what it is, as in CANN ("the system
 * determines whether it is host or device according to the address"): a
 * pointer inside a live aclrtMalloc* buffer is device memory, one inside an
 * aclrtMallocHost buffer is pinned host memory, anything else is ordinary
 * host memory of the process.  A range that starts inside an ACL buffer must
 * end inside it; a read-only buffer is never written.
 *
 * Ordinary host memory cannot be looked up, but the kernel can be asked
 * whether it is mapped with the access the copy needs (lib/hostmem.c), so
 * a stale pointer (a freed buffer, the parent's buffer in a fork()ed child)
 * or a read-only mapping is refused with ACL_ERROR_RT_PARAM_INVALID rather
 * than crashing the program.
 *
 * aclrtMemcpy takes its direction from the addresses: CANN documents kind
 * as a reserved parameter whose value does not matter.  The stream calls
 * (aclrtMemcpyAsync, aclrtMemcpy2d*) document kind as the direction, so
 * the device side(s) it names must be device memory and its host side(s)
 * must not be.
 *
 * A copy between buffers of two devices needs peer access between them
 * (aclrtDeviceEnablePeerAccess, either way round, or an IPC import that
 * enabled it), as CANN's copies between devices do; without it the copy
 * is refused with ACL_ERROR_RT_PARAM_INVALID.  Host memory and device
 * memory meet in a copy whatever the device.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "args.h"
#include "context.h"
#include "copy.h"
#include "hostmem.h"
#include "log.h"
#include "memory.h"
#include "model.h"
#include "peer.h"
#include "stream.h"

/* aclrtMemcpy2dAsync's documented limits. */
#define MAX_2D_WIDTH	5000000u
#define MAX_2D_HEIGHT	(5u * 1024 * 1024)

/* What is at [p, p + len). */
enum where { W_HOST, W_PINNED, W_DEVICE, W_BAD };

/* *dev, when asked for: the device of W_DEVICE memory. */
static enum where locate(const void *p, size_t len, bool write, int32_t *dev)
{
	struct aclmem_range r;

	switch (aclmem_mem_lookup(p, len, &r)) {
	case ACLMEM_RANGE_INSIDE:
		if (write && r.readonly)
			return W_BAD;
		if (dev)
			*dev = r.device;
		return r.kind == ACLMEM_BUF_DEVICE ? W_DEVICE : W_PINNED;
	case ACLMEM_RANGE_NONE:
		return aclmem_host_usable(p, len, write) ? W_HOST : W_BAD;
	case ACLMEM_RANGE_OVERRUN:
	default:
		return W_BAD;
	}
}

/* Which side(s) a kind says are device memory: -1 any, 0 host, 1 device. */
static int kind_sides(int kind, int *dst_dev, int *src_dev)
{
	switch (kind) {
	case ACL_MEMCPY_HOST_TO_HOST:
		*dst_dev = *src_dev = 0;
		return 0;
	case ACL_MEMCPY_HOST_TO_DEVICE:
	case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
		*dst_dev = 1;
		*src_dev = 0;
		return 0;
	case ACL_MEMCPY_DEVICE_TO_HOST:
		*dst_dev = 0;
		*src_dev = 1;
		return 0;
	case ACL_MEMCPY_DEVICE_TO_DEVICE:
	case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
	case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
		/* Within a device or between two: the addresses tell. */
		*dst_dev = *src_dev = 1;
		return 0;
	case ACL_MEMCPY_DEFAULT:
		*dst_dev = *src_dev = -1;
		return 0;
	default:
		return ACL_ERROR_INVALID_PARAM;
	}
}

static bool side_ok(enum where w, int want_dev)
{
	if (w == W_BAD)
		return false;
	if (want_dev < 0)
		return true;
	return want_dev ? w == W_DEVICE : w != W_DEVICE;
}

/*
 * Both sides of one run of a copy as the kind wants them, and two
 * devices' buffers only with peer access between them.
 */
static bool sides_ok(void *dst, const void *src, size_t len, int dst_dev,
		     int src_dev)
{
	int32_t dn = 0, sn = 0;
	enum where ws = locate(src, len, false, &sn), wd;

	/* A bad source spares the destination's lookup, as before peers. */
	if (!side_ok(ws, src_dev))
		return false;
	wd = locate(dst, len, true, &dn);
	if (!side_ok(wd, dst_dev))
		return false;
	return ws != W_DEVICE || wd != W_DEVICE ||
	       aclmem_peer_copy_allowed(sn, dn);
}

/* The ranges of a copy; kind < 0: judged from the addresses alone. */
static int copy_ranges(void *dst, size_t destMax, const void *src,
		       size_t count, int kind)
{
	int dst_dev = -1, src_dev = -1;

	if (count > destMax)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (kind >= 0 && kind_sides(kind, &dst_dev, &src_dev))
		return ACL_ERROR_INVALID_PARAM;
	if (!sides_ok(dst, src, count, dst_dev, src_dev))
		return ACL_ERROR_RT_PARAM_INVALID;
	return ACL_SUCCESS;
}

static bool kind_valid(int kind)
{
	return kind >= ACL_MEMCPY_HOST_TO_HOST &&
	       kind <= ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
}

int aclmem_copy_recheck(void *dst, size_t destMax, const void *src,
			size_t count, int kind)
{
	return copy_ranges(dst, destMax, src, count, kind);
}

/*
 * Why copy_ranges() refused, for the calling thread's message (the public
 * caller records the code).  Not on a worker: a queued copy's error is
 * the stream's, reported by its synchronisation.
 */
static int ranges_err(int ret, void *dst, size_t destMax, const void *src,
		      size_t count)
{
	if (ret == ACL_ERROR_INVALID_PARAM)
		aclmem_err("unknown copy kind");
	else if (ret && count > destMax)
		aclmem_err("count %zu is above destMax %zu", count, destMax);
	else if (ret)
		aclmem_err("[%p, +%zu) to [%p, +%zu): a range is not memory "
			   "the copy may use (or of two devices without peer "
			   "access)", src, count, dst, count);
	return ret;
}

int aclmem_copy_check(void *dst, size_t destMax, const void *src,
		      size_t count, int kind)
{
	int ret;

	if (!dst || !src || !kind_valid(kind)) {
		aclmem_err("%s", !dst ? "dst is NULL" : !src ? "src is NULL" :
			   "unknown copy kind");
		return ACL_ERROR_INVALID_PARAM;
	}
	/* CANN, for a host run: "does not support asynchronous copies
	 * within the host", documented as this code. */
	if (kind == ACL_MEMCPY_HOST_TO_HOST) {
		aclmem_err("no asynchronous copy within the host");
		return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	}
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	return ranges_err(copy_ranges(dst, destMax, src, count, kind), dst,
			  destMax, src, count);
}

void aclmem_copy_run(void *dst, const void *src, size_t count)
{
	/* Ranges may overlap within one buffer (device to device). */
	memmove(dst, src, count);
}

static int set_recheck(void *devPtr, size_t maxCount, size_t count)
{
	if (count > maxCount)
		return ACL_ERROR_RT_PARAM_INVALID;
	return locate(devPtr, count, true, NULL) == W_BAD ?
	       ACL_ERROR_RT_PARAM_INVALID : ACL_SUCCESS;
}

static int set_check(void *devPtr, size_t maxCount, size_t count)
{
	int ret;

	if (!devPtr) {
		aclmem_err("devPtr is NULL");
		return ACL_ERROR_INVALID_PARAM;
	}
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	ret = set_recheck(devPtr, maxCount, count);
	if (ret && count > maxCount)
		aclmem_err("count %zu is above maxCount %zu", count, maxCount);
	else if (ret)
		aclmem_err("[%p, +%zu) is not memory the fill may write",
			   devPtr, count);
	return ret;
}

static void set_run(void *devPtr, int32_t value, size_t count)
{
	/* The device fills bytes with the value's low byte, like memset(). */
	memset(devPtr, (int)(uint8_t)value, count);
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	int ret;

	/* CANN returns before any other check when there is nothing to do. */
	if (!count)
		return ACL_SUCCESS;
	if (!dst || !src || !kind_valid((int)kind))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: %s",
				   !dst ? "dst is NULL" : !src ? "src is NULL" :
				   "unknown copy kind");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtMemcpy", ret);
	ret = copy_ranges(dst, destMax, src, count, -1);
	if (ret)
		return aclmem_api_ret("aclrtMemcpy",
				      ranges_err(ret, dst, destMax, src,
						 count));
	ret = aclmem_model_unsafe("aclrtMemcpy");
	if (ret)
		return ret;
	aclmem_copy_run(dst, src, count);
	return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
		     size_t count)
{
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = set_check(devPtr, maxCount, count);
	if (!ret)
		ret = aclmem_model_unsafe("aclrtMemset");
	if (ret)
		return aclmem_api_ret("aclrtMemset", ret);
	set_run(devPtr, value, count);
	return ACL_SUCCESS;
}

/* ---- copies and fills in stream order ---- */

struct copy_task {
	struct aclmem_task task;
	bool fill;
	void *dst;
	const void *src;
	size_t max;
	size_t count;
	int kind;
	int32_t value;
};

static int copy_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	struct copy_task *c = (struct copy_task *)t;
	int ret;

	(void)s;
	if (!c->fill) {
		ret = aclmem_copy_recheck(c->dst, c->max, c->src, c->count,
					  c->kind);
		if (!ret)
			aclmem_copy_run(c->dst, c->src, c->count);
	} else {
		ret = set_recheck(c->dst, c->max, c->count);
		if (!ret)
			set_run(c->dst, c->value, c->count);
	}
	if (ret)
		aclmem_info("queued %s of %zu bytes at %p failed: %d",
			    c->fill ? "fill" : "copy", c->count, c->dst, ret);
	return ret;
}

static const char *copy_label(const struct aclmem_task *t)
{
	static const char *const kinds[] = {
		[ACL_MEMCPY_HOST_TO_HOST] = "memcpy H2H",
		[ACL_MEMCPY_HOST_TO_DEVICE] = "memcpy H2D",
		[ACL_MEMCPY_DEVICE_TO_HOST] = "memcpy D2H",
		[ACL_MEMCPY_DEVICE_TO_DEVICE] = "memcpy D2D",
	};
	const struct copy_task *c = (const struct copy_task *)t;

	if (c->fill)
		return "memset";
	if (c->kind >= 0 && (size_t)c->kind < sizeof(kinds) / sizeof(kinds[0]))
		return kinds[c->kind];
	return NULL;
}

static const struct aclmem_task_ops copy_ops = {
	.run = copy_run,
	.release = aclmem_task_free,
	.name = "copy",
	.label = copy_label,
	.replay = aclmem_task_dup,
};

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
			  size_t count, aclrtMemcpyKind kind,
			  aclrtStream stream)
{
	static const char fn[] = "aclrtMemcpyAsync";
	struct copy_task *c;
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_copy_check(dst, destMax, src, count, (int)kind);
	if (ret)
		return aclmem_api_ret(fn, ret);
	c = aclmem_task_new(fn, sizeof(*c), &copy_ops);
	if (!c)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	c->dst = dst;
	c->src = src;
	c->max = destMax;
	c->count = count;
	c->kind = (int)kind;
	return aclmem_task_queue(fn, stream, &c->task);
}

int aclmem_fill_async(const char *fn, void *dst, size_t maxCount,
		      int32_t value, size_t count, void *stream)
{
	struct copy_task *c;
	int ret;

	ret = set_check(dst, maxCount, count);
	if (ret)
		return ret;
	c = aclmem_task_new(fn, sizeof(*c), &copy_ops);
	if (!c)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	c->fill = true;
	c->dst = dst;
	c->max = maxCount;
	c->count = count;
	c->value = value;
	return aclmem_stream_submit(stream, &c->task);
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
			  size_t count, aclrtStream stream)
{
	static const char fn[] = "aclrtMemsetAsync";

	if (!count)
		return ACL_SUCCESS;
	return aclmem_api_ret(fn, aclmem_fill_async(fn, devPtr, maxCount,
						    value, count, stream));
}

/* ---- 2D copies ---- */

struct copy2d {
	void *dst;
	const void *src;
	size_t dpitch, spitch, width, height;
	int kind;
};

/* base + (height - 1) * pitch + width does not pass the address space. */
static bool extent_ok(uintptr_t base, size_t pitch, size_t width,
		      size_t height)
{
	uintptr_t room;

	if (aclmem_range_wraps((void *)base, width))
		return false;
	room = UINTPTR_MAX - base - width;
	return !pitch || height - 1 <= room / pitch;
}

/* Every row of the copy against the kind; ACL code. */
static int copy2d_ranges(const struct copy2d *c)
{
	int dst_dev, src_dev;
	size_t i;

	if (kind_sides(c->kind, &dst_dev, &src_dev))
		return ACL_ERROR_INVALID_PARAM;
	/* The whole extent must be addressable before a row is looked at. */
	if (!extent_ok((uintptr_t)c->dst, c->dpitch, c->width, c->height) ||
	    !extent_ok((uintptr_t)c->src, c->spitch, c->width, c->height))
		return ACL_ERROR_RT_PARAM_INVALID;
	for (i = 0; i < c->height; i++) {
		const char *s = (const char *)c->src + i * c->spitch;
		char *d = (char *)c->dst + i * c->dpitch;

		if (!sides_ok(d, s, c->width, dst_dev, src_dev))
			return ACL_ERROR_RT_PARAM_INVALID;
	}
	return ACL_SUCCESS;
}

static void copy2d_run(const struct copy2d *c)
{
	size_t i;

	for (i = 0; i < c->height; i++)
		memmove((char *)c->dst + i * c->dpitch,
			(const char *)c->src + i * c->spitch, c->width);
}

/*
 * CANN's order: an empty copy succeeds at once; NULL pointers, a width
 * wider than a pitch, or a kind the call does not take are
 * ACL_ERROR_INVALID_PARAM; then the current context; then the ranges.
 */
static int copy2d_check(const char *fn, const struct copy2d *c, bool async)
{
	int k = c->kind;
	int ret;

	if (!c->dst || !c->src)
		return aclmem_arg_null(fn, !c->dst ? "dst" : "src");
	if (c->width > c->spitch || c->width > c->dpitch)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: width %zu is above a pitch (%zu, %zu)",
				   fn, c->width, c->dpitch, c->spitch);
	if (k != ACL_MEMCPY_HOST_TO_DEVICE && k != ACL_MEMCPY_DEVICE_TO_HOST &&
	    k != ACL_MEMCPY_DEFAULT &&
	    !(async && k == ACL_MEMCPY_DEVICE_TO_DEVICE))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: kind %d not taken", fn, k);
	if (async && (c->width > MAX_2D_WIDTH || c->height > MAX_2D_HEIGHT))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: %zu x %zu is above the limits", fn,
				   c->width, c->height);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	ret = copy2d_ranges(c);
	if (ret)
		return aclmem_fail(ret, "%s: a row is not memory of the side "
				   "kind %d names", fn, k);
	return ACL_SUCCESS;
}

aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src,
		       size_t spitch, size_t width, size_t height,
		       aclrtMemcpyKind kind)
{
	struct copy2d c = { dst, src, dpitch, spitch, width, height,
			    (int)kind };
	int ret;

	if (!width || !height)
		return ACL_SUCCESS;
	ret = copy2d_check("aclrtMemcpy2d", &c, false);
	if (!ret)
		ret = aclmem_model_unsafe("aclrtMemcpy2d");
	if (ret)
		return ret;
	copy2d_run(&c);
	return ACL_SUCCESS;
}

struct copy2d_task {
	struct aclmem_task task;
	struct copy2d c;
};

static int copy2d_task_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	struct copy2d_task *ct = (struct copy2d_task *)t;
	int ret;

	(void)s;
	/* Checked again: a buffer may have been freed since it was queued. */
	ret = copy2d_ranges(&ct->c);
	if (!ret)
		copy2d_run(&ct->c);
	else
		aclmem_info("queued 2D copy to %p failed: %d", ct->c.dst, ret);
	return ret;
}

static const struct aclmem_task_ops copy2d_ops = {
	.run = copy2d_task_run,
	.release = aclmem_task_free,
	.name = "memcpy 2d",
	.replay = aclmem_task_dup,
};

aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src,
			    size_t spitch, size_t width, size_t height,
			    aclrtMemcpyKind kind, aclrtStream stream)
{
	struct copy2d c = { dst, src, dpitch, spitch, width, height,
			    (int)kind };
	struct copy2d_task *t;
	int ret;

	if (!width || !height)
		return ACL_SUCCESS;
	ret = copy2d_check("aclrtMemcpy2dAsync", &c, true);
	if (ret)
		return ret;
	t = aclmem_task_new("aclrtMemcpy2dAsync", sizeof(*t), &copy2d_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->c = c;
	return aclmem_task_queue("aclrtMemcpy2dAsync", stream, &t->task);
}

/* ---- 32-bit fills ---- */

/*
 * CANN's checks, in its order: N == 0 succeeds at once; a NULL or
 * unaligned pointer, N * 4 overflowing or above memSize, or memory that
 * aclrtMalloc/aclrtMallocHost did not allocate are ACL_ERROR_INVALID_PARAM;
 * then the current context; then the range (past the buffer's end, or a
 * read-only buffer: ACL_ERROR_RT_PARAM_INVALID).  *kind gets the buffer's.
 */
static int d32_check(const char *fn, void *ptr, size_t memSize, size_t N,
		     uint8_t *kind)
{
	struct aclmem_range r;
	int ret;

	if (!ptr || ((uintptr_t)ptr & 3))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: ptr %p %s", fn,
				   ptr, !ptr ? "is NULL" : "is not 4-aligned");
	if (N > SIZE_MAX / 4 || memSize < N * 4)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: %zu words do not fit in memSize %zu", fn,
				   N, memSize);
	if (aclmem_mem_lookup(ptr, 0, &r) != ACLMEM_RANGE_INSIDE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: %p is not in a live ACL buffer", fn, ptr);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (aclmem_mem_lookup(ptr, N * 4, &r) != ACLMEM_RANGE_INSIDE)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: [%p, +%zu words) passes the buffer's end",
				   fn, ptr, N);
	if (r.readonly)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: %p is in a read-only buffer", fn, ptr);
	*kind = r.kind;
	return ACL_SUCCESS;
}

static void d32_run(void *ptr, uint32_t value, size_t N)
{
	uint32_t *p = ptr;
	size_t i;

	for (i = 0; i < N; i++)
		p[i] = value;
}

aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N)
{
	uint8_t kind;
	int ret;

	if (!N)
		return ACL_SUCCESS;
	ret = d32_check("aclrtMemsetD32", ptr, memSize, N, &kind);
	if (ret)
		return ret;
	d32_run(ptr, value, N);
	return ACL_SUCCESS;
}

struct d32_task {
	struct aclmem_task task;
	void *ptr;
	size_t N;
	uint32_t value;
};

static int d32_task_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	struct d32_task *d = (struct d32_task *)t;

	(void)s;
	if (aclmem_mem_range(d->ptr, d->N * 4, ACLMEM_BUF_DEVICE, NULL)) {
		aclmem_info("queued 32-bit fill at %p failed", d->ptr);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	d32_run(d->ptr, d->value, d->N);
	return ACL_SUCCESS;
}

static const struct aclmem_task_ops d32_ops = {
	.run = d32_task_run,
	.release = aclmem_task_free,
	.name = "memset d32",
	.replay = aclmem_task_dup,
};

aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value,
			     size_t N, aclrtStream stream)
{
	struct d32_task *t;
	uint8_t kind;
	int ret;

	if (!N)
		return ACL_SUCCESS;
	ret = d32_check("aclrtMemsetD32Async", ptr, memSize, N, &kind);
	if (ret)
		return ret;
	/* CANN: a fill of host memory is not queued; it is done at once. */
	if (kind == ACLMEM_BUF_HOST) {
		d32_run(ptr, value, N);
		return ACL_SUCCESS;
	}
	t = aclmem_task_new("aclrtMemsetD32Async", sizeof(*t), &d32_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->ptr = ptr;
	t->N = N;
	t->value = value;
	return aclmem_task_queue("aclrtMemsetD32Async", stream, &t->task);
}
