/* SPDX-License-Identifier: MIT */
/*
 * Kernel launches inside the library: aclmem_kernel_launch() with what an
 * exception report needs to name the kernel (lib/errors.h).
 */
#ifndef ACLMEM_LAUNCH_H
#define ACLMEM_LAUNCH_H

#include <stdint.h>

#include "acl/acl_rt.h"
#include "aclmem/kernel.h"

/*
 * As aclmem_kernel_launch(), for a kernel launched through func (an
 * aclrtFuncHandle) with args_len bytes of packed arguments at args, which
 * are copied: a failure's exception info gives both back.
 */
aclError aclmem_kernel_launch_func(const char *name, uint32_t block_dim,
				   aclrtStream stream,
				   aclmem_kernel_block_fn block,
				   aclmem_kernel_release_fn release,
				   void *launch, void *func, const void *args,
				   uint32_t args_len);

#endif /* ACLMEM_LAUNCH_H */
