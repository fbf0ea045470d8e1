/* SPDX-License-Identifier: MIT */
/*
 * One copy's checks and work, as aclrtMemcpyAsync does them, for the other
 * files that copy (the batches of lib/batch.c).
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

#endif /* ACLMEM_COPY_H */
