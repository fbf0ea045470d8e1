// SPDX-License-Identifier: MIT
/*
 * aclrtValueWrite / aclrtValueWait: a 64-bit word of device memory written,
 * or waited on, in stream order.  The word must lie inside one live
 * aclrtMalloc* buffer (ACL_ERROR_RT_PARAM_INVALID otherwise) and be 8-byte
 * aligned (ACL_ERROR_RT_ADDR_UNALIGNED), checked when the call is made and
 * again when the task runs: a buffer freed in between fails the stream's
 * next synchronisation instead of touching freed memory.
 *
 * A wait polls the word (every 100 us to 10 ms, backing off) until its
 * condition holds, giving up only when the stream is destroyed or aborted;
 * the writer may be the CPU, another stream or another process sharing the
 * memory.  Conditions, as CANN's flags name them: GEQ *p >= value, EQ
 * *p == value, AND (*p & value) != 0, NOR ~(*p | value) != 0.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "log.h"
#include "memory.h"
#include "stream.h"

#define POLL_MIN_NS	(100 * 1000L)
#define POLL_MAX_NS	(10 * 1000 * 1000L)

struct value_task {
	struct aclmem_task task;
	uint64_t *addr;
	uint64_t value;
	uint32_t flag;
	bool wait;
};

static int check_word(const void *addr, bool write)
{
	struct aclmem_range r;

	if (!addr)
		return ACL_ERROR_INVALID_PARAM;
	if ((uintptr_t)addr % sizeof(uint64_t))
		return ACL_ERROR_RT_ADDR_UNALIGNED;
	if (aclmem_mem_lookup(addr, sizeof(uint64_t), &r) !=
	    ACLMEM_RANGE_INSIDE || r.kind != ACLMEM_BUF_DEVICE) {
		aclmem_err("value at %p: not inside a device buffer", addr);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	if (write && r.readonly)
		return ACL_ERROR_RT_PARAM_INVALID;
	return ACL_SUCCESS;
}

static bool holds(uint64_t v, uint64_t value, uint32_t flag)
{
	switch (flag) {
	case ACL_STREAM_WAIT_VALUE_GEQ:
		return v >= value;
	case ACL_STREAM_WAIT_VALUE_EQ:
		return v == value;
	case ACL_STREAM_WAIT_VALUE_AND:
		return (v & value) != 0;
	case ACL_STREAM_WAIT_VALUE_NOR:
		return ~(v | value) != 0;
	}
	return false;
}

static int value_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct value_task *t = (struct value_task *)task;
	struct timespec ts = { 0, POLL_MIN_NS };
	int ret;

	ret = check_word(t->addr, !t->wait);
	if (ret)
		return ret;
	if (!t->wait) {
		__atomic_store_n(t->addr, t->value, __ATOMIC_RELEASE);
		return ACL_SUCCESS;
	}
	while (!holds(__atomic_load_n(t->addr, __ATOMIC_ACQUIRE), t->value,
		      t->flag)) {
		if (aclmem_stream_cancelled(s))
			return ACL_ERROR_RT_STREAM_ABORT;
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < POLL_MAX_NS)
			ts.tv_nsec *= 2;
		/* The buffer may have been freed while we waited. */
		ret = check_word(t->addr, false);
		if (ret)
			return ret;
	}
	return ACL_SUCCESS;
}

static const char *value_label(const struct aclmem_task *t)
{
	return ((const struct value_task *)t)->wait ? "value wait" :
						      "value write";
}

static const struct aclmem_task_ops value_ops = {
	.run = value_run,
	.release = aclmem_task_free,
	.name = "value",
	.label = value_label,
	.replay = aclmem_task_dup,
};

static aclError queue(void *devAddr, uint64_t value, uint32_t flag,
		      bool wait, aclrtStream stream)
{
	struct value_task *t;
	int ret;

	/* Arguments first, then the context, as everywhere in CANN. */
	if (!devAddr)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	ret = check_word(devAddr, !wait);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->task.ops = &value_ops;
	t->task.size = sizeof(*t);
	t->addr = devAddr;
	t->value = value;
	t->flag = flag;
	t->wait = wait;
	return aclmem_stream_submit(stream, &t->task);
}

aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag,
			 aclrtStream stream)
{
	/* CANN: reserved, must be 0. */
	if (flag)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__,
				      queue(devAddr, value, 0, false, stream));
}

aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag,
			aclrtStream stream)
{
	if (flag > ACL_STREAM_WAIT_VALUE_NOR)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__,
				      queue(devAddr, value, flag, true, stream));
}
