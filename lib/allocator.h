/* SPDX-License-Identifier: MIT */
/*
 * Custom allocators registered per stream (acl/acl_rt_allocator.h).  The
 * table is keyed by the aclrtStream handle's value alone: it checks nothing
 * about the stream, so a registration outlives its stream unless stream
 * destruction drops it with aclmem_allocator_forget_stream().
 */
#ifndef ACLMEM_ALLOCATOR_H
#define ACLMEM_ALLOCATOR_H

#include "acl/acl_rt.h"

/* Drop a stream's registration, if any (stream destruction). */
void aclmem_allocator_forget_stream(aclrtStream stream);

#endif /* ACLMEM_ALLOCATOR_H */
