/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics.  The library is quiet by default: a failing call reports
 * through its return code only.  NPU_MEM_LOG=error|warning|info|debug (or
 * 1..4; 0/none/off for quiet) sends messages at that level and above to
 * stderr, prefixed "libaclmem: ".
 */
#ifndef ACLMEM_LOG_H
#define ACLMEM_LOG_H

enum aclmem_log_level {
	ACLMEM_LOG_NONE = 0,
	ACLMEM_LOG_ERROR = 1,
	ACLMEM_LOG_WARN = 2,
	ACLMEM_LOG_INFO = 3,
	ACLMEM_LOG_DEBUG = 4,
};

/* Parse a NPU_MEM_LOG value; NULL, "" and unknown words are quiet. */
int aclmem_log_parse(const char *s);

/* The level in force, read from the environment once. */
int aclmem_log_level(void);

void aclmem_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Error-level messages are also kept for aclGetRecentErrMsg() on the
 * calling thread, whatever NPU_MEM_LOG says.
 */
#define aclmem_err(...)		aclmem_log(ACLMEM_LOG_ERROR, __VA_ARGS__)
#define aclmem_warn(...)	aclmem_log(ACLMEM_LOG_WARN, __VA_ARGS__)
#define aclmem_info(...)	aclmem_log(ACLMEM_LOG_INFO, __VA_ARGS__)
#define aclmem_dbg(...)		aclmem_log(ACLMEM_LOG_DEBUG, __VA_ARGS__)

/*
 * The failure return of an API call: returns code after making it the
 * calling thread's last error (aclrtGetLastError/aclrtPeekAtLastError) and
 * keeping the formatted message for aclGetRecentErrMsg(), which also goes
 * to stderr as an error when NPU_MEM_LOG asks.  Use it as
 *	return aclmem_fail(ACL_ERROR_INVALID_PARAM, "aclrtFoo: NULL bar");
 * code must not be ACL_SUCCESS.  Safe from any thread, no locks.
 */
int aclmem_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The failure return of a public call whose failure an internal helper
 * found: returns code after making it the thread's last error.  If the
 * helper explained itself with aclmem_err() since the last failure was
 * recorded, that message stays the one kept, prefixed with "fn: " when it
 * does not name fn already; otherwise "fn: <what code means> (code)" is.
 * ACL_SUCCESS is returned untouched: a success leaves the last error be.
 *	return aclmem_api_ret("aclrtFoo", helper(...));
 */
int aclmem_api_ret(const char *fn, int code);

/* Keep msg for aclGetRecentErrMsg() on this thread (newest first). */
void aclmem_errmsg_record(const char *msg);

/*
 * The thread's messages since the last call, newest first, one a line, and
 * forget them: NULL when there are none.  The string stays valid until the
 * thread's next call.
 */
const char *aclmem_errmsg_take(void);

/* The thread's last error code; clear: make it ACL_SUCCESS after reading. */
int aclmem_last_error(int clear);

#endif /* ACLMEM_LOG_H */
