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

#define aclmem_err(...)		aclmem_log(ACLMEM_LOG_ERROR, __VA_ARGS__)
#define aclmem_warn(...)	aclmem_log(ACLMEM_LOG_WARN, __VA_ARGS__)
#define aclmem_info(...)	aclmem_log(ACLMEM_LOG_INFO, __VA_ARGS__)
#define aclmem_dbg(...)		aclmem_log(ACLMEM_LOG_DEBUG, __VA_ARGS__)

#endif /* ACLMEM_LOG_H */
