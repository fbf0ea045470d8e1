/* SPDX-License-Identifier: MIT */
/*
 * Process and thread state: aclInit/aclFinalize, the device (one: id 0,
 * /dev/npu-mem), its reference count, its contexts, and each thread's
 * current context.
 *
 * Lock order: ctx lock -> streams lock -> one stream's lock; ctx lock ->
 * pool lock.  The buffer table's lock comes last: nothing is taken while it
 * is held.  aclFinalize takes it under the ctx lock, and the fork handlers
 * under the ctx, streams and pool locks (context.c: atfork_prepare()).
 */
#ifndef ACLMEM_CONTEXT_H
#define ACLMEM_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/npu_mem.h>

#define ACLMEM_MAX_DEVICES	1

struct aclmem_ctx;

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

/* GET_INFO on the device file: ACL code. */
int aclmem_ctx_info(struct npu_mem_info *info);

#endif /* ACLMEM_CONTEXT_H */
