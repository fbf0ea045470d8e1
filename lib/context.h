/* SPDX-License-Identifier: MIT */
/*
 * Process and thread state: aclInit/aclFinalize, the device (one: id 0,
 * /dev/npu-mem), its reference count, and each thread's current device.
 *
 * Lock order: ctx lock -> streams lock -> one stream's lock; ctx lock ->
 * pool lock.  The buffer table's lock nests inside nothing and is never held
 * while another of these is taken.
 */
#ifndef ACLMEM_CONTEXT_H
#define ACLMEM_CONTEXT_H

#include <stdint.h>
#include <linux/npu_mem.h>

#define ACLMEM_MAX_DEVICES	1

/*
 * ACL_SUCCESS when the calling thread has a current device, otherwise
 * ACL_ERROR_RT_CONTEXT_NULL (as CANN: no aclrtSetDevice on this thread, or
 * the device was reset since).  Lock-free: called on every memory call.
 */
int aclmem_ctx_require(void);

/* The device file; valid after a successful aclmem_ctx_require(). */
int aclmem_ctx_fd(void);

/* GET_INFO on the device file: ACL code. */
int aclmem_ctx_info(struct npu_mem_info *info);

#endif /* ACLMEM_CONTEXT_H */
