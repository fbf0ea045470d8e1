// SPDX-License-Identifier: MIT
/*
 * Diagnostics to stderr, off unless NPU_MEM_LOG asks for them: a library
 * must not write to a program's stderr on its own, but a user chasing a
 * failing call needs to learn why (e.g. that the module is not loaded).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl/acl_base.h"
#include "log.h"

static int log_level;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

int aclmem_log_parse(const char *s)
{
	static const struct {
		const char *name;
		int level;
	} names[] = {
		{ "none", ACLMEM_LOG_NONE },	{ "off", ACLMEM_LOG_NONE },
		{ "quiet", ACLMEM_LOG_NONE },	{ "error", ACLMEM_LOG_ERROR },
		{ "err", ACLMEM_LOG_ERROR },	{ "warning", ACLMEM_LOG_WARN },
		{ "warn", ACLMEM_LOG_WARN },	{ "info", ACLMEM_LOG_INFO },
		{ "debug", ACLMEM_LOG_DEBUG },
	};
	size_t i;

	if (!s || !*s)
		return ACLMEM_LOG_NONE;
	if (s[0] >= '0' && s[0] <= '9' && s[1] == '\0')
		return s[0] - '0' > ACLMEM_LOG_DEBUG ? ACLMEM_LOG_DEBUG : s[0] - '0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].level;
	return ACLMEM_LOG_NONE;
}

static void log_init(void)
{
	log_level = aclmem_log_parse(getenv("NPU_MEM_LOG"));
}

int aclmem_log_level(void)
{
	pthread_once(&log_once, log_init);
	return log_level;
}

/*
 * Messages for aclGetRecentErrMsg(), per thread as in CANN (its default
 * err_msg_mode): what failed since the program last asked, newest first.
 * Fixed thread-local buffers: recording a failure must not fail itself,
 * and nothing is left to free when a thread exits.  Past ERRMSG_MAX the
 * oldest lines are dropped.
 */
#define ERRMSG_LINE	512
#define ERRMSG_MAX	4096

static __thread char errmsg_pending[ERRMSG_MAX];
static __thread size_t errmsg_len;
static __thread char errmsg_taken[ERRMSG_MAX];
static __thread int last_error;
/*
 * Lines recorded, and their count when a failure's code was last recorded
 * (or the lines were taken): a line recorded since is an aclmem_err() of
 * a helper whose failure the public call has yet to return.
 */
static __thread unsigned long errmsg_seq, errmsg_claimed;

void aclmem_errmsg_record(const char *msg)
{
	size_t m = strnlen(msg, ERRMSG_LINE - 1), keep;

	if (!m)
		return;
	keep = errmsg_len;
	if (keep && m + 1 + keep > ERRMSG_MAX - 1) {
		/* Drop the oldest lines: cut at the last line break that fits. */
		keep = ERRMSG_MAX - 1 - m - 1;
		while (keep && errmsg_pending[keep] != '\n')
			keep--;
	}
	if (keep) {
		memmove(errmsg_pending + m + 1, errmsg_pending, keep);
		errmsg_pending[m] = '\n';
		errmsg_len = m + 1 + keep;
	} else {
		errmsg_len = m;
	}
	memcpy(errmsg_pending, msg, m);
	errmsg_pending[errmsg_len] = '\0';
	errmsg_seq++;
}

const char *aclmem_errmsg_take(void)
{
	if (!errmsg_len)
		return NULL;
	memcpy(errmsg_taken, errmsg_pending, errmsg_len + 1);
	errmsg_len = 0;
	errmsg_pending[0] = '\0';
	errmsg_claimed = errmsg_seq;
	return errmsg_taken;
}

int aclmem_last_error(int clear)
{
	int code = last_error;

	if (clear)
		last_error = 0;
	return code;
}

static const char *const tags[] = {
	"", "error", "warning", "info", "debug",
};

static void log_line(int level, const char *line)
{
	if (level > aclmem_log_level() || level <= ACLMEM_LOG_NONE)
		return;
	/* One write per message so lines from threads do not interleave. */
	fprintf(stderr, "libaclmem: %s: %s\n", tags[level], line);
}

void aclmem_log(int level, const char *fmt, ...)
{
	char line[ERRMSG_LINE];
	va_list ap;

	if (level != ACLMEM_LOG_ERROR &&
	    (level > aclmem_log_level() || level <= ACLMEM_LOG_NONE))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (level == ACLMEM_LOG_ERROR)
		aclmem_errmsg_record(line);
	log_line(level, line);
}

int aclmem_fail(int code, const char *fmt, ...)
{
	char line[ERRMSG_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	last_error = code;
	aclmem_errmsg_record(line);
	errmsg_claimed = errmsg_seq;
	log_line(ACLMEM_LOG_ERROR, line);
	return code;
}

/* A few words for the codes internal helpers return. */
static const char *code_words(int code)
{
	const struct {
		int code;
		const char *words;
	} words[] = {
		{ ACL_ERROR_INVALID_PARAM, "invalid parameter" },
		{ ACL_ERROR_RT_PARAM_INVALID,
		  "not a live handle, buffer or range" },
		{ ACL_ERROR_RT_INVALID_DEVICEID, "no such device" },
		{ ACL_ERROR_RT_CONTEXT_NULL,
		  "no current context on this thread (aclrtSetDevice first)" },
		{ ACL_ERROR_RT_STREAM_CONTEXT,
		  "the stream belongs to another context" },
		{ ACL_ERROR_RT_MEMORY_ALLOCATION, "out of memory" },
		{ ACL_ERROR_BAD_ALLOC, "out of memory" },
		{ ACL_ERROR_RT_NO_DEVICE, "no device" },
		{ ACL_ERROR_RT_NO_PERMISSION, "no permission for the device" },
		{ ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported" },
		{ ACL_ERROR_RT_STREAM_ABORT, "the stream was aborted" },
		{ ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "timed out" },
		{ ACL_ERROR_RT_WAIT_TIMEOUT, "a queued wait timed out" },
		{ ACL_ERROR_RT_NO_STREAM_RESOURCE, "no stream resource" },
		{ ACL_ERROR_RT_INTERNAL_ERROR, "internal error" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (words[i].code == code)
			return words[i].words;
	return "failed";
}

int aclmem_api_ret(const char *fn, int code)
{
	char line[ERRMSG_LINE];
	size_t n = strlen(fn), first;

	if (code == ACL_SUCCESS)
		return code;
	if (errmsg_len && errmsg_seq != errmsg_claimed) {
		/* A helper's own message: make it name the call that failed. */
		first = strcspn(errmsg_pending, "\n");
		if (strncmp(errmsg_pending, fn, n) ||
		    !strchr(":(", errmsg_pending[n])) {
			snprintf(line, sizeof(line), "%s: %.*s", fn, (int)first,
				 errmsg_pending);
			/* Take the old line out; the record puts it back. */
			if (first < errmsg_len) {
				memmove(errmsg_pending,
					errmsg_pending + first + 1,
					errmsg_len - first);
				errmsg_len -= first + 1;
			} else {
				errmsg_len = 0;
				errmsg_pending[0] = '\0';
			}
			aclmem_errmsg_record(line);
		}
		last_error = code;
		errmsg_claimed = errmsg_seq;
		return code;
	}
	return aclmem_fail(code, "%s: %s (%d)", fn, code_words(code), code);
}
