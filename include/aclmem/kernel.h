/* SPDX-License-Identifier: MIT */
/*
 * Kernel launches on the CPU: what the AscendC launch code that
 * ascendc_library() generates (aclrtlaunch_<kernel>, kernel<<<...>>>)
 * calls.  A launch is a task on an ACL stream; when the stream reaches it,
 * block_dim threads run block(launch, 0 .. block_dim - 1) in parallel, and
 * the stream goes on when all have returned.  A block returning non-zero
 * (an ACL error code) fails the task: the stream's next synchronisation
 * returns the first such code.  release(launch) is called once, after the
 * blocks ran or when the task is dropped unrun, including when this call
 * fails.
 */
#ifndef ACLMEM_KERNEL_H
#define ACLMEM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ACLMEM_KERNEL_API __attribute__((visibility("default")))
#else
#define ACLMEM_KERNEL_API
#endif

/* The most blocks of one launch, as CANN's blockDim. */
#define ACLMEM_KERNEL_MAX_BLOCKS	65535u

typedef int (*aclmem_kernel_block_fn)(void *launch, uint32_t block_idx);
typedef void (*aclmem_kernel_release_fn)(void *launch);

/*
 * A kernel's entry in a binary (aclrtBinaryLoadFromFile): the binary that
 * ascendc_library() builds exports, for each kernel k,
 * ACLMEM_KERNEL_ENTRY_PREFIX "k" of this type, and the marker
 * ACLMEM_BINARY_MARK (an unsigned int, ACLMEM_BINARY_VERSION).  From
 * args, size bytes holding the kernel's parameters in order, each at its
 * C alignment (a C struct of them, with or without its tail padding), it makes a
 * launch of block_dim blocks for aclmem_kernel_launch: 0 with *block,
 * *release and *launch set, or ACL_ERROR_INVALID_PARAM when size is not
 * the parameters' size (ACL_ERROR_RT_MEMORY_ALLOCATION without memory).
 */
typedef int (*aclmem_kernel_entry_fn)(const void *args, size_t size,
				      uint32_t block_dim,
				      aclmem_kernel_block_fn *block,
				      aclmem_kernel_release_fn *release,
				      void **launch);
#define ACLMEM_KERNEL_ENTRY_PREFIX	"aclmem_kernel_entry_"
#define ACLMEM_BINARY_MARK		"aclmem_ascendc_binary"
#define ACLMEM_BINARY_VERSION		1u

/*
 * Queue a launch of the kernel called name (for messages) on stream (NULL:
 * the current context's default stream).  ACL_ERROR_INVALID_PARAM for a
 * block_dim of 0 or above ACLMEM_KERNEL_MAX_BLOCKS or a NULL function;
 * otherwise as aclrtMemcpyAsync for the stream and context.
 */
ACLMEM_KERNEL_API aclError aclmem_kernel_launch(const char *name,
						uint32_t block_dim,
						aclrtStream stream,
						aclmem_kernel_block_fn block,
						aclmem_kernel_release_fn release,
						void *launch);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_KERNEL_H */
