/* SPDX-License-Identifier: MIT */
/*
 * Memory for media processing (CANN's acl/ops/acl_dvpp.h, whose calls
 * libacl_dvpp.so exports): only acldvppMalloc and acldvppFree.  There is
 * no media engine here; the rest of CANN's header (channels, picture
 * descriptions, VPC, JPEG and video codecs) needs one and is left out.
 * See lib/memory.c for what this implementation does.
 */
#ifndef ACLMEM_ACL_DVPP_H
#define ACLMEM_ACL_DVPP_H

#include <stddef.h>
#include <stdint.h>

#include "../acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclError acldvppMalloc(void **devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError acldvppFree(void *devPtr);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_DVPP_H */
