/* SPDX-License-Identifier: MIT */
/*
 * Process and thread state: aclInit/aclFinalize, the devices (the NPUs
 * of /dev/npu-mem, 0 .. aclmem_device_count() - 1), their reference
 * counts, their contexts, and each thread's current context.
 *
 * Lock order: ctx lock -> streams lock -> one stream's lock -> the lock its
 * running task waits under (the task's cancel(), lib/stream.h); ctx lock ->
 * pool lock.  The buffer table's lock comes last: nothing is taken while it
 * is held but the IPC lock, to record a new key (ipcmem.c).  aclFinalize
 * takes it under the ctx lock, and the fork handlers under the ctx,
 * streams and pool locks (the parts' ranks below).
 */
#ifndef ACLMEM_CONTEXT_H
#define ACLMEM_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/npu_mem.h>

#include "device.h"

#define ACLMEM_MAX_DEVICES	ACLMEM_DEVICES_MAX

struct aclmem_ctx;
struct aclmem_stream;

/*
 * ACL_SUCCESS when the calling thread has a current context, otherwise
 * ACL_ERROR_RT_CONTEXT_NULL (as CANN: no aclrtSetDevice or context on this
 * thread, or its context was destroyed or its device reset since).
 * Lock-free unless some context died since the thread last checked.
 */
int aclmem_ctx_require(void);

/* The current context after a successful aclmem_ctx_require(). */
struct aclmem_ctx *aclmem_ctx_current(void);

/* The device a live context is on. */
int32_t aclmem_ctx_device(const struct aclmem_ctx *ctx);

/* True when ctx (which may be dangling) is a live context.  Takes the lock. */
bool aclmem_ctx_alive(const struct aclmem_ctx *ctx);

/* The device file; valid after a successful aclmem_ctx_require(). */
int aclmem_ctx_fd(void);

/* GET_INFO about the current context's device: ACL code. */
int aclmem_ctx_info(struct npu_mem_info *info);

/* True while device dev is set (its default context lives).  Takes the lock. */
bool aclmem_ctx_device_in_use(int32_t dev);

/*
 * The parts of the runtime built on this layer (streams, events, notifies,
 * host callbacks, the buffer table, the pool and what hangs off them)
 * register what they do when a context dies, at aclFinalize, around fork()
 * and when a stream goes, so that neither this layer nor the streams name
 * them and calls run one way.
 *
 * Ranks are the lock order: fork_prepare runs in rising rank (a part's
 * locks nest inside those of every lower rank, and all inside the context
 * lock), everything else in falling rank, so that what is built on a part
 * lets go before it.  Every hook may be NULL.
 */
enum aclmem_part_rank {
	ACLMEM_RANK_PROF,		/* the profiler's collection */
	ACLMEM_RANK_TDT,		/* TDT queues */
	ACLMEM_RANK_MODELS,		/* model run instances over streams */
	ACLMEM_RANK_ALLOCATOR,		/* custom allocators of streams */
	ACLMEM_RANK_NOTIFIES,
	ACLMEM_RANK_CALLBACKS,
	ACLMEM_RANK_EVENTS,
	ACLMEM_RANK_STREAMS,
	ACLMEM_RANK_POOL,
	ACLMEM_RANK_MEMORY,		/* the buffer table */
	ACLMEM_RANK_IPCMEM,		/* keys of buffers in the table */
	ACLMEM_RANK_HOSTREG,		/* registrations in the table */
};

struct aclmem_part {
	enum aclmem_part_rank rank;
	/* An unlinked context is being freed: drop what it owns. */
	void (*ctx_destroy)(struct aclmem_ctx *ctx, bool force);
	/* No context is left (@finalize: aclFinalize, after the last one). */
	void (*idle)(bool finalize);
	/*
	 * aclFinalize, the device file about to close: release what the
	 * program never freed; returns how many buffers that was.
	 */
	size_t (*release)(void);
	void (*fork_prepare)(void);
	void (*fork_parent)(void);
	void (*fork_child)(void);
	/*
	 * A stream is being destroyed, its worker stopped and its queue
	 * empty: forget what refers to it.  No lock is held.
	 */
	void (*stream_gone)(struct aclmem_stream *s);
};

/* Before any thread exists: from ACLMEM_PART's constructor. */
void aclmem_part_register(const struct aclmem_part *part);

/* Each part's stream_gone(), in falling rank: for lib/stream.c. */
void aclmem_parts_stream_gone(struct aclmem_stream *s);

/* Defines and registers, at load, the part of this file. */
#define ACLMEM_PART(...)						\
	static const struct aclmem_part aclmem_this_part = { __VA_ARGS__ }; \
	__attribute__((constructor)) static void aclmem_this_part_init(void) \
	{								\
		aclmem_part_register(&aclmem_this_part);		\
	}

#endif /* ACLMEM_CONTEXT_H */
