/* SPDX-License-Identifier: MIT */
/*
 * Umbrella header of the ACL API, as in CANN.  CANN's acl.h also pulls in the
 * model and operator headers; libaclmem provides the runtime memory API only.
 */
#ifndef ACLMEM_ACL_H
#define ACLMEM_ACL_H

#include "acl_rt.h"

#endif /* ACLMEM_ACL_H */
