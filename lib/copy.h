/* SPDX-License-Identifier: MIT */
/*
 * One copy's checks and work, as aclrtMemcpyAsync does them, for the other
 * files that copy (the batches of lib/batch.c), and a queued fill for those
 * that write device memory in stream order (lib/settings.c).
 */
#ifndef ACLMEM_COPY_H
#define ACLMEM_COPY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Checks of a copy with count > 0, in CANN's order: NULL pointers or a kind
 * out of range (ACL_ERROR_INVALID_PARAM), no current device
 * (ACL_ERROR_RT_CONTEXT_NULL), count > destMax, a device side that is not
 * inside one live device buffer, a host side that starts inside an ACL
 * buffer but runs past its end, or a read-only destination
 * (ACL_ERROR_RT_PARAM_INVALID).
 */
int aclmem_copy_check(void *dst, size_t destMax, const void *src,
		      size_t count, int kind);
/* The same, after the context check, for a queued copy about to run. */
int aclmem_copy_recheck(void *dst, size_t destMax, const void *src,
			size_t count, int kind);
void aclmem_copy_run(void *dst, const void *src, size_t count);

/*
 * Queue on a stream (an aclrtStream) a fill of count > 0 bytes at dst with
 * value's low byte, checked as aclrtMemsetAsync checks it, then again when
 * it runs: an ACL code, for the caller to report under its own name, fn
 * (which also names it when the task cannot be allocated).
 */
int aclmem_fill_async(const char *fn, void *dst, size_t maxCount,
		      int32_t value, size_t count, void *stream);

#endif /* ACLMEM_COPY_H */
