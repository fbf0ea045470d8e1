/* SPDX-License-Identifier: MIT */
/*
 * Umbrella header of the ACL API, as in CANN.  CANN's acl.h also pulls in the
 * model and operator headers; libaclmem provides the runtime API (and its
 * stream-ordered pools, CANN's acl_rt_memory_soma.h) only.
 */
#ifndef ACLMEM_ACL_H
#define ACLMEM_ACL_H

#include "acl_mdl.h"
#include "acl_rt.h"
#include "acl_rt_memory_soma.h"

#endif /* ACLMEM_ACL_H */
