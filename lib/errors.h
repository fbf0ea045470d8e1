/* SPDX-License-Identifier: MIT */
/*
 * Exception reports: how a failed stream task reaches the callbacks the
 * program set with aclrtSetExceptionInfoCallback() and registered with
 * aclrtExceptionInfoCallbackRegister().
 */
#ifndef ACLMEM_ERRORS_H
#define ACLMEM_ERRORS_H

#include <stdint.h>

/*
 * What a failed kernel launch adds to its report, for
 * aclrtGetFuncHandleFromExceptionInfo() and aclrtGetArgsFromExceptionInfo():
 * the handle it was launched by (NULL for a launch without one, such as
 * AscendC's <<<>>>) and its packed arguments, valid during the report.
 */
struct aclmem_exception_kernel {
	void *func;
	void *args;
	uint32_t args_len;
};

/*
 * Call every exception callback with an aclrtExceptionInfo holding these
 * ids and error_code (an ACL code), and the calling thread's id as the
 * thread id; kernel is the failed task's kernel, NULL for another task.  Call it where a queued task has failed, from the thread that
 * ran it, with no library lock held: callbacks may call the API.  Each
 * callback runs once, in this thread, before this returns; the info is
 * valid only during the call.
 */
void aclmem_exception_report(uint32_t stream_id, uint32_t task_id,
			     int32_t device_id, uint32_t error_code,
			     const struct aclmem_exception_kernel *kernel);

#endif /* ACLMEM_ERRORS_H */
