/* SPDX-License-Identifier: MIT */
/*
 * Runtime error codes of the ACL API, as CANN defines them.  The values are
 * ABI shared with applications written against CANN: never renumber them.
 * Only the codes libaclmem can return, or that applications commonly test
 * against, are listed.
 */
#ifndef ACLMEM_ACL_RT_ERROR_CODES_H
#define ACLMEM_ACL_RT_ERROR_CODES_H

#define ACL_RT_SUCCESS				0
#define ACL_ERROR_RT_PARAM_INVALID		107000	/* runtime or driver rejected an argument */
#define ACL_ERROR_RT_INVALID_DEVICEID		107001
#define ACL_ERROR_RT_CONTEXT_NULL		107002	/* no current device on this thread */
#define ACL_ERROR_RT_STREAM_CONTEXT		107003
#define ACL_ERROR_RT_INVALID_MEMORY_TYPE	107016
#define ACL_ERROR_RT_INVALID_HANDLE		107017
#define ACL_ERROR_RT_INVALID_MALLOC_TYPE	107018

#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT	207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION		207001	/* out of memory */
#define ACL_ERROR_RT_MEMORY_FREE		207002
#define ACL_ERROR_RT_NO_DEVICE			207004
#define ACL_ERROR_RT_NO_PERMISSION		207006
#define ACL_ERROR_RT_NO_STREAM_RESOURCE		207008
#define ACL_ERROR_RT_OVER_LIMIT			207012
#define ACL_ERROR_RT_DEVICE_OOM			207018

#define ACL_ERROR_RT_INTERNAL_ERROR		507000
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR		507899

#endif /* ACLMEM_ACL_RT_ERROR_CODES_H */
