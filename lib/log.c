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

void aclmem_log(int level, const char *fmt, ...)
{
	static const char *const tags[] = {
		"", "error", "warning", "info", "debug",
	};
	char line[512];
	va_list ap;

	if (level > aclmem_log_level() || level <= ACLMEM_LOG_NONE)
		return;
	/* One write per message so lines from threads do not interleave. */
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "libaclmem: %s: %s\n", tags[level], line);
}
