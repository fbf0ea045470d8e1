// SPDX-License-Identifier: MIT
/*
 * The calling thread's errors (aclGetRecentErrMsg, aclrtGetLastError,
 * aclrtPeekAtLastError; the state itself lives in log.c, where failures
 * are recorded) and the exception callbacks with their aclrtExceptionInfo.
 *
 * A failed kernel launch's exception carries the kernel's packed arguments
 * and, when it was launched through a handle (aclrtLaunchKernel*), that
 * handle.  Any other failed task (a copy, fill, wait, host function) is
 * no kernel's: CANN's getters refuse such an exception, the arguments with
 * ACL_ERROR_INVALID_EXCEPTION_INFO (0xFFFFFFFF, what CANN's getters also
 * give for a NULL info), the handle with the runtime's refusal, which
 * reaches the caller as ACL_ERROR_RT_PARAM_INVALID.  So do both getters
 * for a kernel launched without a handle (AscendC's <<<>>>): its
 * arguments are the launch's typed copies, not one packed block.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "acl/acl.h"
#include "args.h"
#include "context.h"
#include "errors.h"
#include "log.h"

const char *aclGetRecentErrMsg(void)
{
	return aclmem_errmsg_take();
}

aclError aclrtGetLastError(aclrtLastErrLevel level)
{
	if (level != ACL_RT_THREAD_LEVEL)
		return ACL_ERROR_INVALID_PARAM;
	return aclmem_last_error(1);
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
	if (level != ACL_RT_THREAD_LEVEL)
		return ACL_ERROR_INVALID_PARAM;
	return aclmem_last_error(0);
}

/*
 * A device fault is something the driver would report: it has none to
 * report (buffers are host RAM), so a valid request reads "no error".
 */
aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)
{
	int ret;

	if (!errorInfo)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetErrorVerbose: errorInfo is NULL");
	ret = aclmem_arg_device("aclrtGetErrorVerbose", deviceId);
	if (ret)
		return ret;
	memset(errorInfo, 0, sizeof(*errorInfo));
	errorInfo->errorType = ACL_RT_NO_ERROR;
	return ACL_SUCCESS;
}

/* ---- exception callbacks ---- */

struct rtExceptionInfo {
	uint32_t task_id;
	uint32_t stream_id;
	uint32_t thread_id;
	uint32_t device_id;
	uint32_t error_code;
	const struct aclmem_exception_kernel *kernel;
};

/* Registered callbacks (CANN: identified by pointer, no duplicates). */
#define EXC_MAX_CALLBACKS	64

static pthread_mutex_t exc_lock = PTHREAD_MUTEX_INITIALIZER;
static aclrtExceptionInfoCallback exc_set;	/* aclrtSetExceptionInfoCallback */
static aclrtExceptionInfoCallback exc_reg[EXC_MAX_CALLBACKS];
static size_t exc_nreg;

aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)
{
	/* The last one set wins; NULL clears it (CANN). */
	pthread_mutex_lock(&exc_lock);
	exc_set = callback;
	pthread_mutex_unlock(&exc_lock);
	return ACL_SUCCESS;
}

aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback)
{
	size_t i;

	if (!callback)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtExceptionInfoCallbackRegister: callback is NULL");
	pthread_mutex_lock(&exc_lock);
	for (i = 0; i < exc_nreg; i++)
		if (exc_reg[i] == callback)
			goto out;
	if (exc_nreg == EXC_MAX_CALLBACKS) {
		pthread_mutex_unlock(&exc_lock);
		return aclmem_fail(ACL_ERROR_RT_OVER_LIMIT,
				   "aclrtExceptionInfoCallbackRegister: %d callbacks already registered",
				   EXC_MAX_CALLBACKS);
	}
	exc_reg[exc_nreg++] = callback;
out:
	pthread_mutex_unlock(&exc_lock);
	return ACL_SUCCESS;
}

aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback)
{
	size_t i;

	if (!callback)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtExceptionInfoCallbackUnregister: callback is NULL");
	pthread_mutex_lock(&exc_lock);
	for (i = 0; i < exc_nreg; i++) {
		if (exc_reg[i] != callback)
			continue;
		/* Keep the order of registration for the others. */
		memmove(&exc_reg[i], &exc_reg[i + 1],
			(exc_nreg - i - 1) * sizeof(exc_reg[0]));
		exc_nreg--;
		break;
	}
	pthread_mutex_unlock(&exc_lock);
	return ACL_SUCCESS;
}

void aclmem_exception_report(uint32_t stream_id, uint32_t task_id,
			     int32_t device_id, uint32_t error_code,
			     const struct aclmem_exception_kernel *kernel)
{
	aclrtExceptionInfoCallback cbs[EXC_MAX_CALLBACKS + 1];
	struct rtExceptionInfo info = {
		.task_id = task_id,
		.stream_id = stream_id,
		.thread_id = (uint32_t)syscall(SYS_gettid),
		.device_id = (uint32_t)device_id,
		.error_code = error_code,
		.kernel = kernel,
	};
	size_t n = 0, i;

	/*
	 * Call a snapshot without the lock: a callback may register or
	 * unregister (itself too), and one unregistered meanwhile may still
	 * run once, as CANN documents.
	 */
	pthread_mutex_lock(&exc_lock);
	if (exc_set)
		cbs[n++] = exc_set;
	for (i = 0; i < exc_nreg; i++)
		if (exc_reg[i] != exc_set)
			cbs[n++] = exc_reg[i];
	pthread_mutex_unlock(&exc_lock);
	for (i = 0; i < n; i++)
		cbs[i](&info);
}

uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
	return info ? info->task_id : 0xFFFFFFFFU;
}

uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
	return info ? info->stream_id : 0xFFFFFFFFU;
}

uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
	return info ? info->thread_id : 0xFFFFFFFFU;
}

uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
	return info ? info->device_id : 0xFFFFFFFFU;
}

uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info)
{
	return info ? info->error_code : 0xFFFFFFFFU;
}

/* CANN's acl layer: 0xFFFFFFFF, an aclError of -1, not in its headers. */
#define EXC_INFO_INVALID	((aclError)0xFFFFFFFFU)

aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info,
				       void **devArgsPtr, uint32_t *devArgsLen)
{
	if (!info)
		return aclmem_fail(EXC_INFO_INVALID,
				   "aclrtGetArgsFromExceptionInfo: info is NULL");
	if (!devArgsPtr || !devArgsLen)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetArgsFromExceptionInfo: %s is NULL",
				   !devArgsPtr ? "devArgsPtr" : "devArgsLen");
	if (info->kernel && info->kernel->args) {
		*devArgsPtr = info->kernel->args;
		*devArgsLen = info->kernel->args_len;
		return ACL_SUCCESS;
	}
	return aclmem_fail(EXC_INFO_INVALID,
			   "aclrtGetArgsFromExceptionInfo: task %u of stream "
			   "%u %s", info->task_id, info->stream_id,
			   info->kernel ? "ran a kernel launched without a "
			   "handle, whose arguments are not kept" :
			   "ran no kernel, so it has no arguments");
}

aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info,
					     aclrtFuncHandle *func)
{
	if (!info)
		return aclmem_fail(EXC_INFO_INVALID,
				   "aclrtGetFuncHandleFromExceptionInfo: info "
				   "is NULL");
	if (!func)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetFuncHandleFromExceptionInfo: func "
				   "is NULL");
	if (info->kernel && info->kernel->func) {
		*func = info->kernel->func;
		return ACL_SUCCESS;
	}
	return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
			   "aclrtGetFuncHandleFromExceptionInfo: task %u of "
			   "stream %u %s", info->task_id, info->stream_id,
			   info->kernel ? "ran a kernel launched without a "
			   "handle" : "ran no kernel");
}
