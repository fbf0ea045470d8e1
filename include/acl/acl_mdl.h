/* SPDX-License-Identifier: MIT */
/*
 * Model run instances (CANN's acl/acl_mdl.h, the part that needs no
 * offline model): work captured from a stream, or queued on streams bound
 * to an instance being built, kept and run again on demand.  Names and
 * values are CANN's.  See lib/model.c for what this implementation does.
 */
#ifndef ACLMEM_ACL_MDL_H
#define ACLMEM_ACL_MDL_H

#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclmdlRI;

typedef enum {
	ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
	ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
	ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
} aclmdlRICaptureMode;

typedef enum {
	ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
	ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
	ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
} aclmdlRICaptureStatus;

/* aclmdlRIBindStream: runs from the start, or once activated. */
#define ACL_MODEL_STREAM_FLAG_HEAD	0x00000000U
#define ACL_MODEL_STREAM_FLAG_DEFAULT	0x7FFFFFFFU

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream,
						  aclmdlRICaptureMode mode);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(aclrtStream stream,
						    aclmdlRICaptureStatus *status,
						    aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureThreadExchangeMode(
	aclmdlRICaptureMode *mode);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream,
						aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRIBuildBegin(aclmdlRI *modelRI,
						uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclmdlRIBindStream(aclmdlRI modelRI,
						aclrtStream stream,
						uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclmdlRIEndTask(aclmdlRI modelRI,
					     aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIBuildEnd(aclmdlRI modelRI,
					      void *reserve);
ACL_FUNC_VISIBILITY aclError aclmdlRIUnbindStream(aclmdlRI modelRI,
						  aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIExecute(aclmdlRI modelRI,
					     int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI,
						  aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_MDL_H */
